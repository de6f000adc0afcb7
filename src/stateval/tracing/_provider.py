"""The tracer and its own provider: spans batched to Phoenix over OTLP/HTTP, their delivery
counted, rejected batches handed back encoded (the only place that configures OpenTelemetry)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence

from openinference.semconv.resource import ResourceAttributes
from opentelemetry import trace as trace_api
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span, Tracer

from stateval.tracing._names import SPAN_MUTATE, TRACER_NAME

__all__ = [
    "SpanDelivery",
    "Tracing",
    "configure_tracing",
    "current_trace_id",
    "disabled_tracing",
    "trace_id_of",
]


class Tracing:
    """A configured tracer with its own provider.

    Attributes:
        tracer: The tracer spans are started from.
        project_name: The Phoenix project the spans are recorded under.
    """

    __slots__ = ("_provider", "delivery", "project_name", "tracer")

    def __init__(
        self,
        tracer: Tracer,
        project_name: str,
        provider: TracerProvider | None,
        delivery: SpanDelivery | None = None,
    ) -> None:
        self.tracer = tracer
        self.project_name = project_name
        self._provider = provider
        self.delivery = delivery or SpanDelivery()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export every finished span now; True when all were exported in time."""
        if self._provider is None:
            return True
        return self._provider.force_flush(timeout_millis)

    def shutdown(self) -> None:
        """Flush the remaining spans and stop the export thread."""
        if self._provider is not None:
            self._provider.shutdown()


def configure_tracing(
    project_name: str,
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    exporter: SpanExporter | None = None,
    schedule_delay_millis: int = 1_000,
    max_queue_size: int = 16_384,
    on_undelivered: Callable[[bytes, int], None] | None = None,
    on_delivered: Callable[[list[str]], None] | None = None,
) -> Tracing:
    """Build a tracer whose spans are batched to Phoenix (or to ``exporter``).

    Args:
        project_name: Phoenix project for the spans (resource attribute
            ``openinference.project.name``).
        base_url: Phoenix base URL; spans go to ``{base_url}/v1/traces`` over OTLP/HTTP.
        api_key: Sent as ``Authorization: Bearer <key>`` when given (``PHOENIX_API_KEY``).
        headers: Extra HTTP headers for the exporter.
        exporter: Use this exporter instead of OTLP (an in-memory one in tests).
        schedule_delay_millis: Longest a finished span waits before it is exported.
        max_queue_size: Spans held while the exporter catches up; beyond it spans are dropped.
        on_undelivered: Called (from the export thread) with the OTLP protobuf payload and the
            span count of every batch the server did not accept, so it can be kept and sent
            again later (`send_otlp`); the counts are in ``Tracing.delivery``.
        on_delivered: Called (from the export thread) with the span ids of the `SPAN_MUTATE`
            spans of every batch the server accepted, so a resumed run knows which mutation
            spans a killed process still held (`recreated_mutator_call_spans`).

    Returns:
        A `Tracing` owning a new `TracerProvider` (the global provider is left alone).
    """
    if exporter is None:
        if base_url is None:
            raise ValueError("configure_tracing needs a base_url or an exporter")
        all_headers = dict(headers or {})
        if api_key:
            all_headers["authorization"] = f"Bearer {api_key}"
        exporter = OTLPSpanExporter(
            endpoint=f"{base_url.rstrip('/')}/v1/traces", headers=all_headers
        )
    delivery = SpanDelivery()
    provider = TracerProvider(resource=Resource({ResourceAttributes.PROJECT_NAME: project_name}))
    provider.add_span_processor(
        BatchSpanProcessor(
            _CountingExporter(exporter, delivery, on_undelivered, on_delivered),
            schedule_delay_millis=schedule_delay_millis,
            max_queue_size=max_queue_size,
        )
    )
    return Tracing(provider.get_tracer(TRACER_NAME), project_name, provider, delivery)


class SpanDelivery:
    """How many spans the exporter delivered and how many the server did not accept."""

    __slots__ = ("_lock", "delivered", "undelivered")

    def __init__(self) -> None:
        self.delivered = 0
        self.undelivered = 0
        self._lock = threading.Lock()

    def count(self, spans: int, ok: bool) -> None:
        """Record one export of ``spans`` spans."""
        with self._lock:
            if ok:
                self.delivered += spans
            else:
                self.undelivered += spans


class _CountingExporter(SpanExporter):
    """Counts what ``inner`` delivers and hands each rejected batch, encoded, to a callback."""

    def __init__(
        self,
        inner: SpanExporter,
        delivery: SpanDelivery,
        on_undelivered: Callable[[bytes, int], None] | None,
        on_delivered: Callable[[list[str]], None] | None = None,
    ) -> None:
        self._inner = inner
        self._delivery = delivery
        self._on_undelivered = on_undelivered
        self._on_delivered = on_delivered

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = self._inner.export(spans)
        ok = result == SpanExportResult.SUCCESS
        self._delivery.count(len(spans), ok)
        if ok and self._on_delivered is not None:
            mutations = [
                format(s.context.span_id, "016x")
                for s in spans
                if s.name == SPAN_MUTATE and s.context is not None
            ]
            try:
                if mutations:
                    self._on_delivered(mutations)
            except Exception:  # as below: a record that cannot be kept costs a re-created span
                logging.getLogger(__name__).exception("could not record delivered spans")
        if not ok and self._on_undelivered is not None:
            from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

            try:
                self._on_undelivered(encode_spans(spans).SerializeToString(), len(spans))
            except Exception:  # the export thread must go on; the count says what was lost
                logging.getLogger(__name__).exception("could not keep undelivered spans")
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._inner.force_flush(timeout_millis)


def disabled_tracing(project_name: str = "default") -> Tracing:
    """A `Tracing` that records nothing (for runs without Phoenix)."""
    return Tracing(trace_api.NoOpTracer(), project_name, None)


def current_trace_id() -> str | None:
    """The current span's trace id as 32 lowercase hex digits, or None outside a recorded span."""
    return trace_id_of(trace_api.get_current_span())


def trace_id_of(span: Span) -> str | None:
    context = span.get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None
