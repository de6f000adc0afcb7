"""A convention's figures (``_conventions.py``), counted unit by unit in one pass.

A **unit** is a turn (``scope: turn``: the case's scored slots in play), a service frame (``scope:
frame``: each service the case names under ``services_key``, with every schema slot of that service;
a case that names none has one frame per service of the slots its expected state holds) or a turn's
states (``scope: state``: the schema's slots, if any, and every field either state holds, as mwzeval
counts a predicted slot of no schema). Slots of services outside a case's frames are not seen, as
SGD's scorer does not see them. Each slot of a unit gets a `SlotScore`; each figure of `FIGURES`
turns a unit's slot scores into a ratio ``(numerator, denominator)``, or None when it is not defined
for the unit (SGD's ``NA``: no categorical slot, no slot in the reference...). ``aggregation:
unit_mean`` averages the units' ratios (SGD's macro mean over frames), ``pooled`` divides the summed
numerators by the summed denominators. A figure no unit defines is None. A unit with no slot at all
(both states empty, no schema) has its joint goal right under ``joint: all_right`` (a product's is
not defined), and value P/R/F1 of 1 in a unit mean (TRADE's ``compute_prf``), nothing in a pooled
sum; value P/R/F1 whose denominator is zero in a unit where something was expected or predicted are
0 in a unit mean.

Every figure is also given per slice: the suite's ``slices`` (case metadata keys) and, with
frame scope, ``service``, ``domain`` (the service name up to its first ``_``, as SGD's scorer
splits it) and, given the seen services, ``seen`` (``seen`` / ``unseen``).

Example:
    >>> from stateval.compare import compare_states, resolve_options
    >>> from stateval.state import InterpretiveState
    >>> slots = (SlotInfo("hotel.area", "hotel", True), SlotInfo("hotel.name", "hotel"))
    >>> acc = UnitAccumulator(resolve_options("sgd"), slots, services_key="metadata.services")
    >>> gold = InterpretiveState.from_flat({"hotel.area": ["north"], "hotel.name": ["Grand Inn"]})
    >>> pred = InterpretiveState.from_flat({"hotel.area": "north", "hotel.name": "grand hotel"})
    >>> acc.add(compare_states(gold, pred), {"services": ["hotel"]})
    >>> figures = acc.result().figures
    >>> figures["sgd_joint_goal_accuracy"], figures["sgd_average_goal_accuracy"]
    (0.6, 0.8)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from stateval._exact_sum import ExactSum
from stateval.compare._comparison import StateComparison
from stateval.compare._conventions import CONVENTIONS, SLOT_SCORERS, SlotPair, report_prefix
from stateval.compare._metric_options import MetricOptions
from stateval.compare._run_slices import lookup, slice_order, slice_values

__all__ = [
    "FIGURES",
    "ConventionMetrics",
    "SlotInfo",
    "SlotScore",
    "UnitAccumulator",
    "reported_figures",
]


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """A schema slot as a convention sees it.

    Attributes:
        path: The slot's field path.
        service: The service it belongs to (None in a plain slot list).
        categorical: Whether its values come from a closed list.
    """

    path: str
    service: str | None = None
    categorical: bool = False


@dataclass(frozen=True, slots=True)
class SlotScore:
    """One slot of one unit.

    Attributes:
        score: 1 when neither state holds it, 0 when one does, else its matching's, in [0, 1]
            (DSTC10's can pass 1; with ``joint: all_right``: 1 when that is 1, else 0).
        active: The expected state holds it (SGD: "present in the reference").
        predicted: The actual state holds it.
        categorical: As the schema says.
        credit: Its value credit in value P/R/F1: the matching's score, also under
            ``all_right`` (DSTC10 credits a list slot with its F1; its accuracy needs 1).
    """

    score: float
    active: bool
    predicted: bool
    categorical: bool
    credit: float = 0.0


Ratio = tuple[float, float] | None
Figure = Callable[[Sequence[SlotScore]], Ratio]


def _joint(scores: Iterable[SlotScore]) -> Ratio:
    values = [s.score for s in scores]
    return (math.prod(values), 1.0) if values else None


def _all_right(scores: Sequence[SlotScore]) -> Ratio:
    """``joint: all_right``'s joint goal: every slot right, so right in a unit with no slot
    (TRADE's and mwzeval's empty turns); a product's is not defined there (SGD's ``NA``)."""
    return _joint(scores) if scores else (1.0, 1.0)


def _mean(scores: Iterable[SlotScore]) -> Ratio:
    values = [s.score for s in scores]
    return (math.fsum(values), float(len(values))) if values else None


def _value(den: Callable[[SlotScore], int], weight: float = 1.0) -> Figure:
    """Value credit over ``den``'s count. A zero count gives ``(value, 0.0)``: that value in a
    unit mean (1 when nothing was expected or predicted, else 0), nothing in a pooled sum."""

    def figure(scores: Sequence[SlotScore]) -> Ratio:
        credit = math.fsum(s.credit for s in scores if s.active and s.predicted)
        n = sum(den(s) for s in scores)
        if n:
            return (weight * credit, float(n))
        return (0.0 if any(s.active or s.predicted for s in scores) else 1.0, 0.0)

    return figure


FIGURES: Mapping[str, Figure] = MappingProxyType(
    {
        "joint_goal_accuracy": lambda s: _joint(s),
        "average_goal_accuracy": lambda s: _mean(x for x in s if x.active),
        "joint_cat_accuracy": lambda s: _joint(x for x in s if x.categorical),
        "average_cat_accuracy": lambda s: _mean(x for x in s if x.active and x.categorical),
        "joint_noncat_accuracy": lambda s: _joint(x for x in s if not x.categorical),
        "average_noncat_accuracy": lambda s: _mean(x for x in s if x.active and not x.categorical),
        "slot_accuracy": lambda s: _mean(s),
        "value_precision": _value(lambda x: int(x.predicted)),
        "value_recall": _value(lambda x: int(x.active)),
        "value_f1": _value(lambda x: int(x.predicted) + int(x.active), 2.0),
    }
)
"""Each figure of a unit from its slot scores: joint goal (the product), average goal (the mean
over slots the expected state holds), their categorical / free-form splits, slot accuracy (the
mean over every slot) and value P/R/F1 (score credit of slots both hold over predicted / expected
slots)."""

_BY_JOINT: Mapping[str, Mapping[str, Figure]] = MappingProxyType(
    {
        "product": FIGURES,
        "all_right": MappingProxyType({**FIGURES, "joint_goal_accuracy": _all_right}),
    }
)


def reported_figures(options: MetricOptions) -> tuple[str, ...]:
    """The figures ``options`` report: the convention's, or every figure without one."""
    entry = None if options.convention is None else CONVENTIONS.get(options.convention)
    return tuple(FIGURES) if entry is None else entry.reported


@dataclass(frozen=True, slots=True)
class ConventionMetrics:
    """A convention's figures over a run.

    Attributes:
        name: The prefix of the names (the convention's, or ``custom``).
        options: The settings they follow.
        n_units: Units (turns or frames) scored.
        figures: Reported name -> value (None when no unit defines it).
        slices: ``{slice key: {slice value: {reported name: value}}}``.
    """

    name: str
    options: MetricOptions
    n_units: int
    figures: Mapping[str, float | None]
    slices: Mapping[str, Mapping[str, Mapping[str, float | None]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        entry = None if self.options.convention is None else CONVENTIONS.get(self.name)
        return {
            "name": self.name,
            "source": None if entry is None else entry.source,
            "scope": self.options.scope,
            "matching": self.options.matching,
            "joint": self.options.joint,
            "aggregation": self.options.aggregation,
            "drop_expected": list(self.options.drop_expected),
            "n_units": self.n_units,
            "figures": dict(self.figures),
            "slices": {k: {v: dict(f) for v, f in g.items()} for k, g in self.slices.items()},
        }


class _Sums:
    """One group's running sums per figure: numerators, denominators, ratios, defined units
    (exact: the same figures in any order of the units, a run's or its shards' merged)."""

    __slots__ = ("den", "n", "num", "ratio")

    def __init__(self, n_figures: int) -> None:
        self.num = [ExactSum() for _ in range(n_figures)]
        self.den = [ExactSum() for _ in range(n_figures)]
        self.ratio = [ExactSum() for _ in range(n_figures)]
        self.n = [0] * n_figures

    def add(self, ratios: Sequence[Ratio]) -> None:
        for i, r in enumerate(ratios):
            if r is None:
                continue
            if r[1]:
                self.num[i] += r[0]
                self.den[i] += r[1]
                self.ratio[i] += r[0] / r[1]
            else:  # a zero denominator: its value counts in a unit mean only
                self.ratio[i] += r[0]
            self.n[i] += 1

    def merge(self, other: _Sums) -> None:
        for mine, theirs in (
            *zip(self.num, other.num, strict=True),
            *zip(self.den, other.den, strict=True),
            *zip(self.ratio, other.ratio, strict=True),
        ):
            mine.merge(theirs)
        self.n = [a + b for a, b in zip(self.n, other.n, strict=True)]

    def values(self, pooled: bool) -> list[float | None]:
        if pooled:
            return [
                float(num) / float(den) if float(den) else None
                for num, den in zip(self.num, self.den, strict=True)
            ]
        return [
            float(total) / n if n else None for total, n in zip(self.ratio, self.n, strict=True)
        ]


class UnitAccumulator:
    """Counts a convention's figures case by case (see the module docstring).

    Args:
        options: The settings (``options.scope`` must be set).
        slots: The scored schema slots, in schema order.
        services_key: The case metadata key naming a case's services (its frames).
        slices: Case metadata keys to break the figures down by.
        seen_services: Services seen in training (adds the ``seen`` slice), or None.
    """

    def __init__(
        self,
        options: MetricOptions,
        slots: Sequence[SlotInfo],
        services_key: str | None = None,
        slices: Sequence[str] = (),
        seen_services: Collection[str] | None = None,
    ) -> None:
        if options.scope is None:
            raise ValueError("a convention's figures need a scope ('turn', 'frame' or 'state')")
        self.options = options
        self.slots = tuple(slots)
        self._by_path = {s.path: s for s in self.slots}
        self._by_service: dict[str | None, list[SlotInfo]] = {}
        for s in self.slots:
            self._by_service.setdefault(s.service, []).append(s)
        self.services_key = services_key
        self.slice_keys = tuple(slices)
        self.seen = None if seen_services is None else frozenset(seen_services)
        self.prefix = report_prefix(options)
        self.figures = reported_figures(options)
        self._set_scorers()
        self._all = _Sums(len(self.figures))
        self._slices: dict[str, dict[str, _Sums]] = {}
        self._n = 0

    def add(
        self,
        comparison: StateComparison,
        metadata: Mapping[str, Any] | None = None,
        in_play: Collection[str] | None = None,
    ) -> None:
        """Count one case's units. ``in_play``: with turn scope, the scored slots in play in
        this case (default: every slot)."""
        meta = metadata or {}
        for frame, ratios in self._unit_ratios(comparison, meta, in_play):
            self._n += 1
            self._all.add(ratios)
            for key, value in self._slice_values(meta, frame):
                groups = self._slices.setdefault(key, {})
                sums = groups.get(value)
                if sums is None:
                    sums = groups[value] = _Sums(len(self.figures))
                sums.add(ratios)

    def _set_scorers(self) -> None:
        self._functions = [_BY_JOINT[self.options.joint][f] for f in self.figures]
        self._score = SLOT_SCORERS[self.options.matching]

    def __getstate__(self) -> dict[str, Any]:
        # pickled (a worker's sums, sent to the driver) without the scoring functions (some
        # are lambdas): they are looked up again from the options when unpickled
        return {k: v for k, v in self.__dict__.items() if k not in ("_functions", "_score")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._set_scorers()

    def merge(self, other: UnitAccumulator) -> None:
        """Add the sums of ``other`` (same settings; another shard's cases, say)."""
        self._n += other._n
        self._all.merge(other._all)
        for key, groups in other._slices.items():
            mine = self._slices.setdefault(key, {})
            for value, sums in groups.items():
                kept = mine.get(value)
                if kept is None:
                    kept = mine[value] = _Sums(len(self.figures))
                kept.merge(sums)

    def case_shares(
        self,
        comparison: StateComparison,
        metadata: Mapping[str, Any] | None = None,
        in_play: Collection[str] | None = None,
    ) -> dict[str, tuple[float, float]]:
        """One case's share of each reported figure, by its reported name: a ``(numerator,
        denominator)`` that sums over cases to `result`'s figure (pooled: its units' summed
        numerators and denominators; unit mean: its units' summed ratios over their number).
        Nothing is counted."""
        sums = _Sums(len(self.figures))
        for _, ratios in self._unit_ratios(comparison, metadata or {}, in_play):
            sums.add(ratios)
        pooled = self.options.aggregation == "pooled"
        return {
            f"{self.prefix}_{figure}": (
                (float(sums.num[i]), float(sums.den[i]))
                if pooled
                else (float(sums.ratio[i]), float(sums.n[i]))
            )
            for i, figure in enumerate(self.figures)
        }

    def _unit_ratios(
        self,
        comparison: StateComparison,
        metadata: Mapping[str, Any],
        in_play: Collection[str] | None,
    ) -> Iterator[tuple[str | None, list[Ratio]]]:
        """Each unit of a case: its frame and the ratio of each reported figure."""
        for frame, slots in self._units(comparison, metadata, in_play):
            scores = [self._slot(comparison, s) for s in slots]
            if self.options.joint == "all_right":
                scores = [
                    SlotScore(float(s.score == 1.0), s.active, s.predicted, s.categorical, s.score)
                    for s in scores
                ]
            yield frame, [fn(scores) for fn in self._functions]

    def _units(
        self,
        comparison: StateComparison,
        metadata: Mapping[str, Any],
        in_play: Collection[str] | None,
    ) -> list[tuple[str | None, Sequence[SlotInfo]]]:
        if self.options.scope == "turn":
            wanted = None if in_play is None else frozenset(in_play)
            return [(None, [s for s in self.slots if wanted is None or s.path in wanted])]
        if self.options.scope == "state":
            held = [SlotInfo(p) for p in comparison.paths if p not in self._by_path]
            return [(None, [*self.slots, *held])]
        return [
            (service, self._by_service.get(service, ()))
            for service in self._frames(comparison, metadata)
        ]

    def _frames(self, comparison: StateComparison, metadata: Mapping[str, Any]) -> list[str]:
        if self.services_key is not None:
            found, named = lookup(metadata, self.services_key)
            if found and named is not None:
                items = named if isinstance(named, list) else [named]
                return list(dict.fromkeys(str(n) for n in items))
        held = dict.fromkeys(
            info.service
            for path in comparison.paths
            if (info := self._by_path.get(path)) is not None
            and info.service is not None
            and (fc := comparison.field(path)) is not None
            and fc.expected is not None
        )
        return [s for s in held if s is not None]

    def _slot(self, comparison: StateComparison, slot: SlotInfo) -> SlotScore:
        fc = comparison.field(slot.path)
        expected = None if fc is None or fc.expected is None else fc.expected.value
        actual = None if fc is None or fc.actual is None else fc.actual.value
        active = expected is not None and expected != [] and not self._dropped(expected)
        predicted = actual is not None and actual != []
        if active and predicted:
            assert fc is not None
            score = self._score(SlotPair(slot.path, slot.categorical, expected, actual, fc))
        else:
            score = 0.0 if active or predicted else 1.0
        return SlotScore(score, active, predicted, slot.categorical, score)

    def _dropped(self, expected: Any) -> bool:
        """Whether the expected value is one of ``drop_expected`` (or a list holding one)."""
        drops = self.options.drop_expected
        if not drops:
            return False
        values = expected if isinstance(expected, list) else [expected]
        return any(isinstance(v, str) and v in drops for v in values)

    def _slice_values(
        self, metadata: Mapping[str, Any], frame: str | None
    ) -> list[tuple[str, str]]:
        out = [(key, value) for key in self.slice_keys for value in slice_values(metadata, key)]
        if frame is not None:
            out.append(("service", frame))
            out.append(("domain", frame.split("_")[0]))
            if self.seen is not None:
                out.append(("seen", "seen" if frame in self.seen else "unseen"))
        return out

    def result(self) -> ConventionMetrics:
        """The figures of every case added so far."""
        pooled = self.options.aggregation == "pooled"

        def named(sums: _Sums) -> dict[str, float | None]:
            values = sums.values(pooled)
            return {f"{self.prefix}_{f}": v for f, v in zip(self.figures, values, strict=True)}

        return ConventionMetrics(
            self.prefix,
            self.options,
            self._n,
            named(self._all),
            {  # keys in `_slice_values`' order, values by name (not by first unit counted)
                k: {v: named(g[v]) for v in sorted(g, key=slice_order)}
                for k in dict.fromkeys((*self.slice_keys, "service", "domain", "seen"))
                if (g := self._slices.get(k))
            },
        )
