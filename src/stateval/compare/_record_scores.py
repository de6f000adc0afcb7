"""The scores of a list of records (``list_mode: align``): one per sub-field, and the per-item
details of the list field's own score."""

from __future__ import annotations

from typing import Any

from stateval.compare._records import RecordAlignment
from stateval.compare._score_value import FIELD_PREFIX, ScoreValue

__all__ = ["ITEMS_SHOWN", "item_metadata", "sub_scores"]

ITEMS_SHOWN = 20
"""At most this many items that are not matched are listed in a list field's metadata."""


def item_metadata(records: RecordAlignment) -> dict[str, Any]:
    """``item_counts`` (matched, partial, missing, extra) and ``items``: the first
    `ITEMS_SHOWN` items that are not matched (positions, status, similarity, wrong sub-fields)."""
    unmatched = [i.to_dict() for i in records.items if i.status != "matched"]
    return {"item_counts": records.counts(), "items": unmatched[:ITEMS_SHOWN]}


def sub_scores(records: RecordAlignment) -> list[ScoreValue]:
    """One ``field:<path>[].<key>`` score per sub-field of an aligned list of records: the
    share of its items where that sub-field is correct, the counts in its metadata."""
    counts: dict[str, dict[str, int]] = {}
    for o in records.sub_outcomes():
        tally = counts.setdefault(
            o.path, dict.fromkeys(("correct", "wrong", "missing", "extra"), 0)
        )
        tally[o.status] += 1
    out = []
    for path, tally in counts.items():
        n = sum(tally.values())
        right = tally["correct"] == n
        text = ", ".join(f"{v} {k}" for k, v in tally.items() if v) + f" of {n} items"
        meta: dict[str, Any] = {"path": path, **tally}
        out.append(
            ScoreValue(
                f"{FIELD_PREFIX}{path}",
                tally["correct"] / n,
                "correct" if right else "wrong",
                text,
                meta,
            )
        )
    return out
