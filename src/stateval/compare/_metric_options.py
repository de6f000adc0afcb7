"""The settings of a run's metrics, typed once: value precision / recall / F1 conventions and
the units, matching and aggregation of a convention's figures (``_conventions.py`` resolves a
suite's ``metrics:`` block into one `MetricOptions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "Aggregation",
    "Averaging",
    "Joint",
    "ListCredit",
    "MetricOptions",
    "Scope",
    "WrongValue",
]

ListCredit: TypeAlias = Literal["all_or_nothing", "partial"]
WrongValue: TypeAlias = Literal["fp_and_fn", "fp"]
Averaging: TypeAlias = Literal["micro", "case"]
Scope: TypeAlias = Literal["turn", "frame", "state"]
Joint: TypeAlias = Literal["product", "all_right"]
Aggregation: TypeAlias = Literal["unit_mean", "pooled"]


@dataclass(frozen=True, slots=True)
class MetricOptions:
    """Scorer conventions (see docs/concepts.md, "Scorer conventions").

    Attributes:
        list_credit: ``all_or_nothing``: a list-valued field is right or wrong as a whole;
            ``partial``: a wrong one earns its list F1 in value precision / recall / F1.
        wrong_value: ``fp_and_fn``: a wrong value is a false positive and a false negative;
            ``fp``: only a false positive (the first DSTC10 Track 2 scorer; its current one,
            the ``dstc10`` convention, counts both).
        averaging: ``micro``: pool the counts of every case; ``case``: mean of each case's
            precision, recall and F1 (TRADE).
        scope: The units of a convention's figures (``_conventions.py``): ``turn``,
            ``frame`` or ``state``; None (the default) reports none.
        matching: How a slot both states hold scores in a unit: a key of
            ``stateval.compare.SLOT_SCORERS``.
        joint: ``product``: a unit's joint goal is the product of its slot scores;
            ``all_right``: 1 when every slot scores 1.
        aggregation: ``unit_mean``: a figure is the mean of the units' own ratios;
            ``pooled``: one ratio of the sums over units.
        drop_expected: Expected values a convention's figures read as no value at all (the
            scorer's references never hold them: mwzeval's loader drops ``dontcare``); a
            list holding one counts too.
        convention: The entry of ``stateval.compare.CONVENTIONS`` these settings start from
            (None: set one by one).
    """

    list_credit: ListCredit = "all_or_nothing"
    wrong_value: WrongValue = "fp_and_fn"
    averaging: Averaging = "micro"
    scope: Scope | None = None
    matching: str = "policies"
    joint: Joint = "all_right"
    aggregation: Aggregation = "pooled"
    drop_expected: tuple[str, ...] = ()
    convention: str | None = None

    def __post_init__(self) -> None:
        for name, allowed in (
            ("list_credit", ("all_or_nothing", "partial")),
            ("wrong_value", ("fp_and_fn", "fp")),
            ("averaging", ("micro", "case")),
            ("scope", (None, "turn", "frame", "state")),
            ("joint", ("product", "all_right")),
            ("aggregation", ("unit_mean", "pooled")),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        drops = self.drop_expected
        if isinstance(drops, str) or not all(isinstance(v, str) for v in drops):
            raise ValueError(f"drop_expected must be a list of strings, got {drops!r}")
        object.__setattr__(self, "drop_expected", tuple(drops))
