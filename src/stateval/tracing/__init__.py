"""OpenTelemetry setup and OpenInference span helpers: the only package that configures tracing.

Every mutator call is a CHAIN span named `SPAN_MUTATE`; every LLM client call inside it is an LLM
span named `SPAN_LLM`. A mutator call that is a turn of an episode carries the episode as its
OpenInference session (``session.id``), and so do the LLM spans inside it, so Phoenix's Sessions
view shows the episode's turns as one conversation. Spans go to Phoenix over OTLP/HTTP through a
`BatchSpanProcessor`, so a run never waits on an export. stateval builds its own `TracerProvider`
and never touches the global one, so it coexists with whatever tracing the user's application
sets up.

Span names and attribute keys (``_names.py``), the provider (``_provider.py``), the mutator-call
span (``_mutator_call.py``), the LLM span (``_llm.py``) and spans re-created from the journal
(``_replay.py``) each have a module.

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

from stateval.tracing._llm import LLMSpan, llm_span
from stateval.tracing._mutator_call import MutatorCallSpan, mutation_span, mutator_call_span
from stateval.tracing._names import (
    ATTR_CASE_ID,
    ATTR_MESSAGE_ID,
    ATTR_RECREATED,
    ATTR_SOURCE_SPAN_ID,
    ATTR_SOURCE_TRACE_ID,
    SPAN_LLM,
    SPAN_MUTATE,
    TRACER_NAME,
)
from stateval.tracing._provider import (
    SpanDelivery,
    Tracing,
    configure_tracing,
    current_trace_id,
    disabled_tracing,
)
from stateval.tracing._replay import (
    RecordedCall,
    otlp_span_ids,
    recreated_mutation_spans,
    recreated_mutator_call_spans,
    send_otlp,
)

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
