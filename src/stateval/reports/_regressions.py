"""The HTML report's regression section: a candidate run against its baseline.

Built from a `stateval.regressions.RunDiff` (``stateval run --baseline``, ``stateval diff``):
the two runs and their unpaired cases, the per-field verdicts worst first (exact McNemar,
Holm-corrected), the run-level metrics with their paired bootstrap intervals, and the Phoenix
compare pages of the regressed fields with the filter to paste into them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from stateval.reports._atomic import write_atomically
from stateval.reports._html import (
    HtmlSection,
    _e,
    _page,
    _pct,
    _phoenix_link,
    _table,
    html_report,
)

if TYPE_CHECKING:
    from stateval.regressions import FieldDiff, MetricDiff, RunDiff
    from stateval.run import RunSummary, ThresholdResult

__all__ = ["add_diff", "diff_html_report", "regression_section", "write_diff_html_report"]

_SHOWN_CASES = 10
_VERDICT_CLASS = {
    "regressed": "bad",
    "improved": "good",
    "no evidence": "muted",
    "not judged": "muted",
}


def _signed(value: float | None, *, seconds: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value * 1000:+.1f}ms" if seconds else f"{value * 100:+.1f}pt"


def _verdict(verdict: str) -> str:
    return f'<span class="{_VERDICT_CLASS[verdict]}">{_e(verdict)}</span>'


def _ids(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:_SHOWN_CASES])
    return shown + (f" and {len(ids) - _SHOWN_CASES} more" if len(ids) > _SHOWN_CASES else "")


def _runs(diff: RunDiff) -> str:
    base = f"<code>{_e(diff.base)}</code> " + _phoenix_link(diff.base_url, "(in Phoenix)")
    cand = f"<code>{_e(diff.cand)}</code> " + _phoenix_link(diff.cand_url, "(in Phoenix)")
    counts = [
        f"<b>{diff.n_paired}</b> paired cases",
        f"<b>{len(diff.added)}</b> added (only in the candidate)",
        f"<b>{len(diff.removed)}</b> removed (only in the baseline)",
    ]
    parts = [f"<p>Baseline {base}→ candidate {cand}</p>", f"<p>{', '.join(counts)}.</p>"]
    for what, ids in (("Added", diff.added), ("Removed", diff.removed)):
        if ids:
            parts.append(f'<p class="muted">{what}: {_e(_ids(ids))}</p>')
    if diff.base_repetitions != 1 or diff.cand_repetitions != 1:
        parts.append(
            f"<p>Repetitions: baseline {diff.base_repetitions}, candidate "
            f"{diff.cand_repetitions}; a case's correctness is its mean over them.</p>"
        )
    return "".join(parts)


def _field_row(f: FieldDiff) -> tuple[str, ...]:
    path = _e(f.path)
    name = f'<a href="{_e(f.compare_url)}">{path}</a>' if f.compare_url else path
    return (
        name,
        str(f.n),
        str(f.improved),
        str(f.regressed),
        str(f.unchanged),
        _pct(f.base_accuracy),
        _pct(f.cand_accuracy),
        _signed(f.change),
        f"{f.p_value:.3g}",
        f"{f.p_adjusted:.3g}",
        _verdict(f.verdict),
    )


def _metric_value(m: MetricDiff, value: float | None) -> str:
    if m.name == "mean_time":
        return "n/a" if value is None else f"{value * 1000:.1f}ms"
    return _pct(value)


def _metric_row(m: MetricDiff) -> tuple[str, ...]:
    seconds = m.name == "mean_time"
    interval = "n/a"
    if m.interval is not None:
        low = _signed(m.interval.low, seconds=seconds)
        interval = f"[{low}, {_signed(m.interval.high, seconds=seconds)}]"
    return (
        _e(m.name),
        str(m.n),
        _metric_value(m, m.base),
        _metric_value(m, m.cand),
        _signed(m.change, seconds=seconds),
        interval,
        _verdict(m.verdict),
    )


def _links(diff: RunDiff) -> str:
    linked = [f for f in diff.regressed_fields if f.compare_url]
    if not linked:
        return ""
    items = "".join(
        f'<li><a href="{_e(f.compare_url)}">{_e(f.path)}: the two experiments side by side</a>'
        + (f"<br>filter: <code>{_e(f.filter)}</code>" if f.filter else "")
        + "</li>"
        for f in linked
    )
    return (
        "<h3>In Phoenix</h3><p>Each regressed field's compare page, baseline first. Phoenix "
        "does not read the filter from the link yet: paste it into the page's filter box to "
        f"see exactly the cases that regressed.</p><ul>{items}</ul>"
    )


def regression_section(diff: RunDiff) -> HtmlSection:
    """The HTML report's section for a diff against a baseline.

    Args:
        diff: The candidate run against its baseline (`stateval.regressions.diff_runs`).

    Returns:
        A section for `html_report(summary, sections=[...])`, anchored ``regressions``.
    """
    regressed, improved = len(diff.regressed_fields), len(diff.improved_fields)
    verdict = (
        f'<p><span class="{"bad" if regressed else "good"}">{regressed} field(s) regressed, '
        f"{improved} improved</span> (exact McNemar on the paired cases, Holm-corrected across "
        f"the {diff.tested_fields} testable field(s) (Tarone), alpha {diff.alpha}).</p>"
    )
    head = (
        "field",
        "n paired",
        "improved",
        "regressed",
        "unchanged",
        "baseline",
        "candidate",
        "change",
        "McNemar p",
        "Holm p",
        "verdict",
    )
    parts = [_runs(diff), verdict]
    if diff.fields:
        parts.append(_table(head, map(_field_row, diff.fields), raw=True))
    else:
        parts.append('<p class="muted">No field was evaluated in the paired cases.</p>')
    if diff.metrics:
        parts.append(
            f"<h3>Run metrics</h3><p>Candidate minus baseline with a paired bootstrap 95% "
            f"interval over the cases (seed {diff.seed}, {diff.resamples} resamples); a metric "
            "regressed when the whole interval is on the bad side of zero.</p>"
        )
        metric_head = ("metric", "n", "baseline", "candidate", "change", "95% interval", "verdict")
        parts.append(_table(metric_head, map(_metric_row, diff.metrics), raw=True))
    parts.append(_links(diff))
    return HtmlSection("Regressions against the baseline", "".join(parts), anchor="regressions")


def diff_html_report(diff: RunDiff) -> str:
    """A diff on its own (``stateval diff --report-html``): one self-contained page."""
    section = regression_section(diff)
    verdict = "failed" if diff.regressed_fields else "passed"
    label = "REGRESSED" if diff.regressed_fields else "NO REGRESSION"
    return _page(
        f"stateval diff: {diff.base} -> {diff.cand}",
        f'stateval diff <span class="verdict {verdict}">{label}</span>',
        "",
        [(section.id, section.title, section.body)],
    )


def write_diff_html_report(diff: RunDiff, path: str | Path) -> None:
    """Write `diff_html_report` to ``path``."""
    write_atomically(path, diff_html_report(diff))


def add_diff(path: Path, diff: RunDiff, gate: ThresholdResult, summary: RunSummary) -> None:
    """Write a run's HTML report again with the diff against its baseline as a section."""
    write_atomically(path, html_report(summary, sections=[regression_section(diff)]))
