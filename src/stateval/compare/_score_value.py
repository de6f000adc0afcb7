"""`ScoreValue`, one score of one case, and the ``field:<path>`` naming of per-field scores."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FIELD_PREFIX", "ScoreValue"]

#: Per-field scores are named ``field:<path>``.
FIELD_PREFIX = "field:"


@dataclass(frozen=True, slots=True)
class ScoreValue:
    """One score of one case.

    Attributes:
        name: ``state_accuracy``, ``overall_match``, ``changed_fields_accuracy``,
            ``preserved_fields_accuracy``, ``slot_accuracy`` or ``field:<path>``.
        score: In [0, 1] (a ``score: similarity`` field: its similarity); None when there is
            nothing to score (an ``empty`` delta view, a field ``absent`` from both states or
            ``ignored``).
        label: A short category (``match``, ``mismatched``, ``empty``, ``error``...), or None.
        explanation: One human-readable line.
        metadata: Counts and details (field statuses, slot counts, the compared candidates).
        judged: True when an LLM judge decided it.
    """

    name: str
    score: float | None
    label: str | None
    explanation: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    judged: bool = False
