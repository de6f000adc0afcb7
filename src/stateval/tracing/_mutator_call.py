"""The CHAIN span of one mutator call: its input, pre-state, session, run and mode, the
production span its case came from."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from openinference.semconv.trace import SpanAttributes
from opentelemetry import trace as trace_api
from opentelemetry.trace import Span, Tracer

from stateval.tracing._names import (
    ATTR_CASE_ID,
    ATTR_MESSAGE_ID,
    ATTR_SOURCE_SPAN_ID,
    ATTR_SOURCE_TRACE_ID,
    CHAIN,
    JSON,
    KIND,
    SESSION_ID,
    SPAN_MUTATE,
    current_session,
)
from stateval.tracing._provider import trace_id_of
from stateval.tracing._span import open_span, to_json

__all__ = [
    "MutatorCallSpan",
    "RunLabels",
    "Source",
    "mutation_attributes",
    "mutation_span",
    "mutator_call_span",
]


class MutatorCallSpan:
    """The CHAIN span of one mutator call, as handed out by `mutator_call_span`."""

    __slots__ = ("span",)

    def __init__(self, span: Span) -> None:
        self.span = span

    @property
    def trace_id(self) -> str | None:
        """The span's trace id in hex (what an experiment run links to), None if not recorded."""
        return trace_id_of(self.span)

    @property
    def span_id(self) -> str | None:
        """The span id as 16 hex digits, None if not recorded."""
        context = self.span.get_span_context()
        return format(context.span_id, "016x") if context.is_valid else None

    def set_output(self, value: object) -> None:
        """Record the mutator's result (a post-state or any JSON-able value) as ``output.value``."""
        self.span.set_attribute(SpanAttributes.OUTPUT_VALUE, to_json(value))
        self.span.set_attribute(SpanAttributes.OUTPUT_MIME_TYPE, JSON)


@contextmanager
def mutator_call_span(
    tracer: Tracer,
    *,
    case_id: str,
    input: object,
    pre_state: object = None,
    message_id: str | None = None,
    session_id: str | None = None,
    source_span_id: str | None = None,
    source_trace_id: str | None = None,
    run: str | None = None,
    mode: str | None = None,
) -> Iterator[MutatorCallSpan]:
    """Run a mutator call inside a CHAIN span named `SPAN_MUTATE`.

    ``input.value`` is JSON ``{"case_id", "pre_state", "input"}``; objects with ``to_dict()`` or
    ``model_dump()`` and dataclasses are serialised through those. An exception escaping the
    block marks the span ERROR, is recorded on it, and is re-raised.

    Args:
        tracer: From `Tracing.tracer`.
        case_id: The case being run (attribute `ATTR_CASE_ID`).
        input: The mutator's input.
        pre_state: The state before the call.
        message_id: The input's message id (attribute `ATTR_MESSAGE_ID`), when it has one.
        session_id: The OpenInference session (``session.id``) of the call, when it is a turn
            of an episode; the LLM spans started inside the block carry it too.
        source_span_id: The production span the case came from (its metadata's
            ``source_span_id``): attribute `ATTR_SOURCE_SPAN_ID`, also in ``metadata``.
        source_trace_id: That span's trace: attribute `ATTR_SOURCE_TRACE_ID`, and with the
            span id an OpenTelemetry link to the source span.
        run: The run the call belongs to, as ``metadata.run``: with ``mode`` what Phoenix's
            session filter reads from a session's first turn (``metadata["run"]``).
        mode: The run's episode mode (``teacher_forced`` or ``free_running``), as
            ``metadata.mode``.
    """
    source = Source(source_span_id, source_trace_id)
    labels = RunLabels(run, mode)
    attributes = mutation_attributes(
        case_id, input, pre_state, message_id, session_id, source, labels
    )
    token = current_session.set(session_id)
    try:
        with open_span(tracer, SPAN_MUTATE, attributes, source.links()) as span:
            yield MutatorCallSpan(span)
    finally:
        current_session.reset(token)


@dataclass(frozen=True, slots=True)
class Source:
    """The production span a case came from, as a mutator-call span records it."""

    span_id: str | None = None
    trace_id: str | None = None

    def attributes(self) -> dict[str, str]:
        pairs = ((ATTR_SOURCE_SPAN_ID, self.span_id), (ATTR_SOURCE_TRACE_ID, self.trace_id))
        return {key: value for key, value in pairs if value is not None}

    def links(self) -> list[trace_api.Link]:
        if self.span_id is None or self.trace_id is None:
            return []
        context = trace_api.SpanContext(
            int(self.trace_id, 16), int(self.span_id, 16), is_remote=True
        )
        return [trace_api.Link(context, {"stateval.link": "source_span"})]


@dataclass(frozen=True, slots=True)
class RunLabels:
    """The run and episode mode a mutator-call span records in its ``metadata``."""

    run: str | None = None
    mode: str | None = None

    def metadata(self) -> dict[str, str]:
        pairs = (("run", self.run), ("mode", self.mode))
        return {key: value for key, value in pairs if value is not None}


def mutation_attributes(
    case_id: str,
    input: object,
    pre_state: object,
    message_id: str | None,
    session_id: str | None,
    source: Source | None = None,
    labels: RunLabels | None = None,
) -> dict[str, str]:
    source = source or Source()
    metadata: dict[str, str] = {"case_id": case_id}
    metadata.update((labels or RunLabels()).metadata())
    if source.span_id is not None:
        metadata["source_span_id"] = source.span_id
    attributes: dict[str, str] = {
        KIND: CHAIN,
        ATTR_CASE_ID: case_id,
        SpanAttributes.INPUT_VALUE: to_json(
            {"case_id": case_id, "pre_state": pre_state, "input": input}
        ),
        SpanAttributes.INPUT_MIME_TYPE: JSON,
    }
    if message_id is not None:
        attributes[ATTR_MESSAGE_ID] = message_id
        metadata["message_id"] = message_id
    if session_id is not None:
        attributes[SESSION_ID] = session_id
    attributes.update(source.attributes())
    attributes[SpanAttributes.METADATA] = json.dumps(metadata)
    return attributes


mutation_span = mutator_call_span
"""The former name of `mutator_call_span` (the span is the mutator's call, not mutation
testing's); kept so code written against it still runs."""
