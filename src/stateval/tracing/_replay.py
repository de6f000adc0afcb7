"""Spans a killed process never exported, re-created from the journal, and OTLP payloads
(kept batches) sent again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openinference.semconv.resource import ResourceAttributes
from openinference.semconv.trace import SpanAttributes
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import Status, StatusCode

from stateval.tracing._mutator_call import RunLabels, Source, mutation_attributes
from stateval.tracing._names import ATTR_RECREATED, JSON, SPAN_MUTATE, TRACER_NAME
from stateval.tracing._span import to_json

__all__ = [
    "RecordedCall",
    "otlp_span_ids",
    "recreated_mutation_spans",
    "recreated_mutator_call_spans",
    "send_otlp",
]


def send_otlp(base_url: str, payload: bytes, *, api_key: str | None = None) -> bool:
    """POST an OTLP/HTTP protobuf payload (as kept by ``on_undelivered``) to Phoenix's
    ``/v1/traces``; True when it was accepted. Spans keep their ids, so a payload sent twice
    is stored once."""
    import httpx

    headers = {"Content-Type": "application/x-protobuf"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    try:
        response = httpx.post(
            f"{base_url.rstrip('/')}/v1/traces", content=payload, headers=headers, timeout=30.0
        )
    except httpx.HTTPError:
        return False
    return response.is_success


def otlp_span_ids(payload: bytes) -> set[str]:
    """The span ids (16 hex digits) in an OTLP/HTTP protobuf payload (a kept batch)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest.FromString(payload)
    return {
        span.span_id.hex()
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    }


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """What a run journaled of one mutator call: enough to re-create its mutator-call span.

    Attributes:
        trace_id: The span's trace id (32 hex digits).
        span_id: Its span id (16 hex digits).
        case_id: The case.
        input: The mutator's input (JSON-able).
        pre_state: The state before the call.
        message_id: The input's message id.
        output: What `MutatorCallSpan.set_output` recorded (the post-state, or the error).
        start_ns: When the call started (ns since the epoch).
        end_ns: When it ended.
        session_id: The call's OpenInference session (its episode), if any.
        source_span_id: The production span the case came from, if any.
        source_trace_id: That span's trace, if known.
        run: The run the call belongs to (``metadata.run``), if known.
        mode: The run's episode mode (``metadata.mode``), if known.
    """

    trace_id: str
    span_id: str
    case_id: str
    input: object
    pre_state: object
    message_id: str | None
    output: object
    start_ns: int
    end_ns: int
    session_id: str | None = None
    source_span_id: str | None = None
    source_trace_id: str | None = None
    run: str | None = None
    mode: str | None = None


def recreated_mutator_call_spans(project_name: str, calls: Sequence[RecordedCall]) -> bytes:
    """The mutator-call spans of ``calls`` as an OTLP/HTTP protobuf payload (for `send_otlp`), with
    their original ids and times and the attributes `mutator_call_span` gives, plus
    ``stateval.recreated: true``: spans a killed process never exported, re-created from the
    journal by a resumed run (their LLM child spans are gone). A span Phoenix already has is
    stored once.
    """
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, TraceFlags

    resource = Resource({ResourceAttributes.PROJECT_NAME: project_name})
    scope = InstrumentationScope(TRACER_NAME)
    spans = []
    for call in calls:
        attributes: dict[str, str | bool] = {
            **mutation_attributes(
                call.case_id,
                call.input,
                call.pre_state,
                call.message_id,
                call.session_id,
                Source(call.source_span_id, call.source_trace_id),
                RunLabels(call.run, call.mode),
            ),
            SpanAttributes.OUTPUT_VALUE: to_json(call.output),
            SpanAttributes.OUTPUT_MIME_TYPE: JSON,
            ATTR_RECREATED: True,
        }
        context = SpanContext(
            int(call.trace_id, 16),
            int(call.span_id, 16),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )
        spans.append(
            ReadableSpan(
                name=SPAN_MUTATE,
                context=context,
                resource=resource,
                attributes=attributes,
                kind=SpanKind.INTERNAL,
                status=Status(StatusCode.OK),
                start_time=call.start_ns,
                end_time=call.end_ns,
                instrumentation_scope=scope,
                links=Source(call.source_span_id, call.source_trace_id).links(),
            )
        )
    return bytes(encode_spans(spans).SerializeToString())


recreated_mutation_spans = recreated_mutator_call_spans
"""The former name of `recreated_mutator_call_spans`."""
