"""The terminal summary of a run (rich)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from stateval.reports._columns import field_columns
from stateval.reports._edits import print_edits
from stateval.reports._episodes import MODE_NAMES, print_episodes
from stateval.reports._quality import quality_lines
from stateval.run import FieldRow, RunSummary

__all__ = ["print_summary"]

_SHOWN_ERRORS = 5
"""Failed cases listed by name in the terminal summary."""


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


DROP_ORDER = (
    "score",
    "absent",
    "extra",
    "missing",
    "mismatched",
    "matching",
    "slot acc",
    "recall",
    "precision",
)
"""Columns of the per-field table left out, in this order, until it fits the terminal; field,
n, F1 and accuracy always stay (the JSON report and a wider terminal have them all)."""

_FIELD_WIDTH = 24
"""Field names longer than this wrap onto a second line in a narrow table (never cut)."""


def _field_table(rows: Sequence[FieldRow], limit: int, width: int) -> tuple[Table, list[str]]:
    """The per-field table fitted to ``width`` columns, and the columns it left out."""
    shown = rows[:limit]
    columns = field_columns(rows)
    cells = [[cell(r) for r in shown] for _, cell in columns]
    natural = [
        max([len(name), *map(len, values)])
        for (name, _), values in zip(columns, cells, strict=True)
    ]
    names = max([len("field"), *(len(r.path) for r in shown)])

    def needed(keep: list[int]) -> int:  # each column: its text, 2 of padding, 1 separator
        return min(names, _FIELD_WIDTH) + 2 + sum(natural[i] + 3 for i in keep)

    keep = list(range(len(columns)))
    dropped: list[str] = []
    for name in DROP_ORDER:
        if needed(keep) <= width:
            break
        index = next((i for i in keep if columns[i][0] == name), None)
        if index is not None:
            keep.remove(index)
            dropped.append(name)
    table = Table(title="fields, worst first (by F1)", title_justify="left", show_edge=False)
    table.add_column("field", overflow="fold", min_width=min(names, _FIELD_WIDTH))
    for i in keep:
        table.add_column(columns[i][0], justify="right", no_wrap=True)
    for n, row in enumerate(shown):
        style = None if row.passed else "red"
        table.add_row(Text(row.path), *(cells[i][n] for i in keep), style=style)
    return table, dropped


def _slice_table(key: str, groups: dict[str, dict[str, Any]]) -> Table:
    table = Table(title=Text(f"by {key}"), title_justify="left", show_edge=False)
    table.add_column(Text(key.removeprefix("metadata.")))
    for name in ("cases", "precision", "recall", "F1", "joint goal", "slot acc"):
        table.add_column(name, justify="right")
    for value, m in groups.items():
        table.add_row(
            Text(value),
            str(m["n_cases"]),
            _pct(m["value_precision"]),
            _pct(m["value_recall"]),
            _pct(m["value_f1"]),
            _pct(m["joint_goal_accuracy"]),
            _pct(m["slot_accuracy"]),
        )
    return table


def print_summary(summary: RunSummary, console: Console, *, max_fields: int = 25) -> None:
    """Print headline metrics, the per-field table (worst first), thresholds and the verdict.

    Args:
        summary: The run.
        console: Where to print.
        max_fields: Rows of the field table shown (the worst ones); the rest are counted.
    """
    console.print()
    title = Text.assemble(  # user- and model-derived text is printed as Text: no markup
        ("stateval ", "bold"), (summary.suite_name, "bold cyan"), f"  run {summary.run_id}"
    )
    console.print(title)
    cases = f"{summary.n_cases} cases"
    if not summary.complete:
        cases += f" of {summary.n_planned} planned (incomplete: resume with --resume)"
    errors = f", {summary.n_errors} mutator errors" if summary.n_errors else ", no mutator errors"
    console.print(f"{cases}{errors}, {summary.mean_time * 1000:.1f} ms per call")
    failed = [c for c in summary.failing if c.result.error]
    for case in failed[:_SHOWN_ERRORS]:
        line = f"  case {case.case_id}: {case.result.error_type or 'error'}: {case.result.error}"
        console.print(Text(line, style="red"), soft_wrap=True)
    shown = min(len(failed), _SHOWN_ERRORS)
    if summary.n_errors > shown:
        console.print(f"  ... and {summary.n_errors - shown} more failed cases (see --report-json)")
    headline = Table.grid(padding=(0, 2))
    headline.add_column(style="bold")
    headline.add_column(justify="right")
    headline.add_row("overall match rate", _pct(summary.overall_match_rate))
    headline.add_row("accuracy (expected fields)", _pct(summary.accuracy))
    if summary.mean_weighted_state_accuracy is not None:
        headline.add_row("weighted state accuracy", _pct(summary.mean_weighted_state_accuracy))
    if summary.value_f1 is not None:
        prf = f"{_pct(summary.value_precision)} / {_pct(summary.value_recall)} / "
        headline.add_row("value precision / recall / F1", prf + _pct(summary.value_f1))
    if summary.joint_goal_accuracy is not None:
        headline.add_row("joint goal accuracy", _pct(summary.joint_goal_accuracy))
        headline.add_row("slot accuracy", _pct(summary.slot_accuracy))
    for name, value in summary.convention_figures().items():
        headline.add_row(name.replace("_", " "), _pct(value))
    console.print(headline)
    if summary.fields:
        table, dropped = _field_table(summary.fields, max_fields, console.width)
        console.print(table)
        if dropped:
            left_out = ", ".join(dropped)
            console.print(
                Text(f"  left out at this width: {left_out} (see --report-json)", style="dim")
            )
        hidden = len(summary.fields) - max_fields
        if hidden > 0:
            console.print(f"  ... and {hidden} more fields (see --report-json)")
    for key, groups in summary.slices_dict().items():
        console.print(_slice_table(key, groups))
    print_edits(summary, console)
    print_episodes(summary, console)
    for line in quality_lines(summary):
        console.print(Text(line), soft_wrap=True)
    for threshold in summary.thresholds:
        style = "green" if threshold.passed else "bold red"
        console.print(Text(f"threshold {threshold.describe()}", style=style))
    for run in summary.side_by_side():  # with --mode both, each mode's experiment
        if run.experiment_url:
            mode = f" ({MODE_NAMES.get(run.mode, run.mode)})" if run.mode else ""
            line = f"Phoenix experiment{mode}: {run.experiment_url}"
            console.print(Text(line), soft_wrap=True)
    if not summary.thresholds:
        console.print("no thresholds set: the verdict only says every case ran", style="yellow")
    verdict = "PASSED" if summary.passed else "FAILED"
    console.print(Text(verdict, style="bold green" if summary.passed else "bold red"))
