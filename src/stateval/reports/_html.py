"""The HTML report (``--report-html``): one self-contained page, charts as inline SVG.

Nothing is fetched when the page is viewed: no scripts, fonts or stylesheets from elsewhere;
the only links are into Phoenix. Sections: verdict and headline metrics, thresholds, fields
worst first (bar chart and table), calibration (reliability diagram, triage curve, per-field
table), judge agreement, any extra `HtmlSection` (regressions against a baseline, trajectories:
features that produce them pass them in), and the failing cases.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from stateval.calibration import AgreementReport, Calibration, CalibrationReport
from stateval.reports._atomic import write_atomically
from stateval.reports._charts import (
    field_accuracy_chart,
    reliability_chart,
    retention_chart,
    triage_chart,
)
from stateval.reports._edits import FIELD_COLUMNS, edit_field_rows, edit_matrix_rows, edit_rate_rows
from stateval.reports._episodes import (
    MODE_NAMES,
    episode_rows,
    mode_rows,
    retention_rows,
    turn_curve,
)
from stateval.run import RunSummary

__all__ = ["HtmlSection", "html_report", "write_html_report"]

_NUMERIC = re.compile(r"[-+]?[\d.]+(e-\d+)?(%|pt|ms)?( / [\d.]+%?)*|\[.*\]|n/a|-")
_TRIAGE_FIELDS = 4
"""Fields drawn in the triage chart besides the pooled curve (the worst calibrated)."""


@dataclass(frozen=True, slots=True)
class HtmlSection:
    """An extra section of the HTML report.

    Attributes:
        title: The section's heading.
        body: An HTML fragment (trusted: escape any text from users or mutators with
            `html.escape`; inline SVG is welcome, nothing may load from the network).
        anchor: The id of the section (default: from the title).
    """

    title: str
    body: str
    anchor: str | None = None

    @property
    def id(self) -> str:
        """The section's anchor."""
        if self.anchor:
            return self.anchor
        return "".join(c if c.isalnum() else "-" for c in self.title.lower()).strip("-")


_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1d1d1f; background: #fafafa; }
main { max-width: 1100px; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { margin-top: 2rem; font-size: 1.2rem; }
.verdict { display: inline-block; padding: .1rem .6rem; border-radius: .3rem; color: #fff;
           font-weight: 600; } .passed { background: #27ae60; } .failed { background: #c0392b; }
.tiles { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; }
.tile { background: #fff; border: 1px solid #ddd; border-radius: .4rem; padding: .6rem .9rem;
        min-width: 9rem; } .tile b { display: block; font-size: 1.35rem; }
.tile span { color: #666; font-size: .85rem; }
table { border-collapse: collapse; background: #fff; margin: .5rem 0; }
th, td { border: 1px solid #e0e0e0; padding: .25rem .55rem; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; } th { background: #f0f0f0; }
.bad { color: #c0392b; font-weight: 600; } .muted { color: #777; } .good { color: #27ae60; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
svg.chart { max-width: 100%; height: auto; background: #fff; border: 1px solid #eee; }
code { font-size: .9em; } nav a { margin-right: .8rem; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _tile(label: str, value: str) -> str:
    return f'<div class="tile"><b>{_e(value)}</b><span>{_e(label)}</span></div>'


def _cell(text: str, raw: bool) -> str:
    numeric = ' class="n"' if _NUMERIC.fullmatch(text) else ""
    return f"<td{numeric}>{text if raw else _e(text)}</td>"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], *, raw: bool = False) -> str:
    cells = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(_cell(c, raw) for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


def _phoenix_link(url: str | None, text: str = "open in Phoenix") -> str:
    return "" if not url else f'<a href="{_e(url)}">{_e(text)}</a>'


def _headline(summary: RunSummary) -> str:
    tiles = [
        _tile("overall match rate", _pct(summary.overall_match_rate)),
        _tile("accuracy (expected fields)", _pct(summary.accuracy)),
    ]
    if summary.joint_goal_accuracy is not None:
        tiles.append(_tile("joint goal accuracy", _pct(summary.joint_goal_accuracy)))
        tiles.append(_tile("slot accuracy", _pct(summary.slot_accuracy)))
    for name, value in summary.convention_figures().items():
        tiles.append(_tile(name, _pct(value)))
    tiles.append(_tile("cases", f"{summary.n_cases}"))
    tiles.append(_tile("mutator errors", f"{summary.n_errors}"))
    overall = summary.calibration.overall if summary.calibration is not None else None
    if overall is not None and overall.measurable:
        tiles.append(_tile("calibration error (ECE)", _num(overall.ece)))
        tiles.append(_tile("AUROC of confidence", _num(overall.auroc)))
    if summary.agreement is not None:
        tiles.append(_tile("judge kappa vs humans", _num(summary.agreement.overall.kappa)))
    return f'<div class="tiles">{"".join(tiles)}</div>'


def _thresholds(summary: RunSummary) -> str:
    if not summary.thresholds:
        return '<p class="muted">No thresholds set: the verdict only says every case ran.</p>'
    rows = [
        (
            f'<span class="{"" if t.passed else "bad"}">{_e(t.name)}</span>',
            _e(_num(t.value)),
            _e(("≥ " if t.kind == "min" else "≤ ") + f"{t.limit:.3f}"),
            "ok" if t.passed else '<span class="bad">FAILED</span>',
        )
        for t in summary.thresholds
    ]
    return _table(("threshold", "value", "limit", ""), rows, raw=True)


def _fields(summary: RunSummary, max_fields: int) -> str:
    if not summary.fields:
        return '<p class="muted">No fields were compared.</p>'
    rows = summary.fields[:max_fields]
    parts = [field_accuracy_chart(rows)]
    if len(summary.fields) > max_fields:
        hidden = len(summary.fields) - max_fields
        parts.append(f'<p class="muted">{hidden} more fields are in the table below.</p>')
    parts.append(
        _table(
            ("field", "n", "wrong", "mismatched", "missing", "extra", "accuracy", "minimum"),
            (
                (
                    r.path,
                    str(r.n),
                    str(r.errors),
                    str(r.mismatched),
                    str(r.missing),
                    str(r.extra),
                    _pct(r.accuracy) if r.n_expected else "-",
                    "" if r.minimum is None else _pct(r.minimum),
                )
                for r in summary.fields
            ),
        )
    )
    return "".join(parts)


def _calibration_row(c: Calibration) -> tuple[str, ...]:
    if not c.measurable:
        return (c.path, str(c.n), str(c.n_wrong), f"not measurable: {c.reason}", "", "", "", "")
    caught = " / ".join(_pct(p.caught) for p in c.triage)
    return (
        c.path,
        str(c.n),
        str(c.n_wrong),
        _num(c.brier),
        _num(c.ece),
        _num(c.ece_mass),
        _num(c.auroc),
        caught,
    )


def _calibration(report: CalibrationReport | None) -> str:
    if report is None:
        return '<p class="muted">No calibration was computed for this run.</p>'
    overall = report.overall
    head = (
        "field",
        "values",
        "wrong",
        "Brier",
        "ECE (equal width)",
        "ECE (equal mass)",
        "AUROC",
        "errors caught reviewing 5% / 10% / 20%",
    )
    parts = [
        "<p>Is a value the mutator is sure of more often right? Right means the value matches "
        "under the field's policy with the confidence ignored; a value the mutator set but was "
        "not expected is wrong; a value it left out has no confidence and is not counted "
        f"({overall.n_missing} such).</p>"
    ]
    if overall.measurable:
        # a field holding every value would only hide the pooled curve
        fields = [f for f in report.fields if f.measurable and f.n < overall.n]
        fields = fields[:_TRIAGE_FIELDS]
        parts.append(
            '<div class="charts">'
            + reliability_chart(overall)
            + triage_chart([overall, *fields])
            + "</div>"
        )
        parts.append(
            "<p>Reviewing the lowest-confidence "
            + ", ".join(
                f"{p.fraction:.0%} ({p.n_reviewed} values) catches {p.caught:.0%}"
                for p in overall.triage
            )
            + f" of the {overall.n_wrong} wrong values.</p>"
        )
    else:
        parts.append(f'<p class="bad">Calibration is not measurable: {_e(overall.reason)}.</p>')
    parts.append(_table(head, [_calibration_row(overall), *map(_calibration_row, report.fields)]))
    return "".join(parts)


def _agreement(report: AgreementReport | None, experiment_url: str | None) -> str:
    if report is None:
        return (
            '<p class="muted">No case carries human verdicts on judged fields '
            '(<code>human: {"path": "same" | "different"}</code>).</p>'
        )
    head = ("field", "verdicts", "kappa", "agreement", "TPR", "TNR", "TP", "FN", "FP", "TN")
    rows = [
        (
            a.path,
            str(a.n),
            _num(a.kappa),
            _pct(a.observed),
            _pct(a.tpr),
            _pct(a.tnr),
            str(a.tp),
            str(a.fn),
            str(a.fp),
            str(a.tn),
        )
        for a in (report.overall, *report.fields)
    ]
    parts = [
        "<p>The LLM judge's verdicts against human verdicts; <em>same</em> is the positive "
        "class (TPR: humans say same and so does the judge; TNR: likewise for different). "
        + _phoenix_link(experiment_url, "The judge's verdicts in Phoenix.")
        + "</p>",
        _table(head, rows),
    ]
    if report.disagreements:
        parts.append(f"<h3>{len(report.disagreements)} disagreements</h3>")
        parts.append(
            _table(
                ("case", "field", "expected", "actual", "human", "judge", "judge's reason"),
                (
                    (
                        d.case_id,
                        d.path,
                        repr(d.expected),
                        repr(d.actual),
                        "same" if d.human else "different",
                        "same" if d.judge else "different",
                        d.explanation,
                    )
                    for d in report.disagreements
                ),
            )
        )
    if report.not_judged:
        parts.append(
            f'<p class="muted">{len(report.not_judged)} human verdicts had no judge verdict '
            "to compare: "
            + _e("; ".join(f"{c} {p} ({why})" for c, p, why in report.not_judged[:10]))
            + ("…" if len(report.not_judged) > 10 else "")
            + "</p>"
        )
    return "".join(parts)


def _failing(summary: RunSummary, max_cases: int) -> str:
    failing = summary.failing  # the first failing cases, kept by the run's running counts
    if not failing:
        return "<p>Every case matched.</p>"
    rows = []
    for score in failing[:max_cases]:
        if not score.ok:
            what = f"mutator error ({score.result.error_type}): {score.result.error}"
        else:
            wrong = [f"{f.path} {f.status.value}" for f in score.comparison.fields if not f.matched]
            what = ", ".join(wrong + [f"{c.name} failed" for c in score.failed_checks])
        rows.append((score.case_id, what, score.result.trace_id or ""))
    more = summary.n_failing - min(len(failing), max_cases)
    note = f'<p class="muted">… and {more} more.</p>' if more > 0 else ""
    return _table(("case", "what went wrong", "trace id"), rows) + note


def _episodes(summary: RunSummary) -> str:
    """The episode figures, both modes side by side when two were run, the per-turn curve."""
    assert summary.episodes is not None
    out = _table(("episodes", ""), episode_rows(summary.episodes))
    if summary.compared is not None:
        modes = [MODE_NAMES.get(str(r.mode), str(r.mode)) for r in summary.side_by_side()]
        out += _table(("", *modes), ((label, *cells) for label, cells in mode_rows(summary)))
    columns, rows = turn_curve(summary)
    out += _table(columns, rows)
    curves = [
        (MODE_NAMES.get(str(r.mode), str(r.mode)), r.episodes.retention.points)
        for r in summary.side_by_side()
        if r.episodes is not None
        and r.episodes.retention is not None
        and r.episodes.retention.points
    ]
    if curves:
        columns, rows = retention_rows(summary)
        out += "<h3>Retention by memory age</h3>" + retention_chart(curves) + _table(columns, rows)
    return out


def _edits(summary: RunSummary) -> str:
    """The edit-operation matrix, its rates and the fields with the most update errors."""
    assert summary.edits is not None
    columns, rows = edit_matrix_rows(summary.edits.pooled)
    out = _table(columns, rows) + _table(("rate", ""), edit_rate_rows(summary.edits.pooled))
    fields = edit_field_rows(summary.edits)
    return out + (_table(FIELD_COLUMNS, fields) if fields else "")


def html_report(
    summary: RunSummary,
    *,
    sections: Sequence[HtmlSection] = (),
    max_fields: int = 40,
    max_cases: int = 50,
) -> str:
    """The run as one self-contained HTML page.

    Args:
        summary: The run.
        sections: Extra sections (regressions, trajectories), placed after judge agreement.
        max_fields: Fields drawn in the bar chart (all are in the table).
        max_cases: Failing cases listed.

    Raises:
        StatevalError: matplotlib (the ``report`` extra) is not installed.
    """
    verdict = "passed" if summary.passed else "failed"
    blocks: list[tuple[str, str, str]] = [
        ("thresholds", "Thresholds", _thresholds(summary)),
        ("fields", "Fields, worst first", _fields(summary, max_fields)),
        ("calibration", "Calibration of confidences", _calibration(summary.calibration)),
        (
            "judge-agreement",
            "Judge agreement with humans",
            _agreement(summary.agreement, summary.experiment_url),
        ),
        *(
            (("edits", "Edit operations (expected by row, actual by column)", _edits(summary)),)
            if summary.edits is not None and summary.edits.pooled.n
            else ()
        ),
        *((("episodes", "Episodes", _episodes(summary)),) if summary.episodes else ()),
        *((s.id, s.title, s.body) for s in sections),
        ("failing-cases", "Failing cases", _failing(summary, max_cases)),
    ]
    cases = f"{summary.n_cases} cases" + (
        f" of {summary.n_planned} planned" if not summary.complete else ""
    )
    phoenix = _phoenix_link(summary.experiment_url, "Phoenix experiment")
    return _page(
        f"stateval: {summary.suite_name} run {summary.run_id}",
        f"stateval: {_e(summary.suite_name)} "
        f'<span class="verdict {verdict}">{verdict.upper()}</span>',
        f"<p>Run <code>{_e(summary.run_id)}</code>: {_e(cases)}, "
        f"{summary.n_errors} mutator errors, {summary.mean_time * 1000:.1f} ms per call. "
        f"{phoenix}</p>",
        blocks,
        lead=_headline(summary),
    )


def _page(
    title: str, heading: str, intro: str, blocks: Sequence[tuple[str, str, str]], *, lead: str = ""
) -> str:
    """A self-contained page: ``heading`` and ``intro`` (HTML), a navigation bar, ``lead``, then
    each (anchor, title, HTML body) block as a section."""
    nav = "".join(f'<a href="#{_e(anchor)}">{_e(name)}</a>' for anchor, name, _ in blocks)
    body = "".join(
        f'<section id="{_e(anchor)}"><h2>{_e(name)}</h2>{content}</section>'
        for anchor, name, content in blocks
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title>"
        f"<style>{_CSS}</style></head><body><main>"
        f"<h1>{heading}</h1>{intro}<nav>{nav}</nav>{lead}{body}"
        "</main></body></html>\n"
    )


def write_html_report(
    summary: RunSummary, path: str | Path, *, sections: Sequence[HtmlSection] = ()
) -> None:
    """Write `html_report` to ``path``."""
    write_atomically(path, html_report(summary, sections=sections))
