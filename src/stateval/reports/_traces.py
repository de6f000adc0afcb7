"""Reports of a monitor run (``stateval traces score``): terminal, JSON and Markdown.

Each shows the flag rate per field, worst first, with links to example spans in Phoenix
(``<phoenix>/redirects/spans/<span id>`` opens the span in its trace), the spans read, scored,
flagged and unreadable, and the thresholds not met.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from stateval.reports._atomic import write_atomically
from stateval.traces import TracesSummary

__all__ = ["print_traces_summary", "traces_markdown", "write_traces_json", "write_traces_markdown"]

SpanLink = Callable[[str], str]


def span_link(base_url: str) -> SpanLink:
    """Span id -> where it opens in the Phoenix UI."""
    base = base_url.rstrip("/")
    return lambda span_id: f"{base}/redirects/spans/{span_id}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _checks(by_check: dict[str, int] | object) -> str:
    if not isinstance(by_check, dict):
        return ""
    return ", ".join(f"{name} {count}" for name, count in sorted(by_check.items()))


def print_traces_summary(
    summary: TracesSummary, console: Console, base_url: str, *, max_fields: int = 25
) -> None:
    """The terminal summary of a monitor run."""
    t = summary.tally
    link = span_link(base_url)
    console.print(
        f"spans: {t.read} read, {t.scored} scored, {t.flagged_spans} flagged "
        f"({_pct(None if not t.scored else t.flagged_spans / t.scored)}), "
        f"{t.unmapped} unreadable; {t.annotations} annotations stored"
        + (f"; {t.judge_calls} judge calls" if t.judge_calls else "")
    )
    for span_id, reason in t.unmapped_examples[:3]:
        console.print(f"  unreadable {span_id}: {reason}")
    if summary.fields:
        table = Table(title="flag rate per field (worst first)", title_justify="left")
        for column in ("field", "flagged", "checked", "rate", "checks", "example"):
            table.add_column(column, overflow="fold")
        for row in summary.fields[:max_fields]:
            example = link(row.examples[0]) if row.examples else ""
            table.add_row(
                row.path,
                str(row.flagged),
                str(row.checked),
                _pct(row.flag_rate),
                _checks(dict(row.by_check)),
                example,
            )
        console.print(table)
        if len(summary.fields) > max_fields:
            console.print(f"... {len(summary.fields) - max_fields} more fields (--report-json)")
    for failure in summary.failures:
        console.print(f"threshold not met: {failure}")
    console.print("PASSED" if summary.passed else "FAILED")


def write_traces_json(summary: TracesSummary, path: str | Path, base_url: str) -> None:
    """`TracesSummary.to_dict` with span links, as indented JSON."""
    data = summary.to_dict()
    link = span_link(base_url)
    for row in data["fields"]:
        row["example_links"] = [link(s) for s in row["examples"]]
    write_atomically(path, json.dumps(data, indent=2) + "\n")


def traces_markdown(summary: TracesSummary, base_url: str) -> str:
    """The Markdown report of a monitor run."""
    t = summary.tally
    link = span_link(base_url)
    lines = [
        f"## Monitor: {'passed' if summary.passed else 'FAILED'}",
        "",
        f"{t.read} spans read, {t.scored} scored, {t.flagged_spans} flagged, "
        f"{t.unmapped} unreadable; span pass rate {_pct(summary.span_pass_rate)}, "
        f"field pass rate {_pct(summary.field_pass_rate)}.",
        "",
    ]
    lines += [f"- threshold not met: {failure}" for failure in summary.failures]
    if summary.fields:
        lines += [
            "",
            "| field | flagged | checked | rate | checks | examples |",
            "|---|---:|---:|---:|---|---|",
        ]
        for row in summary.fields:
            examples = " ".join(f"[{s[:8]}]({link(s)})" for s in row.examples)
            path = row.path.replace("|", "\\|")
            lines.append(
                f"| `{path}` | {row.flagged} | {row.checked} | {_pct(row.flag_rate)} "
                f"| {_checks(dict(row.by_check))} | {examples} |"
            )
    return "\n".join(lines) + "\n"


def write_traces_markdown(summary: TracesSummary, path: str | Path, base_url: str) -> None:
    """Write `traces_markdown` to ``path``."""
    write_atomically(path, traces_markdown(summary, base_url))
