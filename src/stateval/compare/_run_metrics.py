"""Run-level metrics: `MetricsAccumulator` adds each case's `CaseMetrics` to running counts (one
pass, nothing kept per case) and gives `RunMetrics`: value precision / recall / F1, joint goal and
slot accuracy, per-field `FieldMetrics`, and the same per slice of the cases.

Example:
    >>> from stateval.compare import compare_states
    >>> from stateval.state import InterpretiveState
    >>> gold = InterpretiveState.from_flat({"hotel.area": "centre", "hotel.stars": "4"})
    >>> pred = InterpretiveState.from_flat({"hotel.area": "centre", "hotel.parking": "yes"})
    >>> acc = MetricsAccumulator(slots=("hotel.area", "hotel.stars", "hotel.parking", "hotel.day"))
    >>> _ = acc.add(compare_states(gold, pred))
    >>> m = acc.result()
    >>> (m.precision, m.recall, m.slot_accuracy, m.joint_goal_accuracy)
    (0.5, 0.5, 0.5, 0.0)
    >>> [(f.path, f.correct, f.missing, f.extra, f.absent) for f in m.worst_fields()][:2]
    [('hotel.parking', 0, 0, 1, 0), ('hotel.stars', 0, 1, 0, 0)]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stateval._exact_sum import ExactSum
from stateval.compare._comparison import StateComparison
from stateval.compare._field_metrics import (
    CaseMetrics,
    FieldMetrics,
    MetricOptions,
    Outcome,
    case_metrics,
    prf,
    strict_figures,
    value_shares,
)
from stateval.compare._run_slices import MISSING_SLICE, lookup, slice_order, slice_values
from stateval.compare._strict_case import StrictCase
from stateval.compare._strict_shape import hold
from stateval.compare._unit_metrics import ConventionMetrics, SlotInfo, UnitAccumulator

__all__ = ["MISSING_SLICE", "MetricsAccumulator", "RunMetrics", "lookup", "slice_values"]


@dataclass(frozen=True, slots=True)
class RunMetrics:
    """A run's (or a slice's) metrics.

    Attributes:
        n_cases: Cases counted.
        precision: Value precision (micro, or mean of cases with ``averaging="case"``).
        recall: Value recall.
        f1: Value F1.
        tp: Pooled true-positive credit.
        fp: Pooled false positives.
        fn: Pooled false negatives.
        joint_goal_accuracy: Fraction of cases with every scored slot (or field) right.
        slot_accuracy: Right (case, slot) pairs over scored pairs; None without a schema.
        fields: Per-field metrics, keyed by path in the order first seen.
        slices: ``{slice key: {slice value: RunMetrics}}``.
        options: The scorer conventions used.
        has_schema: Whether a slot schema was given (both-absent is counted).
        convention: A convention's figures (``metrics.convention`` or its settings), named
            after it; None when none is asked for.
    """

    n_cases: int
    precision: float
    recall: float
    f1: float
    tp: float
    fp: float
    fn: float
    joint_goal_accuracy: float
    slot_accuracy: float | None
    fields: Mapping[str, FieldMetrics]
    slices: Mapping[str, Mapping[str, RunMetrics]] = field(default_factory=dict)
    options: MetricOptions = field(default_factory=MetricOptions)
    has_schema: bool = False
    convention: ConventionMetrics | None = None

    def worst_fields(self, limit: int | None = None) -> list[FieldMetrics]:
        """Fields worst first (see `FieldMetrics.rank_key`)."""
        items = sorted(self.fields.values(), key=FieldMetrics.rank_key)
        return items if limit is None else items[:limit]

    def headline(self) -> dict[str, Any]:
        """The run-level figures (no fields, no slices), as JSON."""
        return {
            "n_cases": self.n_cases,
            "value_precision": self.precision,
            "value_recall": self.recall,
            "value_f1": self.f1,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "joint_goal_accuracy": self.joint_goal_accuracy,
            "slot_accuracy": self.slot_accuracy,
            **({} if self.convention is None else self.convention.figures),
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: headline figures, conventions, fields worst first, slices."""
        return {
            **self.headline(),
            "conventions": {
                "list_credit": self.options.list_credit,
                "wrong_value": self.options.wrong_value,
                "averaging": self.options.averaging,
            },
            "convention": None if self.convention is None else self.convention.to_dict(),
            "fields": [f.to_dict() for f in self.worst_fields()],
            "slices": {
                key: {value: m.to_dict() for value, m in groups.items()}
                for key, groups in self.slices.items()
            },
        }


_KIND = {kind: i for i, kind in enumerate(Outcome)}
_STATUS_KIND = tuple(  # a `StrictCase` status code -> its outcome's place
    _KIND[kind] for kind in (Outcome.CORRECT, Outcome.WRONG, Outcome.MISSING, Outcome.EXTRA)
)


class _Counts:
    """One field's outcome counts (by `Outcome`, in its order), credit and score sums (exact:
    a partial credit or fuzzy score sums to the same float in any order of the cases)."""

    __slots__ = ("by_kind", "credit", "score_sum")

    def __init__(self) -> None:
        self.by_kind = [0] * len(_KIND)
        self.credit, self.score_sum = ExactSum(), ExactSum()

    def merge(self, other: _Counts) -> None:
        self.by_kind = [a + b for a, b in zip(self.by_kind, other.by_kind, strict=True)]
        self.credit.merge(other.credit)
        self.score_sum.merge(other.score_sum)

    @property
    def correct(self) -> int:
        return self.by_kind[_KIND[Outcome.CORRECT]]

    @property
    def wrong(self) -> int:
        return self.by_kind[_KIND[Outcome.WRONG]]

    @property
    def missing(self) -> int:
        return self.by_kind[_KIND[Outcome.MISSING]]

    @property
    def extra(self) -> int:
        return self.by_kind[_KIND[Outcome.EXTRA]]

    @property
    def absent(self) -> int:
        return self.by_kind[_KIND[Outcome.ABSENT]]


class MetricsAccumulator:
    """Counts added case by case; `result` gives the `RunMetrics` at any time.

    Args:
        slots: The slot schema (paths), or None. With it, JGA and slot accuracy score only
            schema slots and both-absent slots are counted; without it every compared field.
        options: Scorer conventions.
        slices: Slice keys (dotted paths into case metadata).
        active_slots: Given a case's metadata, the schema slots in play in that case (default:
            every slot); slots of services not in play are not counted as both-absent.
        slot_info: The schema's slots with their service and kind, for a convention's figures
            (``options.scope`` set; default: ``slots`` without services).
        services_key: The case metadata key naming a case's services (its frames).
        seen_services: Services seen in training (a convention's ``seen`` slice).
    """

    def __init__(
        self,
        slots: Sequence[str] | None = None,
        options: MetricOptions | None = None,
        slices: Sequence[str] = (),
        active_slots: Callable[[Mapping[str, Any]], Collection[str]] | None = None,
        slot_info: Sequence[SlotInfo] | None = None,
        services_key: str | None = None,
        seen_services: Collection[str] | None = None,
    ) -> None:
        if isinstance(slots, str):
            raise TypeError("slots must be a sequence of slot paths, not a string")
        self.slots: tuple[str, ...] | None = None if slots is None else tuple(dict.fromkeys(slots))
        self._slot_set = frozenset(self.slots or ())
        self.options = options or MetricOptions()
        self.slice_keys = tuple(slices)
        self._active = active_slots
        self._fields: dict[str, _Counts] = {s: _Counts() for s in self.slots or ()}
        self._n = self._joint = self._slot_right = self._slot_total = 0
        self._tp = self._fp = self._fn = 0.0  # strict cases': whole numbers, exact as floats
        # the others' (a partial list credit): exact, the same in any order of the cases
        self._prf = (ExactSum(), ExactSum(), ExactSum())
        # the sums of each case's P, R, F1 (averaging: case), exact: the same figure in any
        # order of the cases (a run's, or its shards' merged)
        self._case_sums = (
            [ExactSum(), ExactSum(), ExactSum()] if self.options.averaging == "case" else None
        )
        self._slices: dict[str, dict[str, MetricsAccumulator]] = {k: {} for k in self.slice_keys}
        self._units: UnitAccumulator | None = None
        # strict cases not counted per field yet: a shape's statuses -> [cases, the shape]
        self._pending: dict[Hashable, list[Any]] = {}
        if self.options.scope is not None:
            info = slot_info if slot_info is not None else [SlotInfo(p) for p in self.slots or ()]
            self._units = UnitAccumulator(
                self.options, info, services_key, self.slice_keys, seen_services
            )

    def __getstate__(self) -> dict[str, Any]:
        # pickled (a worker's counts, sent to the driver) without the active-slots function,
        # a method of the suite's scoring: the counts are merged into the driver's own
        # accumulator, which has it
        self._flush()
        return {**self.__dict__, "_active": None}

    def merge(self, other: MetricsAccumulator) -> None:
        """Add the counts of ``other`` (of the same slots, options and slices; another shard's
        cases, say), as if its cases had been added here."""
        self._flush()
        other._flush()
        for path, counts in other._fields.items():
            mine = self._fields.get(path)
            if mine is None:
                mine = self._fields[path] = _Counts()
            mine.merge(counts)
        self._n += other._n
        self._joint += other._joint
        self._slot_right += other._slot_right
        self._slot_total += other._slot_total
        self._tp += other._tp
        self._fp += other._fp
        self._fn += other._fn
        for mine_prf, theirs_prf in zip(self._prf, other._prf, strict=True):
            mine_prf.merge(theirs_prf)
        if self._case_sums is not None and other._case_sums is not None:
            for mine_sum, theirs in zip(self._case_sums, other._case_sums, strict=True):
                mine_sum.merge(theirs)
        for key, groups in other._slices.items():
            mine_groups = self._slices.setdefault(key, {})
            for value, child in groups.items():
                kept = mine_groups.get(value)
                if kept is None:
                    kept = mine_groups[value] = self._child()
                kept.merge(child)
        if self._units is not None and other._units is not None:
            self._units.merge(other._units)

    def _child(self) -> MetricsAccumulator:
        # a convention's figures are sliced by its own unit accumulator
        child = MetricsAccumulator(self.slots, dataclasses.replace(self.options, scope=None))
        child._active = self._active
        return child

    def add(
        self, comparison: StateComparison, metadata: Mapping[str, Any] | None = None
    ) -> CaseMetrics:
        """Count one case from its comparison; returns the case's own figures."""
        meta = metadata or {}
        in_play = None if self.slots is None or self._active is None else self._active(meta)
        case = case_metrics(comparison, slots=self.slots, in_play=in_play, options=self.options)
        self._count_slices(case, meta)
        if self._units is not None:
            self._units.add(comparison, meta, in_play)
        return case

    def add_case(
        self,
        case: CaseMetrics,
        metadata: Mapping[str, Any] | None = None,
        comparison: StateComparison | None = None,
    ) -> None:
        """Count a case whose `CaseMetrics` are already known (its ``comparison`` is needed
        only for a convention's figures)."""
        meta = metadata or {}
        self._count_slices(case, meta)
        if self._units is not None and comparison is not None:
            in_play = None if self.slots is None or self._active is None else self._active(meta)
            self._units.add(comparison, meta, in_play)

    @property
    def counts_strict(self) -> bool:
        """Whether `add_strict` counts cases here: no slot schema, no convention's figures."""
        return self.slots is None and self._units is None

    def add_strict(self, case: StrictCase, metadata: Mapping[str, Any] | None = None) -> None:
        """Count a case `stateval.compare.strict_case` decided, as `add` counts its comparison
        (needs `counts_strict`). Its fields are counted later, once per distinct paths and
        statuses (the counts and sums are those of counting each case)."""
        if self._slices:
            self._count_slices(case, metadata or {})
        else:
            self._count_strict(case)

    def case_shares(
        self,
        case: CaseMetrics | StrictCase,
        metadata: Mapping[str, Any] | None = None,
        comparison: StateComparison | None = None,
    ) -> dict[str, tuple[float, float]]:
        """One case's share of the run's value precision / recall / F1 (under these options'
        averaging) and of a convention's figures (given the case's ``comparison``), by their
        names in `RunMetrics.headline`: ``(numerator, denominator)`` pairs whose sums over
        the cases are `result`'s figures (the all-zero case of `prf` aside). What ``stateval
        diff`` compares, so its figures are the run summary's. Nothing is counted.

        Example:
            >>> from stateval.compare import compare_states
            >>> from stateval.state import InterpretiveState
            >>> acc = MetricsAccumulator(options=MetricOptions(averaging="case"))
            >>> gold = InterpretiveState.from_flat({"a": 1, "b": 2})
            >>> case = acc.add(compare_states(gold, InterpretiveState.from_flat({"a": 1})))
            >>> acc.case_shares(case)["value_recall"], acc.result().recall
            ((0.5, 1.0), 0.5)
        """
        averaging = self.options.averaging
        if isinstance(case, StrictCase):  # its fields are binary: its counts give its figures
            precision, recall, f1 = value_shares(
                *strict_figures(case.counts, self.options), averaging
            )
        else:
            precision, recall, f1 = case.value_shares(averaging)
        out = {"value_precision": precision, "value_recall": recall, "value_f1": f1}
        if self._units is not None and comparison is not None:
            meta = metadata or {}
            in_play = None if self.slots is None or self._active is None else self._active(meta)
            out.update(self._units.case_shares(comparison, meta, in_play))
        return out

    def _count_slices(self, case: CaseMetrics | StrictCase, metadata: Mapping[str, Any]) -> None:
        self._count(case)
        for key, groups in self._slices.items():
            for value in slice_values(metadata or {}, key):
                child = groups.get(value)
                if child is None:
                    child = groups[value] = self._child()
                child._count(case)

    def _count(self, case: CaseMetrics | StrictCase) -> None:
        if isinstance(case, StrictCase):
            self._count_strict(case)
            return
        if self._pending:  # the fields' float sums are added in the cases' order
            self._flush()
        fields = self._fields
        kind = _KIND
        for outcomes in (
            (case.outcomes, case.item_outcomes) if case.item_outcomes else (case.outcomes,)
        ):
            for o in outcomes:
                counts = fields.get(o.path)
                if counts is None:
                    counts = fields[o.path] = _Counts()
                counts.by_kind[kind[o.outcome]] += 1
                counts.credit += o.credit
                counts.score_sum += o.score
        self._n += 1
        self._joint += case.joint_goal
        self._slot_right += case.right
        self._slot_total += case.total
        tp, fp, fn = self._prf
        tp += case.tp
        fp += case.fp
        fn += case.fn
        sums = self._case_sums
        if sums is not None:
            (p, _), (r, _), (f1, _) = case.value_shares("case")
            sums[0] += p
            sums[1] += r
            sums[2] += f1

    def _count_strict(self, case: StrictCase) -> None:
        shape = case.shape
        paths = shape.paths
        hold(self._pending, shape.statuses_key, shape, paths, self._fields, _Counts, self._flush)
        counts = shape.counts
        tp, fp, fn = strict_figures(counts, self.options)
        self._n += 1
        self._joint += counts[0] == len(paths)
        self._slot_right += counts[0]
        self._slot_total += len(paths)
        self._tp += tp
        self._fp += fp
        self._fn += fn
        sums = self._case_sums
        if sums is not None:
            p, r, f1 = prf(tp, fp, fn)
            sums[0] += p
            sums[1] += r
            sums[2] += f1

    def _flush(self) -> None:
        """Count the fields of the strict cases held (`add_strict`)."""
        fields, kinds = self._fields, _STATUS_KIND
        for n, shape in self._pending.values():
            for path, code in zip(shape.paths, shape.statuses_code, strict=True):
                counts = fields[path]
                counts.by_kind[kinds[code]] += n
                if not code:  # a match: credit and score 1, the others' 0
                    counts.credit += float(n)
                    counts.score_sum += float(n)
        self._pending.clear()

    def result(self) -> RunMetrics:
        """The metrics of every case added so far."""
        self._flush()
        n = self._n
        exact = zip((self._tp, self._fp, self._fn), self._prf, strict=True)
        tp, fp, fn = (whole + float(part) for whole, part in exact)
        if self._case_sums is not None:
            p, r, f1 = (float(x) / n for x in self._case_sums) if n else (0.0, 0.0, 0.0)
        else:
            p, r, f1 = prf(tp, fp, fn)
        schema = self.slots is not None
        fields = {
            path: FieldMetrics(
                path,
                c.correct,
                c.wrong,
                c.missing,
                c.extra,
                c.absent if schema and path in self._slot_set else None,
                float(c.credit),
                float(c.score_sum),
                self.options.wrong_value,
            )
            for path, c in self._fields.items()
            if c.correct + c.wrong + c.missing + c.extra + c.absent
        }
        return RunMetrics(
            n_cases=n,
            precision=p,
            recall=r,
            f1=f1,
            tp=tp,
            fp=fp,
            fn=fn,
            joint_goal_accuracy=self._joint / n if n else 0.0,
            slot_accuracy=(self._slot_right / self._slot_total if self._slot_total else 0.0)
            if schema
            else None,
            fields=fields,
            slices={  # keys in the suite's order, values by name (not by first case counted)
                key: {value: groups[value].result() for value in sorted(groups, key=slice_order)}
                for key, groups in self._slices.items()
            },
            options=self.options,
            has_schema=schema,
            convention=None if self._units is None else self._units.result(),
        )
