"""The Markdown report (``--markdown``), sized for a pull-request comment."""

from __future__ import annotations

from pathlib import Path

from stateval._markdown_cells import cell as _cell
from stateval._markdown_cells import code as _code
from stateval.regressions import RunDiff, markdown_diff
from stateval.reports._atomic import write_atomically
from stateval.reports._columns import field_columns
from stateval.reports._edits import markdown_edits
from stateval.reports._episodes import markdown_episodes
from stateval.reports._quality import quality_lines
from stateval.run import RunSummary, ThresholdResult

__all__ = ["add_diff", "markdown_report", "write_markdown_report"]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def markdown_report(summary: RunSummary, *, max_fields: int = 15, max_cases: int = 10) -> str:
    """The run as Markdown: verdict, headline metrics, worst fields, thresholds, failing cases."""
    verdict = "✅ passed" if summary.passed else "❌ failed"
    lines = [
        f"### stateval: {_code(summary.suite_name)} {verdict}",
        "",
        f"Run {_code(summary.run_id)}: {summary.n_cases} cases"
        + (f" of {summary.n_planned} planned" if not summary.complete else "")
        + f", {summary.n_errors} mutator errors.",
        "",
        "| metric | value |",
        "|---|---:|",
        f"| overall match rate | {_pct(summary.overall_match_rate)} |",
        f"| accuracy (expected fields) | {_pct(summary.accuracy)} |",
        *(
            [f"| weighted state accuracy | {_pct(summary.mean_weighted_state_accuracy)} |"]
            if summary.mean_weighted_state_accuracy is not None
            else []
        ),
    ]
    if summary.value_f1 is not None:
        lines.append(f"| value precision | {_pct(summary.value_precision)} |")
        lines.append(f"| value recall | {_pct(summary.value_recall)} |")
        lines.append(f"| value F1 | {_pct(summary.value_f1)} |")
    if summary.joint_goal_accuracy is not None:
        lines.append(f"| joint goal accuracy | {_pct(summary.joint_goal_accuracy)} |")
        lines.append(f"| slot accuracy | {_pct(summary.slot_accuracy)} |")
    for figure, ratio in summary.convention_figures().items():
        lines.append(f"| {figure} | {_pct(ratio)} |")
    quality = quality_lines(summary)
    if quality:
        lines += [""] + [f"- {_cell(line)}" for line in quality]
    if summary.thresholds:
        lines += ["", "**Thresholds**", ""]
        for t in summary.thresholds:
            mark = "✅" if t.passed else "❌"
            lines.append(f"- {mark} {_code(t.describe())}")
    if summary.fields:
        columns = field_columns(summary.fields)
        lines += [
            "",
            "**Fields, worst first (by F1)**",
            "",
            "| field | " + " | ".join(name for name, _ in columns) + " |",
            "|---|" + "---:|" * len(columns),
        ]
        for row in summary.fields[:max_fields]:
            cells = " | ".join(_cell(cell(row)) for _, cell in columns)
            lines.append(f"| {_code(row.path)} | {cells} |")
        if len(summary.fields) > max_fields:
            lines.append(f"\n_{len(summary.fields) - max_fields} more fields not shown._")
    for key, groups in summary.slices_dict().items():
        lines += [
            "",
            f"**By {_code(key)}**",
            "",
            "| slice | cases | precision | recall | F1 | joint goal | slot acc |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for value, m in groups.items():
            lines.append(
                f"| {_code(value)} | {m['n_cases']} | {_pct(m['value_precision'])} | "
                f"{_pct(m['value_recall'])} | {_pct(m['value_f1'])} | "
                f"{_pct(m['joint_goal_accuracy'])} | {_pct(m['slot_accuracy'])} |"
            )
    lines += markdown_edits(summary)
    lines += markdown_episodes(summary)
    failing = summary.failing
    if failing:
        lines += ["", f"<details><summary>{summary.n_failing} failing cases</summary>", ""]
        for score in failing[:max_cases]:
            if not score.ok:
                what = f"mutator error ({score.result.error_type}): {score.result.error}"
            else:
                wrong = [
                    f"{_code(f.path)} {f.status.value}"
                    for f in score.comparison.fields
                    if not f.matched
                ]
                what = ", ".join(wrong + [f"{_code(c.name)} failed" for c in score.failed_checks])
            lines.append(f"- {_code(score.case_id)}: {_cell(what)}")
        shown = min(len(failing), max_cases)
        if summary.n_failing > shown:
            lines.append(f"- ... and {summary.n_failing - shown} more")
        lines += ["", "</details>"]
    if summary.experiment_url:
        lines += ["", f"[Phoenix experiment]({summary.experiment_url})"]
    return "\n".join(lines) + "\n"


def write_markdown_report(summary: RunSummary, path: str | Path) -> None:
    """Write `markdown_report` to ``path``."""
    write_atomically(path, markdown_report(summary))


def add_diff(path: Path, diff: RunDiff, gate: ThresholdResult, summary: RunSummary) -> None:
    """Append the diff against the baseline (`markdown_diff`)."""
    before = Path(path).read_text(encoding="utf-8") if Path(path).exists() else ""
    write_atomically(path, before + "\n" + markdown_diff(diff))
