"""Retention by memory age: how well a mutator keeps a value as the turns since it was set go by.

A field's **memory age** at a turn of an episode is the number of turns since its gold value was
last set: 0 at the turn whose expected state sets (adds or changes) it, 1 at the next, and so
on; a value already in the episode's starting state counts as set the turn before the first.
The age is a property of the gold (the case's pre-state and expected state), so it is the same
in both modes; what differs is the state the mutator starts from (teacher-forced: the gold one;
free-running: its own, where a forgotten value stays forgotten).

Per age, pooled and per field: the fields the expected state holds at that age, how many are
right, and a Wilson 95% interval. Over the pooled observations of age 1 and more (age 0 is the
update itself, which the edit-operation matrix scores), an ordinary least-squares slope of
rightness on age with a one-sided test that it is negative (normal approximation; the turns
of one episode are not independent, so read the p-value as a screen, not a proof). The threshold
figure `RetentionCurve.accuracy_from` is the accuracy over every age at or past a cutoff
(``retention_at_5``: ages >= 5).

Example:
    >>> from stateval.episodes._score import RETENTION_AGE, TurnRecord, memory_ages
    >>> turns = [TurnRecord(0, "d:0", True, True, 1.0, fields=(("a", True, True),)),
    ...          TurnRecord(1, "d:1", True, False, 0.0, fields=(("a", False, False),))]
    >>> list(memory_ages(turns))
    [('a', 0, True), ('a', 1, False)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stateval.calibration import wilson_interval
from stateval.episodes._score import RETENTION_AGE, TurnRecord, memory_ages

__all__ = [
    "RETENTION_AGE",
    "AgePoint",
    "RetentionCurve",
    "RetentionTally",
    "SlopeTest",
    "memory_ages",
]


@dataclass(frozen=True, slots=True)
class AgePoint:
    """Retention at one memory age.

    Attributes:
        age: Turns since the gold value was set.
        n: Expected fields of that age.
        right: Those that are right.
        accuracy: right / n.
        low: Wilson 95% interval, low end.
        high: Wilson 95% interval, high end.
    """

    age: int
    n: int
    right: int
    accuracy: float
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "age": self.age,
            "n": self.n,
            "right": self.right,
            "accuracy": self.accuracy,
            "low": self.low,
            "high": self.high,
        }


@dataclass(frozen=True, slots=True)
class SlopeTest:
    """Least-squares slope of rightness (0/1) on age, with a one-sided test that it is negative.

    Attributes:
        slope: Accuracy change per turn of age.
        stderr: Its standard error.
        p_value: One-sided p-value of "slope < 0" (normal approximation).
        significant: p_value < 0.05.
    """

    slope: float
    stderr: float
    p_value: float
    significant: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "slope": self.slope,
            "stderr": self.stderr,
            "p_value": self.p_value,
            "significant": self.significant,
        }


def _points(counts: Mapping[int, list[int]]) -> tuple[AgePoint, ...]:
    out = []
    for age in sorted(counts):
        n, right = counts[age]
        low, high = wilson_interval(right, n)
        out.append(AgePoint(age, n, right, right / n if n else 0.0, low, high))
    return tuple(out)


def _slope(points: Sequence[AgePoint]) -> SlopeTest | None:
    n = sum(p.n for p in points)
    if n < 3 or len(points) < 2:
        return None
    sx = sum(p.age * p.n for p in points)
    sy = sum(p.right for p in points)
    sxx = sum(p.age * p.age * p.n for p in points) - sx * sx / n
    sxy = sum(p.age * p.right for p in points) - sx * sy / n
    syy = sy - sy * sy / n  # rightness is 0/1: the sum of squares is the sum
    if sxx <= 0:
        return None
    slope = sxy / sxx
    residual = max(syy - slope * sxy, 0.0) / (n - 2)
    stderr = math.sqrt(residual / sxx)
    if stderr == 0:
        p_value = 0.0 if slope < 0 else 1.0
    else:
        p_value = 0.5 * math.erfc(-(slope / stderr) / math.sqrt(2))
    return SlopeTest(slope, stderr, p_value, p_value < 0.05)


@dataclass(frozen=True, slots=True)
class RetentionCurve:
    """Retention by memory age (see the module docstring).

    Attributes:
        points: The pooled curve, by age.
        fields: Per field, its curve.
        slope: The slope test over the pooled observations of age >= 1 (None with fewer than
            three, or a single age).
    """

    points: tuple[AgePoint, ...]
    fields: Mapping[str, tuple[AgePoint, ...]] = field(default_factory=dict)
    slope: SlopeTest | None = None

    def accuracy_from(self, age: int = RETENTION_AGE) -> float | None:
        """Accuracy over every age >= ``age`` (None when no field is that old)."""
        n = sum(p.n for p in self.points if p.age >= age)
        right = sum(p.right for p in self.points if p.age >= age)
        return right / n if n else None

    def n_from(self, age: int = RETENTION_AGE) -> int:
        """Expected fields of age >= ``age``."""
        return sum(p.n for p in self.points if p.age >= age)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "points": [p.to_dict() for p in self.points],
            f"accuracy_from_{RETENTION_AGE}": self.accuracy_from(),
            f"n_from_{RETENTION_AGE}": self.n_from(),
            "slope": None if self.slope is None else self.slope.to_dict(),
            "fields": {path: [p.to_dict() for p in pts] for path, pts in self.fields.items()},
        }


class RetentionTally:
    """Counts ``(path, age, right)`` observations; `result` gives the `RetentionCurve`."""

    def __init__(self) -> None:
        self._cells: dict[tuple[str, int], list[int]] = {}  # (path, age) -> [n, right]

    def add(self, turns: Sequence[TurnRecord]) -> None:
        """Count one episode's turns (in order)."""
        cells = self._cells
        for path, age, right in memory_ages(turns):
            cell = cells.get((path, age))
            if cell is None:
                cells[(path, age)] = [1, int(right)]
            else:
                cell[0] += 1
                cell[1] += right

    def merge(self, other: RetentionTally) -> None:
        """Add the counts of ``other`` (another shard's episodes, say)."""
        cells = self._cells
        for key, (n, right) in other._cells.items():
            cell = cells.get(key)
            if cell is None:
                cells[key] = [n, right]
            else:
                cell[0] += n
                cell[1] += right

    def result(self) -> RetentionCurve:
        """The curve of every episode added so far."""
        pooled: dict[int, list[int]] = {}
        by_field: dict[str, dict[int, list[int]]] = {}
        for (path, age), (n, right) in self._cells.items():
            total = pooled.setdefault(age, [0, 0])
            total[0] += n
            total[1] += right
            by_field.setdefault(path, {})[age] = [n, right]
        points = _points(pooled)
        fields = {path: _points(c) for path, c in sorted(by_field.items())}
        return RetentionCurve(points, fields, _slope([p for p in points if p.age >= 1]))
