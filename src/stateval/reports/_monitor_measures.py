"""Markdown reports of a monitor measuring itself: ``stateval traces mutate`` (recall on state
mutants) and ``stateval traces rates`` (production error rates per field)."""

from __future__ import annotations

from collections.abc import Sequence

from stateval.calibration import RateEstimate
from stateval.traces import FieldRates, MonitorRecall, RecallTally

__all__ = ["rates_markdown", "recall_markdown"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _recall(tally: RecallTally) -> tuple[str, str]:
    if tally.recall is None or tally.interval is None:
        return "not measurable", "no mutant applied"
    low, high = tally.interval
    return f"{tally.recall:.1%}", f"{low:.1%} - {high:.1%}"


def recall_markdown(monitor: str, recall: MonitorRecall) -> str:
    """The recall of a monitor's checks per operator and check, and its survivors."""
    rate = recall.original_flag_rate
    lines = [
        f"# Monitor recall: {_cell(monitor)}",
        "",
        f"{recall.calls} calls sampled; flag rate on the originals: "
        + ("not measurable" if rate is None else f"{rate:.1%}")
        + f" of {recall.fields_checked} checked fields.",
        "",
        "| operator | applied | caught | recall | 95% interval |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, tally in recall.operators.items():
        lines.append(
            f"| {name} | {tally.applied} | {tally.caught} | {' | '.join(_recall(tally))} |"
        )
    lines += ["", "| check | caught | recall | 95% interval |", "|---|---:|---:|---:|"]
    for name, tally in recall.checks.items():
        lines.append(f"| {name} | {tally.caught} | {' | '.join(_recall(tally))} |")
    if recall.survivors:
        lines += ["", "## Survivors", ""]
        lines += [
            f"- `{s.operator}` on `{_cell(s.path)}` ({s.applied} calls): {_cell(s.suggestion)}"
            for s in recall.survivors
        ]
    return "\n".join(lines) + "\n"


def _estimate(rate: RateEstimate) -> str:
    if rate.estimate is None:
        return f"not measurable: {_cell(rate.reason or '')}"
    if rate.low is None or rate.high is None:
        return f"{rate.estimate:.1%}"
    return f"{rate.estimate:.1%} ({rate.low:.1%} - {rate.high:.1%})"


def rates_markdown(
    monitor: str, rates: Sequence[FieldRates], spans: int, reviewed: int, unreviewed: int
) -> str:
    """Each field's production error rate three ways, worst first."""
    lines = [
        f"# Production error rates: {_cell(monitor)}",
        "",
        f"{spans} spans checked; {reviewed} reviewed cases"
        + (f", {unreviewed} drafts not reviewed" if unreviewed else "")
        + ". 95% intervals.",
        "",
        "| field | flag rate | humans alone | flags corrected by humans |",
        "|---|---:|---:|---:|",
    ]
    for field in rates:
        r = field.rates
        lines.append(
            f"| `{_cell(field.path)}` | {_estimate(r.flag_rate)} | {_estimate(r.human)} "
            f"| {_estimate(r.corrected)} |"
        )
    return "\n".join(lines) + "\n"
