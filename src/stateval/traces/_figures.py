"""A monitor's own figures in Phoenix, where a person inspecting the project finds them.

Phoenix 20.26 has no place for a project's metadata, so `publish_figures` records each
measurement (``stateval traces mutate``, ``stateval traces rates``) as one EVALUATOR span of
the monitored project, named `RECALL_SPAN` or `RATES_SPAN`: its ``output.value`` holds the
JSON report, and each figure is a span annotation on it (``recall:<operator>`` with the recall
as score, ``error_rate:<path>`` with the corrected estimate), upserted under the monitor's
identifier. In the project's spans view, the span name or an annotation name filters them; in
the trace tree, the figures are its badges.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes

from stateval.traces._rates import FieldRates
from stateval.traces._recall import MonitorRecall
from stateval.tracing import configure_tracing
from stateval.upload import PhoenixUploader, SpanAnnotationRecord

__all__ = [
    "RATES_SPAN",
    "RECALL_SPAN",
    "PublishedFigures",
    "publish_figures",
    "rate_annotations",
    "recall_annotations",
]

RECALL_SPAN = "stateval.monitor.recall"
"""The span of a ``stateval traces mutate`` measurement."""

RATES_SPAN = "stateval.monitor.rates"
"""The span of a ``stateval traces rates`` measurement."""


@dataclass(frozen=True, slots=True)
class PublishedFigures:
    """Where a measurement went: its span and how many annotations it carries."""

    span_id: str
    trace_id: str
    annotations: int


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return ""
    return f" (95% interval {low:.1%} - {high:.1%})"


def recall_annotations(recall: MonitorRecall) -> list[tuple[str, float | None, str, str]]:
    """``(name, score, label, explanation)`` per operator of a recall measurement."""
    out = []
    for operator, tally in recall.operators.items():
        interval = tally.interval
        if tally.recall is None or interval is None:
            explanation = f"{operator}: not measurable (no mutant changed a sampled call)"
        else:
            explanation = (
                f"{operator}: {tally.caught} of {tally.applied} mutants caught, recall "
                f"{tally.recall:.1%}{_interval(*interval)}"
            )
        out.append(
            (f"recall:{operator}", tally.recall, f"{tally.caught}/{tally.applied}", explanation)
        )
    return out


def rate_annotations(rates: Sequence[FieldRates]) -> list[tuple[str, float | None, str, str]]:
    """``(name, score, label, explanation)`` per field of a rates measurement."""
    out = []
    for field in rates:
        r = field.rates
        parts = []
        for title, rate in (
            ("flags corrected by humans", r.corrected),
            ("humans alone", r.human),
            ("flag rate", r.flag_rate),
        ):
            shown = (
                f"not measurable ({rate.reason})"
                if rate.estimate is None
                else f"{rate.estimate:.1%}{_interval(rate.low, rate.high)}"
            )
            parts.append(f"{title}: {shown}")
        label = "measured" if r.corrected.measurable else "not measurable"
        out.append((f"error_rate:{field.path}", r.corrected.estimate, label, "; ".join(parts)))
    return out


async def publish_figures(
    phoenix: PhoenixUploader,
    *,
    project: str,
    span_name: str,
    monitor: str,
    report: Mapping[str, Any],
    annotations: Sequence[tuple[str, float | None, str, str]],
    api_key: str | None = None,
) -> PublishedFigures:
    """Record one measurement as a span of ``project`` with its figures as annotations.

    Raises:
        PhoenixUnavailableError: The span or its annotations could not be stored.
    """
    tracing = configure_tracing(project, phoenix.base_url, api_key=api_key)
    try:
        attributes = {
            SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.EVALUATOR.value,
            SpanAttributes.INPUT_VALUE: json.dumps({"monitor": monitor}),
            SpanAttributes.INPUT_MIME_TYPE: "application/json",
            SpanAttributes.OUTPUT_VALUE: json.dumps(report),
            SpanAttributes.OUTPUT_MIME_TYPE: "application/json",
        }
        with tracing.tracer.start_as_current_span(span_name, attributes=attributes) as span:
            context = span.get_span_context()
            span_id, trace_id = format(context.span_id, "016x"), format(context.trace_id, "032x")
    finally:
        tracing.shutdown()
    records = [
        SpanAnnotationRecord(
            span_id=span_id,
            name=name,
            score=score,
            label=label,
            explanation=explanation,
            identifier=f"stateval:{monitor}",
        )
        for name, score, label, explanation in annotations
    ]
    stored = await phoenix.post_span_annotations(records) if records else 0
    return PublishedFigures(span_id, trace_id, stored)
