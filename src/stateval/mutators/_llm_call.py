"""One chat completion call of `OpenAICompatibleClient`: what it sends (`ChatRequest`), how a
failed attempt is retried (`RETRYABLE_STATUS`, `backoff_delay`, `retry_after`), and what a
successful call records (`LLMCall`, read by `read_call`; never the API key).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import httpx

__all__ = [
    "RETRYABLE_STATUS",
    "ChatRequest",
    "LLMCall",
    "ReplyError",
    "backoff_delay",
    "read_call",
    "retry_after",
]

RETRYABLE_STATUS: Final = frozenset({408, 409, 429, 500, 502, 503, 504})
"""HTTP statuses worth another attempt (timeouts, conflicts, rate limits, server errors)."""


@dataclass(frozen=True, slots=True)
class LLMCall:
    """One completed chat completion: what the LLM span and reports record (never the key).

    Attributes:
        model: The model the server says answered (else the one requested).
        requested_model: The model asked for.
        base_url: The endpoint's base URL, without credentials.
        prompt: The user message sent.
        system_prompt: The system message sent, if any.
        output: The reply text.
        prompt_tokens: Prompt tokens, when the server reports usage.
        completion_tokens: Completion tokens, when reported.
        total_tokens: Total tokens, when reported.
        finish_reason: Why generation stopped (``stop``, ``length``, ...), when reported.
        latency_s: Seconds from the first attempt to the reply, backoff included.
        attempts: HTTP attempts made (1 when nothing was retried).
        response_format: ``json_schema``, ``json_object`` or None (unconstrained).
        invocation_parameters: Sampling parameters sent (temperature, max_tokens, ...).
    """

    model: str
    requested_model: str
    base_url: str
    prompt: str
    system_prompt: str | None
    output: str
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None
    finish_reason: str | None
    latency_s: float
    attempts: int
    response_format: str | None
    invocation_parameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """What one call sends: messages, and the schema its reply must follow (if any)."""

    messages: list[dict[str, Any]]
    schema: dict[str, Any] | None
    schema_name: str

    @property
    def text_messages(self) -> list[dict[str, str]]:
        """The messages with their contents as text (for the LLM span)."""
        return [
            {"role": str(m.get("role", "")), "content": _content_text(m.get("content"))}
            for m in self.messages
        ]

    @property
    def user_prompt(self) -> str:
        """The last user message's text (what `LLMCall.prompt` records)."""
        users = [m for m in self.messages if m.get("role") == "user"]
        return _content_text(users[-1].get("content")) if users else ""

    @property
    def system_prompt(self) -> str | None:
        """The first system message's text, if any."""
        systems = [m for m in self.messages if m.get("role") == "system"]
        return _content_text(systems[0].get("content")) if systems else None


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def backoff_delay(retry: int, retry_after: float | None, base: float, maximum: float) -> float:
    """Seconds to wait before retry number ``retry`` (1 for the first).

    A server's ``Retry-After`` wins (capped at ``maximum``); otherwise ``base`` doubles per
    retry up to ``maximum``, and a random 50-100% of it is used (jitter).
    """
    if retry_after is not None:
        return min(max(retry_after, 0.0), maximum)
    ceiling = min(base * 2.0 ** (retry - 1), maximum)
    return ceiling * random.uniform(0.5, 1.0)


def retry_after(response: httpx.Response) -> float | None:
    """The response's ``Retry-After`` header in seconds, when it is a number."""
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class ReplyError(Exception):
    """A 200 reply that is not a usable chat completion; the message completes "reply ...".

    Attributes:
        with_body: Whether the reply's (redacted) body should be quoted after the message.
    """

    def __init__(self, what: str, *, with_body: bool = False) -> None:
        super().__init__(what)
        self.with_body = with_body


def read_call(
    payload: Any,
    request: ChatRequest,
    *,
    requested_model: str,
    base_url: str,
    latency_s: float,
    attempts: int,
    response_format: str | None,
    invocation_parameters: Mapping[str, Any],
) -> LLMCall:
    """The `LLMCall` a chat completion ``payload`` (the parsed JSON body) records.

    Raises:
        ReplyError: The payload has no choice with a message, or its message has no text
            (a refusal is named as such).
    """
    try:
        choice = payload["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise ReplyError("is not a chat completion", with_body=True) from None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        refusal = message.get("refusal") if isinstance(message, dict) else None
        if refusal:
            raise ReplyError(f"is a refusal: {' '.join(str(refusal)[:200].split())}")
        raise ReplyError("has no text content")
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    return LLMCall(
        model=str(payload.get("model") or requested_model),
        requested_model=requested_model,
        base_url=base_url,
        prompt=request.user_prompt,
        system_prompt=request.system_prompt,
        output=content,
        prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
        completion_tokens=_int_or_none(usage.get("completion_tokens")),
        total_tokens=_int_or_none(usage.get("total_tokens")),
        finish_reason=choice.get("finish_reason"),
        latency_s=latency_s,
        attempts=attempts,
        response_format=response_format,
        invocation_parameters=dict(invocation_parameters),
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
