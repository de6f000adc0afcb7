"""One HTTP connection pool to a Phoenix server, with bounded concurrency and retries.

Connection errors, 5xx and 429 are retried with exponential backoff (honouring ``Retry-After``)
before a `PhoenixUnavailableError`; other 4xx fail at once unless the caller accepts them.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from stateval.errors import PhoenixUnavailableError

__all__ = ["Transport", "parse"]

_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_Model = TypeVar("_Model", bound=BaseModel)


class Transport:
    """Requests to one Phoenix server over one `httpx.AsyncClient` (HTTP keep-alive).

    Args:
        base_url: The Phoenix server, e.g. ``http://127.0.0.1:6006``.
        api_key: Sent as ``Authorization: Bearer <key>`` (``PHOENIX_API_KEY``).
        max_concurrency: Requests in flight at once.
        retries: Further attempts after a connection error, 5xx or 429.
        backoff: First delay between attempts in seconds; doubles each time.
        timeout: Seconds per request.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        max_concurrency: int,
        retries: int,
        backoff: float,
        timeout: float,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
            limits=httpx.Limits(
                max_connections=max_concurrency, max_keepalive_connections=max_concurrency
            ),
        )
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._retries = retries
        self._backoff = backoff

    async def aclose(self) -> None:
        """Close the connections."""
        await self._client.aclose()

    async def call(
        self,
        model: type[_Model],
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> _Model:
        """Send a request and validate its JSON answer as ``model``."""
        return parse(model, await self.send(method, path, json=json, params=params))

    async def send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        accept: tuple[int, ...] = (),
    ) -> httpx.Response:
        """Send a request, retrying what may pass later; statuses in ``accept`` are returned.

        Raises:
            PhoenixUnavailableError: The server refused the request or stayed unreachable.
        """
        delay = self._backoff
        problem = ""
        for attempt in range(self._retries + 1):
            if attempt:
                await asyncio.sleep(delay * (1 + random.random() / 4))
                delay = min(delay * 2, 8.0)
            async with self._semaphore:
                try:
                    response = await self._client.request(method, path, json=json, params=params)
                except httpx.TransportError as exc:
                    problem = f"{type(exc).__name__}: {exc}".rstrip(": ")
                    continue
            if response.status_code < 400 or response.status_code in accept:
                return response
            if response.status_code not in _RETRY_STATUS:
                raise PhoenixUnavailableError(
                    f"Phoenix at {self.base_url} refused {method} {path}: "
                    f"HTTP {response.status_code} {response.text[:300]}"
                )
            problem = f"HTTP {response.status_code}"
            retry_after = response.headers.get("retry-after", "")
            if retry_after.isdigit():
                delay = max(delay, float(retry_after))
        raise PhoenixUnavailableError(
            f"Phoenix at {self.base_url} unavailable: {method} {path} failed "
            f"{self._retries + 1} times ({problem})"
        )


def parse(model: type[_Model], response: httpx.Response) -> _Model:
    """Validate a response body as ``model``.

    Raises:
        PhoenixUnavailableError: The body is not what this Phoenix version should send.
    """
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        raise PhoenixUnavailableError(
            f"Phoenix gave an unexpected answer to {response.request.method} "
            f"{response.url.path}: {str(exc).splitlines()[0]}"
        ) from exc
