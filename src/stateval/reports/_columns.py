"""The per-field table's columns, shared by the terminal and Markdown reports."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stateval.run import FieldRow

__all__ = ["field_columns", "pct"]


def pct(value: float | None) -> str:
    """``0.5`` as ``50.0%``; None as ``n/a``."""
    return "n/a" if value is None else f"{value:.1%}"


def field_columns(rows: Sequence[FieldRow]) -> list[tuple[str, Callable[[FieldRow], str]]]:
    """The columns of the per-field table (shared by the terminal and Markdown reports):
    confusion counts, then precision, recall, F1, DST per-slot accuracy and accuracy; the
    both-absent count only with a slot schema, the mean score only when a field is scored by
    similarity."""
    columns: list[tuple[str, Callable[[FieldRow], str]]] = [
        ("n", lambda r: str(r.n)),
        ("matching", lambda r: str(r.matching)),
        ("mismatched", lambda r: str(r.mismatched)),
        ("missing", lambda r: str(r.missing)),
        ("extra", lambda r: str(r.extra)),
    ]
    if any(r.absent is not None for r in rows):
        columns.append(("absent", lambda r: "-" if r.absent is None else str(r.absent)))
    columns += [
        ("precision", lambda r: pct(r.precision)),
        ("recall", lambda r: pct(r.recall)),
        ("F1", lambda r: pct(r.f1)),
        ("slot acc", lambda r: pct(r.slot_accuracy)),
    ]
    if any(abs(r.mean_score - r.slot_accuracy) > 1e-12 for r in rows):
        columns.append(("score", lambda r: f"{r.mean_score:.3f}"))
    columns.append(("accuracy", _accuracy))
    return columns


def _accuracy(row: FieldRow) -> str:
    text = pct(row.accuracy) if row.n_expected else "-"
    if row.minimum is not None:
        text += f" (min {row.minimum:.0%})"
    return text
