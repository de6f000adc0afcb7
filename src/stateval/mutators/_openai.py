"""`OpenAICompatibleClient`: a `BaseLLMClient` for any OpenAI-compatible chat completions server.

It speaks ``POST {base_url}/chat/completions`` with httpx (already a stateval dependency; the
``openai`` SDK would add a heavy dependency for one endpoint and its own retry policy). It retries
429, 5xx, timeouts and connection errors with exponential backoff and jitter, bounds concurrent
calls, and can constrain the reply to a JSON Schema in either dialect:

* OpenAI's ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``, whose root must
  be an object, so a root array (such as `UPDATES_JSON_SCHEMA`) is wrapped as
  ``{"updates": [...]}`` (which `parse_updates` unwraps);
* llama.cpp's ``{"type": "json_object", "schema": {...}}`` (`UPDATES_JSON_SCHEMA` goes as it is;
  other schemas are adjusted only where llama-cpp-python's grammar converter would fail).

With ``schema_dialect="auto"`` it tries the first and, when the server rejects it naming
``response_format`` (a 4xx, or the 500 llama-cpp-python 0.3.x answers), switches to the second
for the rest of the client's life. `complete` takes a schema per call (what the LLM judge of
`stateval.phoenix` uses for its classification object).

The API key is read from an environment variable when the client is made, sent only in the
``Authorization`` header, and kept out of reprs, errors and `LLMCall` records.
"""

from __future__ import annotations

import asyncio
import copy
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from stateval.errors import (
    LLMClientError,
    LLMResponseError,
    LLMStatusError,
    LLMUnavailableError,
    MutatorError,
)
from stateval.mutators._client import BaseLLMClient
from stateval.mutators._llm_call import (
    RETRYABLE_STATUS,
    ChatRequest,
    LLMCall,
    ReplyError,
    backoff_delay,
    read_call,
    retry_after,
)
from stateval.mutators._response_format import SchemaDialect, response_format

if TYPE_CHECKING:
    import httpx
    from opentelemetry.trace import Tracer

__all__ = ["LLMCall", "OpenAICompatibleClient", "SchemaDialect"]

_DETAIL_CHARS: Final = 300
_SK_PATTERN: Final = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{4,}")
_AUTH_PATTERN: Final = re.compile(r"(?i)\b(bearer|basic)\s+[^\s\"',}]+")


class _Unset:
    """The type of `_UNSET`: "use the client's own setting"."""


_UNSET: Final = _Unset()


@dataclass(slots=True)
class _LoopBound:
    """The HTTP pool and semaphore of one event loop (both are bound to the loop that uses them)."""

    loop: asyncio.AbstractEventLoop
    http: httpx.AsyncClient
    semaphore: asyncio.Semaphore


class OpenAICompatibleClient(BaseLLMClient):
    """An LLM client for OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp, ...).

    Args:
        model: Model name sent with each request.
        base_url: The API root, e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8080/v1``.
        api_key_env: Environment variable holding the API key (read once, here). When it is unset
            or ``None`` no ``Authorization`` header is sent, which is what local servers want.
        api_key: The key itself; takes precedence over ``api_key_env``.
        system_prompt: An optional system message sent before the prompt.
        temperature: Sampling temperature (0 for repeatable extraction).
        max_tokens: Completion token limit, or None for the server's default.
        timeout: Seconds allowed per HTTP attempt, in all: connecting, sending and reading the
            whole reply (a server that trickles bytes cannot stretch it).
        max_retries: Retries after the first attempt on 408/409/429/5xx, timeouts and
            connection errors.
        backoff_base: First retry delay in seconds; doubles per retry, capped at ``backoff_max``,
            with jitter (a random 50-100% of it). A ``Retry-After`` header takes precedence.
        backoff_max: Longest delay between attempts, in seconds.
        max_concurrency: Calls in flight at once, per event loop.
        response_schema: A JSON Schema the reply must follow (e.g. `UPDATES_JSON_SCHEMA`).
        schema_dialect: How to send ``response_schema`` (see the module docs).
        schema_name: The ``json_schema.name`` sent in OpenAI's dialect.
        strict: OpenAI's ``strict`` flag; None sets it when the schema meets OpenAI's strict rules
            (every object closed with all properties required, every value typed).
        extra_body: More JSON fields merged into each request body (e.g. ``{"seed": 1}``).
        on_call: Called with an `LLMCall` after each successful call.
        tracer: When set (a `stateval.tracing.Tracing.tracer`), each call is an OpenInference LLM
            span (`stateval.tracing.llm_span`) with the messages, model, invocation parameters,
            reply and token counts; it nests under the current span (the mutation's CHAIN span).

    Example:
        >>> from stateval.mutators import LLMMutator, UPDATES_JSON_SCHEMA
        >>> client = OpenAICompatibleClient(
        ...     "gpt-4o-mini", response_schema=UPDATES_JSON_SCHEMA, max_retries=2
        ... )
        >>> mutator = LLMMutator(client)
        >>> client.describe()
        "OpenAICompatibleClient(model='gpt-4o-mini', base_url='https://api.openai.com/v1')"
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        api_key: str | None = None,
        system_prompt: str | None = None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        max_concurrency: int = 4,
        response_schema: Mapping[str, Any] | None = None,
        schema_dialect: SchemaDialect = "auto",
        schema_name: str = "updates",
        strict: bool | None = None,
        extra_body: Mapping[str, Any] | None = None,
        on_call: Callable[[LLMCall], None] | None = None,
        tracer: Tracer | None = None,
    ) -> None:
        if not model:
            raise MutatorError("OpenAICompatibleClient needs a model name")
        if not base_url.startswith(("http://", "https://")):
            raise MutatorError(
                f"base_url must start with http:// or https://, got {_safe_url(base_url)!r}"
            )
        if _has_userinfo(base_url):
            # httpx would turn user:password@ into Basic auth, replacing the bearer key.
            raise MutatorError(
                f"base_url {_safe_url(base_url)!r} carries credentials (user:password@); "
                "give the key through api_key_env instead"
            )
        if timeout <= 0 or max_retries < 0 or max_concurrency < 1 or backoff_base < 0:
            raise MutatorError(
                "OpenAICompatibleClient needs timeout > 0, max_retries >= 0, "
                "max_concurrency >= 1 and backoff_base >= 0"
            )
        if schema_dialect not in ("auto", "json_schema", "json_object"):
            raise MutatorError(
                f"schema_dialect must be auto, json_schema or json_object, got {schema_dialect!r}"
            )
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self._api_key = api_key or (os.environ.get(api_key_env) if api_key_env else None) or None
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_concurrency = max_concurrency
        self.response_schema = dict(response_schema) if response_schema is not None else None
        self.schema_dialect: SchemaDialect = schema_dialect
        self.schema_name = schema_name
        self.strict = strict
        self.extra_body = dict(extra_body or {})
        self.on_call = on_call
        self.tracer = tracer
        self.last_call: LLMCall | None = None
        self._bound: _LoopBound | None = None

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return (
            f"OpenAICompatibleClient(model={self.model!r}, base_url={_safe_url(self.base_url)!r}, "
            f"api_key_env={self.api_key_env!r}, api_key={key}, "
            f"schema_dialect={self.schema_dialect!r})"
        )

    def describe(self) -> str:
        """One line naming the model and endpoint (for experiment metadata)."""
        return (
            f"OpenAICompatibleClient(model={self.model!r}, base_url={_safe_url(self.base_url)!r})"
        )

    @property
    def url(self) -> str:
        """The chat completions endpoint called, without credentials."""
        return _safe_url(f"{self.base_url}/chat/completions")

    async def generate(self, prompt: str) -> str:
        """Return the model's reply to ``prompt`` (constrained to ``response_schema`` if set).

        Raises:
            LLMUnavailableError: Unreachable or timed out on every attempt.
            LLMStatusError: An HTTP error status (after retries when retryable).
            LLMResponseError: A 200 with no usable text (e.g. a refusal).
        """
        return (await self.complete(prompt)).output

    async def complete(
        self,
        prompt: str | Sequence[Mapping[str, Any]],
        *,
        response_schema: Mapping[str, Any] | _Unset | None = _UNSET,
        schema_name: str | None = None,
    ) -> LLMCall:
        """One chat completion, with this call's own schema if given; the full `LLMCall`.

        Args:
            prompt: The user message, or the whole message list (``role`` / ``content``
                mappings; the client's ``system_prompt`` is then not added).
            response_schema: A JSON Schema for this call's reply (None: unconstrained); the
                client's ``response_schema`` when omitted. Sent in the client's dialect.
            schema_name: ``json_schema.name`` for this call (the client's when omitted).

        Raises:
            LLMUnavailableError: Unreachable or timed out on every attempt.
            LLMStatusError: An HTTP error status (after retries when retryable).
            LLMResponseError: A 200 with no usable text (e.g. a refusal).
        """
        schema = self.response_schema if isinstance(response_schema, _Unset) else response_schema
        request = ChatRequest(
            messages=self._messages(prompt),
            schema=None if schema is None else dict(schema),
            schema_name=schema_name or self.schema_name,
        )
        bound = self._bind()
        async with bound.semaphore:
            if self.tracer is None:
                return await self._complete(bound.http, request)
            from stateval.tracing import llm_span

            with llm_span(
                self.tracer,
                messages=request.text_messages,
                model_name=self.model,
                invocation_parameters=self._invocation_parameters(),
                provider="openai" if "api.openai.com" in self.base_url else None,
            ) as span:
                call = await self._complete(bound.http, request)
                span.set_response(
                    call.output,
                    prompt_tokens=call.prompt_tokens,
                    completion_tokens=call.completion_tokens,
                    total_tokens=call.total_tokens,
                )
                return call

    async def aclose(self) -> None:
        """Close the connection pool of the current event loop (the client stays usable)."""
        bound, self._bound = self._bound, None
        if bound is not None:
            await bound.http.aclose()

    def detached(self) -> OpenAICompatibleClient:
        """A copy with the same settings and no connection pool (for use on another event loop
        or thread; close it with `aclose`)."""
        clone = copy.copy(self)
        clone._bound = None
        return clone

    async def __aenter__(self) -> OpenAICompatibleClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- internals -------------------------------------------------------------------------

    def _bind(self) -> _LoopBound:
        loop = asyncio.get_running_loop()
        if self._bound is None or self._bound.loop is not loop:
            headers = {"Content-Type": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            import httpx  # imported on first use: `stateval --help` stays light

            http = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(self.timeout))
            self._bound = _LoopBound(loop, http, asyncio.Semaphore(self.max_concurrency))
        return self._bound

    def _dialect(self, schema: Mapping[str, Any] | None) -> str | None:
        if schema is None:
            return None
        return "json_schema" if self.schema_dialect == "auto" else self.schema_dialect

    def _messages(self, prompt: str | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        if not isinstance(prompt, str):
            return [dict(message) for message in prompt]
        messages: list[dict[str, Any]] = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": prompt})
        return messages

    def _body(self, request: ChatRequest, dialect: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": request.messages}
        body.update(self._invocation_parameters())
        if dialect is not None and request.schema is not None:
            body["response_format"] = response_format(
                request.schema, dialect, request.schema_name, self.strict
            )
        body.update(self.extra_body)
        return body

    def _invocation_parameters(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        return params

    async def _complete(self, http: httpx.AsyncClient, request: ChatRequest) -> LLMCall:
        import httpx

        url = f"{self.base_url}/chat/completions"
        started = time.monotonic()
        attempts = 0
        retries = 0
        while True:
            dialect = self._dialect(request.schema)
            attempts += 1
            wait_hint: float | None = None
            detail = ""
            try:
                # httpx's timeout bounds each read; the attempt as a whole gets its own deadline.
                async with asyncio.timeout(self.timeout):
                    response = await http.post(url, json=self._body(request, dialect))
            except (httpx.TimeoutException, TimeoutError):
                problem = f"timed out after {self.timeout:g}s"
                status: int | None = None
            except httpx.TransportError as exc:
                problem = f"connection failed ({type(exc).__name__})"
                status = None
            else:
                status = response.status_code
                if status == 200:
                    return self._finish(response, request, dialect, started, attempts)
                detail = self._redact(response.text[:_DETAIL_CHARS])
                if self._should_switch_dialect(status, dialect, response.text):
                    self.schema_dialect = "json_object"
                    continue
                problem = f"HTTP {status}"
                if status not in RETRYABLE_STATUS:
                    raise self._status_error(status, detail, attempts)
                wait_hint = retry_after(response)
            if retries >= self.max_retries:
                if status is not None:
                    raise self._status_error(status, detail, attempts)
                raise LLMUnavailableError(
                    f"LLM endpoint {self.url} (model {self.model!r}) {problem}; "
                    f"gave up after {attempts} attempt(s)",
                    model=self.model,
                    url=self.url,
                )
            retries += 1
            await asyncio.sleep(self._delay(retries, wait_hint))

    def _should_switch_dialect(self, status: int, dialect: str | None, text: str) -> bool:
        return (
            self.schema_dialect == "auto"
            and dialect == "json_schema"
            and (400 <= status < 500 or status == 500)
            and "response_format" in text
        )

    def _delay(self, retry: int, wait_hint: float | None) -> float:
        return backoff_delay(retry, wait_hint, self.backoff_base, self.backoff_max)

    def _status_error(self, status: int, detail: str, attempts: int) -> LLMStatusError:
        hint = ""
        if status in (401, 403):
            hint = f" (check the API key in ${self.api_key_env})" if self.api_key_env else ""
        return LLMStatusError(
            f"LLM endpoint {self.url} (model {self.model!r}) answered HTTP {status} after "
            f"{attempts} attempt(s){hint}: {_one_line(detail)}",
            model=self.model,
            url=self.url,
            status=status,
            detail=detail,
        )

    def _finish(
        self,
        response: httpx.Response,
        request: ChatRequest,
        dialect: str | None,
        started: float,
        n: int,
    ) -> LLMCall:
        try:
            call = read_call(
                response.json(),
                request,
                requested_model=self.model,
                base_url=_safe_url(self.base_url),
                latency_s=time.monotonic() - started,
                attempts=n,
                response_format=dialect,
                invocation_parameters=self._invocation_parameters(),
            )
        except ValueError:
            raise self._response_error(self._not_a_completion(response)) from None
        except ReplyError as exc:
            what = self._not_a_completion(response) if exc.with_body else str(exc)
            raise self._response_error(what) from None
        self.last_call = call
        if self.on_call is not None:
            self.on_call(call)
        return call

    def _not_a_completion(self, response: httpx.Response) -> str:
        return f"is not a chat completion: {_one_line(self._redact(response.text[:120]))}"

    def _response_error(self, what: str) -> LLMClientError:
        return LLMResponseError(
            f"LLM endpoint {self.url} (model {self.model!r}) reply {what}",
            model=self.model,
            url=self.url,
        )

    def _redact(self, text: str) -> str:
        if self._api_key and len(self._api_key) >= 4:
            text = text.replace(self._api_key, "***")
        text = _AUTH_PATTERN.sub(lambda m: f"{m.group(1)} ***", text)
        return _SK_PATTERN.sub("sk-***", text)


def _safe_url(url: str) -> str:
    """``url`` without user info or query string (either may hold a credential)."""
    import httpx

    try:
        parsed = httpx.URL(url)
        return str(parsed.copy_with(username=None, password=None, query=None, fragment=None))
    except (httpx.InvalidURL, ValueError, TypeError):
        return "<invalid URL>"


def _has_userinfo(url: str) -> bool:
    import httpx

    try:
        return bool(httpx.URL(url).userinfo)
    except (httpx.InvalidURL, ValueError, TypeError):
        return False


def _one_line(text: str) -> str:
    return " ".join(text.split())
