"""Span names and attribute keys: they live here and nowhere else (the OpenInference ones are
read from its semantic conventions)."""

from __future__ import annotations

from contextvars import ContextVar

from openinference.semconv.trace import (
    OpenInferenceMimeTypeValues,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)

__all__ = [
    "ATTR_CASE_ID",
    "ATTR_MESSAGE_ID",
    "ATTR_RECREATED",
    "ATTR_SOURCE_SPAN_ID",
    "ATTR_SOURCE_TRACE_ID",
    "CHAIN",
    "JSON",
    "KIND",
    "LLM",
    "SESSION_ID",
    "SPAN_LLM",
    "SPAN_MUTATE",
    "TEXT",
    "TRACER_NAME",
    "current_session",
]

TRACER_NAME = "stateval"
SPAN_MUTATE = "stateval.mutate"
SPAN_LLM = "stateval.llm"

ATTR_CASE_ID = "stateval.case_id"
ATTR_MESSAGE_ID = "stateval.message_id"
ATTR_RECREATED = "stateval.recreated"
ATTR_SOURCE_SPAN_ID = "stateval.source_span_id"
ATTR_SOURCE_TRACE_ID = "stateval.source_trace_id"

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
CHAIN = OpenInferenceSpanKindValues.CHAIN.value
LLM = OpenInferenceSpanKindValues.LLM.value
JSON = OpenInferenceMimeTypeValues.JSON.value
TEXT = OpenInferenceMimeTypeValues.TEXT.value
SESSION_ID = SpanAttributes.SESSION_ID

# The session of the mutator-call span being run, for the LLM spans started inside it.
current_session: ContextVar[str | None] = ContextVar("stateval_session_id", default=None)
