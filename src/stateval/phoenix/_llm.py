"""`OpenAICompatibleLLM`: a `phoenix.evals.LLM` over stateval's `OpenAICompatibleClient`.

Phoenix's own ``openai`` provider tries OpenAI's ``json_schema`` structured output and falls back
to tool calling only on an HTTP 400; llama.cpp's server (llama-cpp-python 0.3.x) answers that
form with a 500 and has no tool calling, so every classification failed there. This provider
sends each object request through `OpenAICompatibleClient.complete` with Phoenix's schema as the
call's response schema, in whichever dialect the server takes, with the client's retries,
timeouts and key redaction. The provider is registered with Phoenix the first time an
`OpenAICompatibleLLM` is built (never at import).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from phoenix.evals import LLM
from phoenix.evals.llm.registries import PROVIDER_REGISTRY
from phoenix.evals.llm.types import BaseLLMAdapter, ObjectGenerationMethod

from stateval.mutators import OpenAICompatibleClient

__all__ = ["OPENAI_COMPATIBLE_PROVIDER", "OpenAICompatibleLLM"]

#: The Phoenix provider name `OpenAICompatibleLLM` registers (on first use, never at import).
OPENAI_COMPATIBLE_PROVIDER = "stateval-openai-compatible"

_T = TypeVar("_T")
_register_lock = threading.Lock()


def _run_sync(make: Callable[[], Awaitable[_T]]) -> _T:
    """Run a coroutine to completion from sync code, even when this thread runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(make))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _awaited(make)).result()


async def _awaited(make: Callable[[], Awaitable[_T]]) -> _T:
    return await make()


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(f"reply is not JSON: {text[:120]!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"reply is not a JSON object: {text[:120]!r}")
    return value


class _ClientAdapter(BaseLLMAdapter):
    """Phoenix's adapter interface over an `OpenAICompatibleClient`.

    Objects are asked for with the schema as the call's response schema (in whichever dialect
    the server takes), whatever ``method`` Phoenix asks for. Sampling settings are the client's.
    Sync calls run on a copy of the client without its connection pool, on an event loop of
    their own.
    """

    client: OpenAICompatibleClient

    @classmethod
    def client_name(cls) -> str:
        return "stateval"

    @property
    def model_name(self) -> str:
        return self.client.model

    async def async_generate_text(self, prompt: Any, **kwargs: Any) -> str:
        return (await self.client.complete(prompt, response_schema=None)).output

    def generate_text(self, prompt: Any, **kwargs: Any) -> str:
        return _run_sync(lambda: _detached_text(self.client, prompt))

    async def async_generate_object(
        self,
        prompt: Any,
        schema: dict[str, Any],
        method: ObjectGenerationMethod = ObjectGenerationMethod.AUTO,
        **kwargs: Any,
    ) -> dict[str, Any]:
        call = await self.client.complete(
            prompt, response_schema=schema, schema_name="extract_structured_data"
        )
        return _json_object(call.output)

    def generate_object(
        self,
        prompt: Any,
        schema: dict[str, Any],
        method: ObjectGenerationMethod = ObjectGenerationMethod.AUTO,
        **kwargs: Any,
    ) -> dict[str, Any]:
        return _run_sync(lambda: _detached_object(self.client, prompt, schema))


async def _detached_text(client: OpenAICompatibleClient, prompt: Any) -> str:
    async with client.detached() as own:
        return (await own.complete(prompt, response_schema=None)).output


async def _detached_object(
    client: OpenAICompatibleClient, prompt: Any, schema: dict[str, Any]
) -> dict[str, Any]:
    async with client.detached() as own:
        call = await own.complete(
            prompt, response_schema=schema, schema_name="extract_structured_data"
        )
    client.schema_dialect = own.schema_dialect  # keep what the copy learnt about the server
    return _json_object(call.output)


def _client_factory(
    model: str, is_async: bool, stateval_client: OpenAICompatibleClient, **_: Any
) -> OpenAICompatibleClient:
    return stateval_client


def _ensure_registered() -> None:
    with _register_lock:
        if not PROVIDER_REGISTRY.get_provider_registrations(OPENAI_COMPATIBLE_PROVIDER):
            PROVIDER_REGISTRY.register_provider(
                provider=OPENAI_COMPATIBLE_PROVIDER,
                adapter_class=_ClientAdapter,
                client_factory=_client_factory,
            )


class OpenAICompatibleLLM(LLM):
    """A `phoenix.evals.LLM` whose calls go through an `OpenAICompatibleClient`.

    Use it wherever Phoenix takes an ``LLM`` (a `FieldJudge`, a ``ClassificationEvaluator``)
    to reach any OpenAI-compatible server with the client's retries, timeouts and
    structured-output dialects. Sampling settings (temperature, max_tokens) are the client's.

    Args:
        client: The client to call (its own ``response_schema`` is not used: each object
            request sends Phoenix's schema).

    Example:
        >>> from stateval.mutators import OpenAICompatibleClient
        >>> llm = OpenAICompatibleLLM(
        ...     OpenAICompatibleClient("m", base_url="http://127.0.0.1:8080/v1", api_key_env=None)
        ... )
        >>> llm.model
        'm'
    """

    def __init__(self, client: OpenAICompatibleClient) -> None:
        _ensure_registered()
        self.client = client
        super().__init__(
            provider=OPENAI_COMPATIBLE_PROVIDER, model=client.model, stateval_client=client
        )

    async def aclose(self) -> None:
        """Close the client's connection pool (of the current event loop)."""
        await self.client.aclose()
