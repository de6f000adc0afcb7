"""The LLM span of one client call: messages, model, token counts, no credentials."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from openinference.semconv.trace import MessageAttributes, SpanAttributes
from opentelemetry.trace import Span, Tracer

from stateval.tracing._names import JSON, KIND, LLM, SESSION_ID, SPAN_LLM, TEXT, current_session
from stateval.tracing._span import open_span, to_json

__all__ = ["LLMSpan", "llm_span"]

# Invocation parameters whose key looks like a credential never reach a span.
_SECRET_KEY = re.compile(
    r"api[_-]?key|secret|password|passwd|authori[sz]ation|credential|bearer|"
    r"access[_-]?token|auth[_-]?token|refresh[_-]?token|session[_-]?token",
    re.IGNORECASE,
)


class LLMSpan:
    """The LLM span of one client call, as handed out by `llm_span`."""

    __slots__ = ("span",)

    def __init__(self, span: Span) -> None:
        self.span = span

    def set_response(
        self,
        text: str,
        *,
        role: str = "assistant",
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        total_tokens: int | None = None,
    ) -> None:
        """Record the model's reply and, when known, its token counts."""
        prefix = f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0."
        self.span.set_attribute(prefix + MessageAttributes.MESSAGE_ROLE, role)
        self.span.set_attribute(prefix + MessageAttributes.MESSAGE_CONTENT, text)
        self.span.set_attribute(SpanAttributes.OUTPUT_VALUE, text)
        self.span.set_attribute(SpanAttributes.OUTPUT_MIME_TYPE, TEXT)
        self.set_token_counts(prompt_tokens, completion_tokens, total_tokens)

    def set_token_counts(
        self,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        total_tokens: int | None = None,
    ) -> None:
        """Record token counts; the total is their sum when not given and both are known."""
        if total_tokens is None and prompt_tokens is not None and completion_tokens is not None:
            total_tokens = prompt_tokens + completion_tokens
        for key, count in (
            (SpanAttributes.LLM_TOKEN_COUNT_PROMPT, prompt_tokens),
            (SpanAttributes.LLM_TOKEN_COUNT_COMPLETION, completion_tokens),
            (SpanAttributes.LLM_TOKEN_COUNT_TOTAL, total_tokens),
        ):
            if count is not None:
                self.span.set_attribute(key, count)


@contextmanager
def llm_span(
    tracer: Tracer,
    *,
    prompt: str | None = None,
    messages: Sequence[Mapping[str, str]] | None = None,
    model_name: str | None = None,
    invocation_parameters: Mapping[str, Any] | None = None,
    provider: str | None = None,
) -> Iterator[LLMSpan]:
    """Run one LLM client call inside an LLM span named `SPAN_LLM`.

    Inside a `mutator_call_span` with a ``session_id``, the span carries that session too.

    Args:
        tracer: From `Tracing.tracer`.
        prompt: The prompt, recorded as one user message when ``messages`` is not given.
        messages: Chat messages as ``{"role": ..., "content": ...}`` mappings.
        model_name: ``llm.model_name``.
        invocation_parameters: ``llm.invocation_parameters`` (temperature, max_tokens, ...);
            keys that look like credentials (api keys, tokens, secrets) are dropped.
        provider: ``llm.provider`` (for example ``openai``).
    """
    if messages is None:
        messages = [] if prompt is None else [{"role": "user", "content": prompt}]
    attributes: dict[str, str] = {KIND: LLM}
    session_id = current_session.get()
    if session_id is not None:
        attributes[SESSION_ID] = session_id
    if prompt is not None:
        attributes[SpanAttributes.INPUT_VALUE] = prompt
        attributes[SpanAttributes.INPUT_MIME_TYPE] = TEXT
    else:
        attributes[SpanAttributes.INPUT_VALUE] = to_json(list(messages))
        attributes[SpanAttributes.INPUT_MIME_TYPE] = JSON
    for index, message in enumerate(messages):
        prefix = f"{SpanAttributes.LLM_INPUT_MESSAGES}.{index}."
        attributes[prefix + MessageAttributes.MESSAGE_ROLE] = str(message.get("role", "user"))
        attributes[prefix + MessageAttributes.MESSAGE_CONTENT] = str(message.get("content", ""))
    if model_name is not None:
        attributes[SpanAttributes.LLM_MODEL_NAME] = model_name
    if provider is not None:
        attributes[SpanAttributes.LLM_PROVIDER] = provider
    if invocation_parameters is not None:
        attributes[SpanAttributes.LLM_INVOCATION_PARAMETERS] = to_json(
            _without_secrets(invocation_parameters)
        )
    with open_span(tracer, SPAN_LLM, attributes) as span:
        yield LLMSpan(span)


def _without_secrets(params: Mapping[str, Any]) -> dict[str, Any]:
    clean: dict[str, Any] = {}
    for key, value in params.items():
        if _SECRET_KEY.search(str(key)):
            continue
        clean[key] = _without_secrets(value) if isinstance(value, Mapping) else value
    return clean
