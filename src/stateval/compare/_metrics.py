"""Metrics over many comparisons: per-field aggregates, dialogue-state-tracking slot metrics,
and the delta view (what a mutator was expected to change vs. leave alone).

These are views of the one metrics API, `MetricsAccumulator` / `RunMetrics` (``_run_metrics.py``),
which ``stateval run``, ``stateval diff`` and the reports use: `joint_goal_accuracy` and
`slot_metrics` add the comparisons to an accumulator and read its figures, so a JGA or a slot
accuracy computed here is the run's, by construction.

Conventions:
    * A ratio whose denominator is zero is 0.0 (as `StateComparison.accuracy_score`), except
      precision / recall / F1 when there is neither a gold nor a predicted slot value at all:
      nothing was missed and nothing was invented, so all three are 1.0.
    * Every result also carries its counts (``n``...), so a caller can tell "0.0 because wrong"
      from "0.0 because empty" and skip the latter.

Example:
    >>> from stateval.state import InterpretiveState
    >>> gold = InterpretiveState.from_flat({"hotel.area": "centre", "hotel.stars": "4"})
    >>> pred = InterpretiveState.from_flat({"hotel.area": "centre", "hotel.parking": "yes"})
    >>> m = slot_metrics([(gold, pred)], ["hotel.area", "hotel.stars", "hotel.parking"])
    >>> (round(m.slot_accuracy, 3), m.joint_goal_accuracy, m.precision, m.recall)
    (0.333, 0.0, 0.5, 0.5)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from stateval.compare._comparison import StateComparison, compare_states
from stateval.compare._delta import DeltaComparison, compare_delta
from stateval.compare._field_policies import FieldPolicies
from stateval.compare._policy import MatchPolicy
from stateval.compare._run_metrics import MetricsAccumulator
from stateval.state import InterpretiveState

__all__ = [
    "DeltaComparison",
    "FieldAggregate",
    "SlotMetrics",
    "compare_delta",
    "field_aggregates",
    "joint_goal_accuracy",
    "slot_metrics",
    "worst_fields",
]


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


@dataclass(frozen=True, slots=True)
class FieldAggregate:
    """How one path fared over many comparisons.

    Attributes:
        path: The field path.
        n: Comparisons in which the path was compared (any status).
        matching: How many times it matched.
        mismatched: How many times both sides held it but it differed.
        missing: How many times only the expected state held it.
        extra: How many times only the actual state held it.
    """

    path: str
    n: int = 0
    matching: int = 0
    mismatched: int = 0
    missing: int = 0
    extra: int = 0

    @property
    def n_expected(self) -> int:
        """matching + mismatched + missing: the denominator of `accuracy`."""
        return self.matching + self.mismatched + self.missing

    @property
    def errors(self) -> int:
        """mismatched + missing + extra."""
        return self.mismatched + self.missing + self.extra

    @property
    def accuracy(self) -> float:
        """matching / (matching + mismatched + missing); 0.0 when never expected."""
        return _ratio(self.matching, self.n_expected)


def field_aggregates(comparisons: Iterable[StateComparison]) -> dict[str, FieldAggregate]:
    """Per-path counts over ``comparisons``, keyed by path in the order first seen (the run's
    `RunMetrics.fields` under the comparison's status names)."""
    acc = MetricsAccumulator()
    for comparison in comparisons:
        acc.add(comparison)
    return {
        path: FieldAggregate(path, f.n, f.correct, f.wrong, f.missing, f.extra)
        for path, f in acc.result().fields.items()
    }


def worst_fields(
    aggregates: dict[str, FieldAggregate] | Iterable[FieldAggregate], limit: int | None = None
) -> list[FieldAggregate]:
    """Aggregates worst first: lowest accuracy, then most errors, then path."""
    items = list(aggregates.values()) if isinstance(aggregates, dict) else list(aggregates)
    items.sort(key=lambda a: (a.accuracy, -a.errors, a.path))
    return items if limit is None else items[:limit]


def joint_goal_accuracy(
    comparisons: Iterable[StateComparison], slots: Sequence[str] | None = None
) -> float:
    """The run's joint goal accuracy of ``comparisons`` (0.0 when none): the fraction whose
    every scored field is right. Without ``slots`` every compared field is scored (the
    fraction with `StateComparison.overall_match`); with them only the schema slots.

    Example:
        >>> from stateval.state import InterpretiveState
        >>> want = InterpretiveState.from_flat({"a": 1})
        >>> got = InterpretiveState.from_flat({"a": 1, "b": 2})
        >>> joint_goal_accuracy([compare_states(want, got)]), joint_goal_accuracy(
        ...     [compare_states(want, got)], slots=["a"])
        (0.0, 1.0)
    """
    acc = MetricsAccumulator(slots=slots)
    for comparison in comparisons:
        acc.add(comparison)
    return acc.result().joint_goal_accuracy


@dataclass(frozen=True, slots=True)
class SlotMetrics:
    """Dialogue-state-tracking metrics over a fixed slot schema.

    Attributes:
        n_cases: Number of (expected, actual) pairs.
        n_slots: Schema slots scored per case (ignored slots excluded).
        slot_accuracy: Correct (case, slot) pairs over n_cases * n_slots; a slot absent from
            both states is correct.
        joint_goal_accuracy: Fraction of cases whose every schema slot is correct.
        precision: TP / (TP + FP).
        recall: TP / (TP + FN).
        f1: Harmonic mean of precision and recall.
        tp: Slots present in both and matched.
        fp: Predicted slots not matched (mismatched or extra).
        fn: Gold slots not matched (mismatched or missing).
        per_slot: Each slot's accuracy over the cases, in schema order.
    """

    n_cases: int
    n_slots: int
    slot_accuracy: float
    joint_goal_accuracy: float
    precision: float
    recall: float
    f1: float
    tp: int = 0
    fp: int = 0
    fn: int = 0
    per_slot: dict[str, float] = field(default_factory=dict)


def slot_metrics(
    pairs: Iterable[tuple[InterpretiveState, InterpretiveState]],
    schema: Sequence[str],
    policies: FieldPolicies | MatchPolicy | None = None,
) -> SlotMetrics:
    """Slot accuracy, joint goal accuracy and value P/R/F1 of ``(expected, actual)`` pairs.

    Only schema slots are scored; other paths are not seen. A slot whose policy has
    ``ignore=True`` is dropped from the schema. See the module docstring for zero handling.
    """
    if isinstance(schema, str):
        raise TypeError("schema must be a sequence of slot paths, not a string")
    resolved = FieldPolicies.of(policies)
    slots = [s for s in dict.fromkeys(schema) if not resolved.for_path(s).ignore]
    acc = MetricsAccumulator(slots=slots)
    for expected, actual in pairs:
        acc.add(compare_states(expected, actual, resolved, paths=slots))
    m = acc.result()
    slot_accuracy = m.slot_accuracy if m.slot_accuracy is not None else 0.0
    return SlotMetrics(
        n_cases=m.n_cases,
        n_slots=len(slots),
        slot_accuracy=slot_accuracy,
        joint_goal_accuracy=m.joint_goal_accuracy,
        precision=m.precision,
        recall=m.recall,
        f1=m.f1,
        tp=round(m.tp),
        fp=round(m.fp),
        fn=round(m.fn),
        per_slot={s: m.fields[s].slot_accuracy if s in m.fields else 0.0 for s in slots},
    )
