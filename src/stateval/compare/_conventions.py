"""Scorer conventions: presets that make a run report what a published scorer reports.

``metrics: {convention: sgd}`` in a suite picks an entry of `CONVENTIONS`; the same settings can
be given one by one and mixed (a setting given explicitly overrides the convention's). They
resolve into one `MetricOptions` (`resolve_options`). A new convention is **one entry** below,
plus a function in `SLOT_SCORERS` when its matching rule is new. The shape of an entry:

.. code-block:: python

    "sgd": Convention(
        name="sgd",              # what `metrics.convention` says; prefixes its reported names
        source="DSTC8 ...",      # the scorer it reproduces (reports and docs name it)
        scope="frame",           # the units scored: "turn" (a case's scored slots in play) or
                                 # "frame" (each service a case names under services_key, with
                                 # every schema slot of that service)
        matching="sgd",          # a key of SLOT_SCORERS: the score in [0, 1] of a slot that
                                 # both states hold ("policies": the suite's match policies)
        joint="product",         # a unit's joint goal: the "product" of its slot scores, or
                                 # "all_right" (scores are first made 1 when == 1, else 0)
        aggregation="unit_mean", # "unit_mean": each figure is the mean of the units' own
                                 # ratios; "pooled": one ratio of the sums over the units
        reported=("joint_goal_accuracy", ...),  # figures of FIGURES (``_unit_metrics.py``) it
                                 # reports, each as "<name>_<figure>"
        list_credit=..., wrong_value=..., averaging=...,  # optional: the conventions of the
                                 # run's own (unprefixed) value P/R/F1, as MetricOptions
    )

In a unit, a slot neither state holds scores 1, one held by one side only 0, and one held by
both its matching's score. A convention's figures are reported beside stateval's own (whose
names carry no prefix) and never replace them. Their names carry the convention's name only
while every setting that shapes them is the convention's: a suite that changes one (say
``matching: policies`` under ``convention: sgd``) gets ``custom_...`` names, because the
numbers are no longer that scorer's.

Example:
    >>> options = resolve_options("sgd")
    >>> (options.scope, options.matching, options.joint, options.aggregation)
    ('frame', 'sgd', 'product', 'unit_mean')
    >>> report_prefix(options), report_prefix(resolve_options("sgd", matching="policies"))
    ('sgd', 'custom')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, TypeAlias

from stateval.compare._field_comparison import FieldComparison, FieldStatus
from stateval.compare._fuzzywuzzy import token_sort_ratio
from stateval.compare._metric_options import (
    Aggregation,
    Averaging,
    Joint,
    ListCredit,
    MetricOptions,
    Scope,
    WrongValue,
)

__all__ = [
    "CONVENTIONS",
    "CUSTOM",
    "SLOT_SCORERS",
    "Convention",
    "SlotPair",
    "SlotScorer",
    "report_prefix",
    "resolve_options",
]

CUSTOM = "custom"
"""The prefix of figures whose settings are no convention's."""


@dataclass(frozen=True, slots=True)
class SlotPair:
    """A slot that both states hold in a unit: what a `SlotScorer` is given.

    Attributes:
        path: The slot.
        categorical: Whether the schema says its values come from a closed list.
        expected: The expected value (a list is SGD's reference alternatives).
        actual: The predicted value.
        comparison: The field's comparison under the suite's match policies.
    """

    path: str
    categorical: bool
    expected: Any
    actual: Any
    comparison: FieldComparison


SlotScorer: TypeAlias = Callable[[SlotPair], float]
"""Scores a slot both states hold, in [0, 1]."""


def _policies(pair: SlotPair) -> float:
    """The suite's match policies: the field's score when it matches (1.0, or the similarity
    under ``score: similarity``), else 0."""
    fc = pair.comparison
    return fc.score if fc.status is FieldStatus.MATCHING else 0.0


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) else value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _sgd(pair: SlotPair) -> float:
    """DSTC8 ``compare_slot_values``: the first predicted value; a categorical slot is right
    when it equals the first reference value; a free-form slot scores the best
    ``token_sort_ratio`` / 100 against the reference alternatives (fuzzywuzzy with the
    python-Levenshtein back-end, ``_fuzzywuzzy.py``)."""
    hyp = _first(pair.actual)
    if pair.categorical:
        return float(_first(pair.expected) == hyp)
    refs = pair.expected if isinstance(pair.expected, list) else [pair.expected]
    return max((token_sort_ratio(_text(r), _text(hyp)) / 100.0 for r in refs), default=0.0)


SLOT_SCORERS: Mapping[str, SlotScorer] = MappingProxyType(
    {
        "policies": _policies,
        "sgd": _sgd,
    }
)
"""How a slot both states hold scores, by the name ``metrics.matching`` gives."""


@dataclass(frozen=True, slots=True)
class Convention:
    """One published scorer's conventions (see the module docstring for each setting)."""

    name: str
    source: str
    scope: Scope
    matching: str
    joint: Joint
    aggregation: Aggregation
    reported: tuple[str, ...]
    list_credit: ListCredit = "all_or_nothing"
    wrong_value: WrongValue = "fp_and_fn"
    averaging: Averaging = "micro"

    def options(self) -> MetricOptions:
        """This convention's settings."""
        return MetricOptions(
            self.list_credit,
            self.wrong_value,
            self.averaging,
            self.scope,
            self.matching,
            self.joint,
            self.aggregation,
            self.name,
        )


CONVENTIONS: Mapping[str, Convention] = MappingProxyType(
    {
        "sgd": Convention(
            name="sgd",
            source="DSTC8 Schema-Guided Dialogue, google-research schema_guided_dst "
            "metrics.py + evaluate.py (defaults: fuzzy matching, joint goal per service frame)",
            scope="frame",
            matching="sgd",
            joint="product",
            aggregation="unit_mean",
            reported=(
                "joint_goal_accuracy",
                "average_goal_accuracy",
                "joint_cat_accuracy",
                "average_cat_accuracy",
                "joint_noncat_accuracy",
                "average_noncat_accuracy",
            ),
        ),
    }
)
"""The built-in conventions, by the name ``metrics.convention`` gives."""

_UNIT_SETTINGS = ("scope", "matching", "joint", "aggregation")
_SETTINGS = tuple(f.name for f in fields(MetricOptions) if f.name != "convention")


def resolve_options(convention: str | None = None, **settings: Any) -> MetricOptions:
    """One `MetricOptions` from a convention's name and the settings given explicitly (None
    values are not given). Without a convention, figures are made only when a unit setting
    (``scope``, ``matching``, ``joint``, ``aggregation``) is given: ``scope`` then defaults
    to ``turn``.

    Raises:
        ValueError: An unknown convention, matching or setting.
    """
    unknown = set(settings) - set(_SETTINGS)
    if unknown:
        raise ValueError(f"unknown metric settings: {sorted(unknown)}")
    given = {k: v for k, v in settings.items() if v is not None}
    matching = given.get("matching")
    if matching is not None and matching not in SLOT_SCORERS:
        raise ValueError(f"unknown matching {matching!r} (known: {', '.join(SLOT_SCORERS)})")
    if convention is None:
        if any(k in given for k in _UNIT_SETTINGS):
            given.setdefault("scope", "turn")
        return MetricOptions(**given)
    entry = CONVENTIONS.get(convention)
    if entry is None:
        raise ValueError(f"unknown convention {convention!r} (known: {', '.join(CONVENTIONS)})")
    base = entry.options()
    merged = {name: given.get(name, getattr(base, name)) for name in _SETTINGS}
    return MetricOptions(**merged, convention=convention)


def report_prefix(options: MetricOptions) -> str:
    """The prefix of the figures ``options`` give: the convention's name while every unit
    setting (which shapes them) is the convention's, else ``custom``."""
    entry = None if options.convention is None else CONVENTIONS.get(options.convention)
    if entry is None:
        return CUSTOM
    base = entry.options()
    same = all(getattr(options, name) == getattr(base, name) for name in _UNIT_SETTINGS)
    return entry.name if same else CUSTOM
