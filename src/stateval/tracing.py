"""OpenTelemetry setup and OpenInference span helpers: the only module that configures tracing.

Every mutator call is a CHAIN span named `SPAN_MUTATE`; every LLM client call inside it is an LLM
span named `SPAN_LLM`. A mutator call that is a turn of an episode carries the episode as its
OpenInference session (``session.id``), and so do the LLM spans inside it, so Phoenix's Sessions
view shows the episode's turns as one conversation. Spans go to Phoenix over OTLP/HTTP through a
`BatchSpanProcessor`, so a run never waits on an export. stateval builds its own `TracerProvider`
and never touches the global one, so it coexists with whatever tracing the user's application
sets up.

Example:
    >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    >>> exporter = InMemorySpanExporter()
    >>> tracing = configure_tracing("my-project", exporter=exporter)
    >>> with mutator_call_span(tracing.tracer, case_id="c1", input="hi", pre_state={}) as span:
    ...     span.set_output({"greeting": "hi"})
    >>> tracing.shutdown()
    >>> [s.name for s in exporter.get_finished_spans()]
    ['stateval.mutate']
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from openinference.semconv.resource import ResourceAttributes
from openinference.semconv.trace import (
    MessageAttributes,
    OpenInferenceMimeTypeValues,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry import trace as trace_api
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span, Status, StatusCode, Tracer

__all__ = [
    "ATTR_CASE_ID",
    "ATTR_MESSAGE_ID",
    "ATTR_RECREATED",
    "ATTR_SOURCE_SPAN_ID",
    "ATTR_SOURCE_TRACE_ID",
    "SPAN_LLM",
    "SPAN_MUTATE",
    "TRACER_NAME",
    "LLMSpan",
    "MutatorCallSpan",
    "RecordedCall",
    "SpanDelivery",
    "Tracing",
    "configure_tracing",
    "current_trace_id",
    "disabled_tracing",
    "llm_span",
    "mutation_span",
    "mutator_call_span",
    "otlp_span_ids",
    "recreated_mutation_spans",
    "recreated_mutator_call_spans",
    "send_otlp",
]

# -- names: span names and attribute keys live here and nowhere else ---------------------------

TRACER_NAME = "stateval"
SPAN_MUTATE = "stateval.mutate"
SPAN_LLM = "stateval.llm"

ATTR_CASE_ID = "stateval.case_id"
ATTR_MESSAGE_ID = "stateval.message_id"
ATTR_RECREATED = "stateval.recreated"
ATTR_SOURCE_SPAN_ID = "stateval.source_span_id"
ATTR_SOURCE_TRACE_ID = "stateval.source_trace_id"

_KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
_CHAIN = OpenInferenceSpanKindValues.CHAIN.value
_LLM = OpenInferenceSpanKindValues.LLM.value
_JSON = OpenInferenceMimeTypeValues.JSON.value
_TEXT = OpenInferenceMimeTypeValues.TEXT.value
_SESSION_ID = SpanAttributes.SESSION_ID

# The session of the mutator-call span being run, for the LLM spans started inside it.
_current_session: ContextVar[str | None] = ContextVar("stateval_session_id", default=None)

# Invocation parameters whose key looks like a credential never reach a span.
_SECRET_KEY = re.compile(
    r"api[_-]?key|secret|password|passwd|authori[sz]ation|credential|bearer|"
    r"access[_-]?token|auth[_-]?token|refresh[_-]?token|session[_-]?token",
    re.IGNORECASE,
)


# -- the provider ----------------------------------------------------------------------------


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
            **_mutation_attributes(
                call.case_id,
                call.input,
                call.pre_state,
                call.message_id,
                call.session_id,
                _Source(call.source_span_id, call.source_trace_id),
                _RunLabels(call.run, call.mode),
            ),
            SpanAttributes.OUTPUT_VALUE: _to_json(call.output),
            SpanAttributes.OUTPUT_MIME_TYPE: _JSON,
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
                links=_Source(call.source_span_id, call.source_trace_id).links(),
            )
        )
    return bytes(encode_spans(spans).SerializeToString())


def disabled_tracing(project_name: str = "default") -> Tracing:
    """A `Tracing` that records nothing (for runs without Phoenix)."""
    return Tracing(trace_api.NoOpTracer(), project_name, None)


def current_trace_id() -> str | None:
    """The current span's trace id as 32 lowercase hex digits, or None outside a recorded span."""
    return _trace_id(trace_api.get_current_span())


def _trace_id(span: Span) -> str | None:
    context = span.get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


# -- the mutator-call span ---------------------------------------------------------------------


class MutatorCallSpan:
    """The CHAIN span of one mutator call, as handed out by `mutator_call_span`."""

    __slots__ = ("span",)

    def __init__(self, span: Span) -> None:
        self.span = span

    @property
    def trace_id(self) -> str | None:
        """The span's trace id in hex (what an experiment run links to), None if not recorded."""
        return _trace_id(self.span)

    @property
    def span_id(self) -> str | None:
        """The span id as 16 hex digits, None if not recorded."""
        context = self.span.get_span_context()
        return format(context.span_id, "016x") if context.is_valid else None

    def set_output(self, value: object) -> None:
        """Record the mutator's result (a post-state or any JSON-able value) as ``output.value``."""
        self.span.set_attribute(SpanAttributes.OUTPUT_VALUE, _to_json(value))
        self.span.set_attribute(SpanAttributes.OUTPUT_MIME_TYPE, _JSON)


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
    source = _Source(source_span_id, source_trace_id)
    labels = _RunLabels(run, mode)
    attributes = _mutation_attributes(
        case_id, input, pre_state, message_id, session_id, source, labels
    )
    token = _current_session.set(session_id)
    try:
        with _span(tracer, SPAN_MUTATE, attributes, source.links()) as span:
            yield MutatorCallSpan(span)
    finally:
        _current_session.reset(token)


@dataclass(frozen=True, slots=True)
class _Source:
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
class _RunLabels:
    """The run and episode mode a mutator-call span records in its ``metadata``."""

    run: str | None = None
    mode: str | None = None

    def metadata(self) -> dict[str, str]:
        pairs = (("run", self.run), ("mode", self.mode))
        return {key: value for key, value in pairs if value is not None}


def _mutation_attributes(
    case_id: str,
    input: object,
    pre_state: object,
    message_id: str | None,
    session_id: str | None,
    source: _Source | None = None,
    labels: _RunLabels | None = None,
) -> dict[str, str]:
    source = source or _Source()
    metadata: dict[str, str] = {"case_id": case_id}
    metadata.update((labels or _RunLabels()).metadata())
    if source.span_id is not None:
        metadata["source_span_id"] = source.span_id
    attributes: dict[str, str] = {
        _KIND: _CHAIN,
        ATTR_CASE_ID: case_id,
        SpanAttributes.INPUT_VALUE: _to_json(
            {"case_id": case_id, "pre_state": pre_state, "input": input}
        ),
        SpanAttributes.INPUT_MIME_TYPE: _JSON,
    }
    if message_id is not None:
        attributes[ATTR_MESSAGE_ID] = message_id
        metadata["message_id"] = message_id
    if session_id is not None:
        attributes[_SESSION_ID] = session_id
    attributes.update(source.attributes())
    attributes[SpanAttributes.METADATA] = json.dumps(metadata)
    return attributes


# -- the LLM span ----------------------------------------------------------------------------


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
        self.span.set_attribute(SpanAttributes.OUTPUT_MIME_TYPE, _TEXT)
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
    attributes: dict[str, str] = {_KIND: _LLM}
    session_id = _current_session.get()
    if session_id is not None:
        attributes[_SESSION_ID] = session_id
    if prompt is not None:
        attributes[SpanAttributes.INPUT_VALUE] = prompt
        attributes[SpanAttributes.INPUT_MIME_TYPE] = _TEXT
    else:
        attributes[SpanAttributes.INPUT_VALUE] = _to_json(list(messages))
        attributes[SpanAttributes.INPUT_MIME_TYPE] = _JSON
    for index, message in enumerate(messages):
        prefix = f"{SpanAttributes.LLM_INPUT_MESSAGES}.{index}."
        attributes[prefix + MessageAttributes.MESSAGE_ROLE] = str(message.get("role", "user"))
        attributes[prefix + MessageAttributes.MESSAGE_CONTENT] = str(message.get("content", ""))
    if model_name is not None:
        attributes[SpanAttributes.LLM_MODEL_NAME] = model_name
    if provider is not None:
        attributes[SpanAttributes.LLM_PROVIDER] = provider
    if invocation_parameters is not None:
        attributes[SpanAttributes.LLM_INVOCATION_PARAMETERS] = _to_json(
            _without_secrets(invocation_parameters)
        )
    with _span(tracer, SPAN_LLM, attributes) as span:
        yield LLMSpan(span)


# -- shared machinery ------------------------------------------------------------------------


@contextmanager
def _span(
    tracer: Tracer,
    name: str,
    attributes: Mapping[str, str],
    links: Sequence[trace_api.Link] = (),
) -> Iterator[Span]:
    with tracer.start_as_current_span(
        name,
        attributes=attributes,
        links=links,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
            raise
        span.set_status(Status(StatusCode.OK))


def _without_secrets(params: Mapping[str, Any]) -> dict[str, Any]:
    clean: dict[str, Any] = {}
    for key, value in params.items():
        if _SECRET_KEY.search(str(key)):
            continue
        clean[key] = _without_secrets(value) if isinstance(value, Mapping) else value
    return clean


def _to_json(value: object) -> str:
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def _json_default(value: object) -> object:
    for method in ("to_dict", "model_dump"):
        fn = getattr(value, method, None)
        if callable(fn):
            return fn()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


mutation_span = mutator_call_span
"""The former name of `mutator_call_span` (the span is the mutator's call, not mutation
testing's); kept so code written against it still runs."""
recreated_mutation_spans = recreated_mutator_call_spans
"""The former name of `recreated_mutator_call_spans`."""
