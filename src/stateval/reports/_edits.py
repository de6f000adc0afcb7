"""The edit-operation section of the terminal, Markdown and HTML reports: the pooled matrix
(expected operation by row, actual by column; a cell reads ``n`` or ``n (k wrong)``), the named
errors, the three rates, and the fields with the most update errors."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from stateval.compare import EDIT_OPS, EditCounts, EditMatrix, EditOp
from stateval.run import RunSummary

__all__ = ["edit_field_rows", "edit_matrix_rows", "edit_rate_rows", "markdown_edits", "print_edits"]

_FIELDS_SHOWN = 10
FIELD_COLUMNS = ("field", "errors", "update propagation", "staleness", "deletion success", "top")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def edit_matrix_rows(counts: EditCounts) -> tuple[list[str], list[list[str]]]:
    """Columns and rows of the matrix: one row per expected operation that occurred."""
    columns = ["expected \\ actual", *(op.value for op in EDIT_OPS), "right"]
    rows: list[list[str]] = []
    for e in EDIT_OPS:
        n_expected = counts.expected(e)
        if not n_expected:
            continue
        cells = [e.value]
        for a in EDIT_OPS:
            n = counts.cells.get((e, a), 0)
            wrong = counts.wrong.get((e, a), 0)
            cells.append("" if not n else f"{n} ({wrong} wrong)" if wrong else str(n))
        cells.append(f"{counts.right(e)}/{n_expected}")
        rows.append(cells)
    return columns, rows


def edit_rate_rows(counts: EditCounts) -> list[tuple[str, str]]:
    """The pooled rates and errors as (label, value) rows."""
    n_updates, n_deletes = counts.expected(EditOp.UPDATE), counts.expected(EditOp.DELETE)
    errors = ", ".join(f"{name} {n}" for name, n in counts.errors.items()) or "none"
    return [
        ("update propagation", f"{_pct(counts.update_propagation_rate)} of {n_updates}"),
        ("staleness", f"{_pct(counts.staleness_rate)} of {n_updates}"),
        ("deletion success", f"{_pct(counts.deletion_success)} of {n_deletes}"),
        ("update errors", errors),
    ]


def edit_field_rows(matrix: EditMatrix, limit: int = _FIELDS_SHOWN) -> list[list[str]]:
    """The fields with update errors, most first (`FIELD_COLUMNS`)."""
    rows: list[list[str]] = []
    for path, c in matrix.fields.items():
        if not c.n_errors or len(rows) >= limit:
            continue
        top = max(c.errors.items(), key=lambda kv: kv[1])[0]
        rows.append(
            [
                path,
                str(c.n_errors),
                _pct(c.update_propagation_rate),
                _pct(c.staleness_rate),
                _pct(c.deletion_success),
                top,
            ]
        )
    return rows


def print_edits(summary: RunSummary, console: Console) -> None:
    """Print the edit-operation section (nothing when no field was counted): the matrix and
    the rates; the fields are in the Markdown, HTML and JSON reports."""
    matrix = summary.edits
    if matrix is None or not matrix.pooled.n:
        return
    columns, rows = edit_matrix_rows(matrix.pooled)
    mode = "" if summary.episodes is None else f", {summary.episodes.mode.replace('_', '-')}"
    table = Table(title=f"edit operations (fields{mode})", title_justify="left", show_edge=False)
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right")
    for cells in rows:
        table.add_row(*cells)
    console.print(table)
    rates = Table.grid(padding=(0, 2))
    rates.add_column(style="bold")
    rates.add_column()
    for label, value in edit_rate_rows(matrix.pooled):
        rates.add_row(label, value)
    console.print(rates)


def markdown_edits(summary: RunSummary) -> list[str]:
    """The edit-operation section of the Markdown report, as lines."""
    matrix = summary.edits
    if matrix is None or not matrix.pooled.n:
        return []
    columns, rows = edit_matrix_rows(matrix.pooled)
    mode = "" if summary.episodes is None else f", {summary.episodes.mode.replace('_', '-')}"
    lines = ["", f"**Edit operations** (expected by row, actual by column{mode})", ""]
    lines += ["| " + " | ".join(columns) + " |", "|---|" + "---:|" * (len(columns) - 1)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    lines += ["", "| rate | value |", "|---|---|"]
    lines += [f"| {label} | {value} |" for label, value in edit_rate_rows(matrix.pooled)]
    field_rows = edit_field_rows(matrix)
    if field_rows:
        lines += ["", "| " + " | ".join(FIELD_COLUMNS) + " |", "|---|" + "---:|" * 4 + "---|"]
        lines += ["| " + " | ".join(cells) + " |" for cells in field_rows]
    return lines
