"""Scorer conventions: presets that make a run report what a published scorer reports.

``metrics: {convention: sgd}`` in a suite picks an entry of `CONVENTIONS`; the same settings can
be given one by one and mixed (a setting given explicitly overrides the convention's). They
resolve into one `MetricOptions` (`resolve_options`). A new convention is **one entry** below,
plus a function in `SLOT_SCORERS` when its matching rule is new. The shape of an entry:

.. code-block:: python

    "sgd": Convention(
        name="sgd",              # what `metrics.convention` says; prefixes its reported names
        source="DSTC8 ...",      # the scorer it reproduces (reports and docs name it)
        scope="frame",           # the units scored: "turn" (a case's scored slots in play),
                                 # "frame" (each service a case names under services_key, with
                                 # every schema slot of that service) or "state" (a case with
                                 # every field either state holds, and the schema's slots)
        matching="sgd",          # a key of SLOT_SCORERS: the score in [0, 1] of a slot that
                                 # both states hold ("policies": the suite's match policies)
        joint="product",         # a unit's joint goal: the "product" of its slot scores, or
                                 # "all_right" (scores are first made 1 when == 1, else 0; the
                                 # matching's score stays the value credit)
        aggregation="unit_mean", # "unit_mean": each figure is the mean of the units' own
                                 # ratios; "pooled": one ratio of the sums over the units
        reported=("joint_goal_accuracy", ...),  # figures of FIGURES (``_unit_metrics.py``) it
                                 # reports, each as "<name>_<figure>"
        list_credit=..., wrong_value=..., averaging=...,  # optional: the conventions of the
                                 # run's own (unprefixed) value P/R/F1, as MetricOptions
        drop_expected=("dontcare",),  # optional: expected values its references never hold
    )

In a unit, a slot neither state holds scores 1, one held by one side only 0, and one held by
both its matching's score. A convention's figures are reported beside stateval's own (whose
names carry no prefix) and never replace them. Their names carry the convention's name only
while every setting that shapes them is the convention's: a suite that changes one (say
``matching: policies`` under ``convention: sgd``) gets ``custom_...`` names, because the
numbers are no longer that scorer's.

The entries: ``sgd`` (DSTC8), ``mwzeval`` (MultiWOZ_Evaluation ``get_dst``), ``trade``
(TRADE's ``evaluate_metrics``), ``dstc10`` (DSTC10 Track 2 ``scores.py``); docs/concepts.md
gives each one's checks against the scorer's own code.

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
from stateval.compare._fuzzywuzzy import partial_ratio, token_sort_ratio
from stateval.compare._metric_options import (
    Aggregation,
    Averaging,
    Joint,
    ListCredit,
    MetricOptions,
    Scope,
    WrongValue,
)
from stateval.compare._mwzeval import normalize_slot_value
from stateval.compare._normalize import json_equal

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
"""Scores a slot both states hold, in [0, 1] (``dstc10``'s pair count can pass 1: 4/3 for
``["1", "one"]`` against ``["1"]``, as the scorer's own)."""


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


def _exact(pair: SlotPair) -> float:
    """TRADE: the values are equal, exactly (TRADE compares ``domain-slot-value`` strings)."""
    return float(json_equal(pair.expected, pair.actual))


def _mwzeval(pair: SlotPair) -> float:
    """mwzeval ``get_dst``: both values through mwzeval's normaliser of the slot
    (``_mwzeval.py``), then right when fuzzywuzzy's ``partial_ratio(hyp, ref) > 95``
    (python-Levenshtein back-end, ``_fuzzywuzzy.py``). A list stands for its first value."""
    hyp = normalize_slot_value(pair.path, _text(_first(pair.actual)))
    ref = normalize_slot_value(pair.path, _text(_first(pair.expected)))
    return float(partial_ratio(hyp, ref) > 95)


_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_DSTC10_NUMBERS = {word: str(i) for i, word in enumerate(_NUMBER_WORDS, start=1)}


def _dstc10_value(value: Any) -> str:
    """``scores.py``'s ``_normalize_value``: lower-cased, a whole "one".."nine" as its digit."""
    text = _text(value).lower()
    return _DSTC10_NUMBERS.get(text, text)


def _distinct(value: Any) -> list[Any]:
    return list(dict.fromkeys(value if isinstance(value, list) else [value]))


def _dstc10(pair: SlotPair) -> float:
    """DSTC10 Track 2 ``scores.py`` (since d556d55): each side's values deduplicated as written,
    pairs equal after lower-casing and whole-value number words ("two" -> "2") counted; the
    slot scores the F1 of that count over both list lengths (right when 1). A single value
    stands for a list of it."""
    refs, hyps = _distinct(pair.expected), _distinct(pair.actual)
    matched = sum(_dstc10_value(r) == _dstc10_value(h) for r in refs for h in hyps)
    if not matched:
        return 0.0
    precision, recall = matched / len(hyps), matched / len(refs)
    return 2 * precision * recall / (precision + recall)


SLOT_SCORERS: Mapping[str, SlotScorer] = MappingProxyType(
    {
        "policies": _policies,
        "sgd": _sgd,
        "exact": _exact,
        "mwzeval": _mwzeval,
        "dstc10": _dstc10,
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
    drop_expected: tuple[str, ...] = ()

    def options(self) -> MetricOptions:
        """This convention's settings."""
        return MetricOptions(
            list_credit=self.list_credit,
            wrong_value=self.wrong_value,
            averaging=self.averaging,
            scope=self.scope,
            matching=self.matching,
            joint=self.joint,
            aggregation=self.aggregation,
            drop_expected=self.drop_expected,
            convention=self.name,
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
        "mwzeval": Convention(
            name="mwzeval",
            source="Tomiinek/MultiWOZ_Evaluation (mwzeval) get_dst, dst=True: its "
            "normalize_data value normaliser, fuzzywuzzy partial_ratio > 95",
            scope="state",
            matching="mwzeval",
            joint="all_right",
            aggregation="pooled",
            reported=("joint_goal_accuracy", "value_precision", "value_recall", "value_f1"),
            drop_expected=("dontcare",),
        ),
        "trade": Convention(
            name="trade",
            source="jasonwu0731/trade-dst models/TRADE.py evaluate_metrics: joint accuracy, "
            "slot accuracy over the slot list (compute_acc), joint F1 per turn (compute_prf)",
            scope="turn",
            matching="exact",
            joint="all_right",
            aggregation="unit_mean",
            reported=("joint_goal_accuracy", "slot_accuracy", "value_f1"),
            averaging="case",
        ),
        "dstc10": Convention(
            name="dstc10",
            source="alexa/alexa-with-dstc10-track2-dataset task1/scripts/scores.py (d556d55, "
            "partial scores for multiple values)",
            scope="turn",
            matching="dstc10",
            joint="all_right",
            aggregation="pooled",
            reported=(
                "joint_goal_accuracy",
                "slot_accuracy",
                "value_precision",
                "value_recall",
                "value_f1",
            ),
            list_credit="partial",
        ),
    }
)
"""The built-in conventions, by the name ``metrics.convention`` gives."""

_UNIT_SETTINGS = ("scope", "matching", "joint", "aggregation", "drop_expected")
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
