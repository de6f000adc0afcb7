"""Field metrics counted in one pass: confusion counts, value precision / recall / F1, DST
per-slot accuracy, joint goal accuracy, and the same broken down by slices of the cases.

Every figure is derived from counts added one case at a time (`MetricsAccumulator.add`), so a
streamed run keeps one small accumulator, never its results.

Outcomes of one field in one case (`Outcome`):

=========== ===================================================================================
correct     both states hold the field and it matches
wrong       both hold it but it does not match (a false discovery)
missing     only the expected state holds it (a false negative)
extra       only the actual state holds it (a false alarm, a hallucination)
absent      neither holds it, and it is a slot of the schema in play (a true negative; known
            only with a slot schema)
=========== ===================================================================================

Value precision / recall / F1 count *credit*: a correct field earns 1, anything else 0, and with
``list_credit="partial"`` a wrong list-valued field earns the F1 of its value list (both lists
set-deduplicated after the field's normalisers). Then ``tp = credit``, ``fp = predicted - credit``
and ``fn = expected - credit`` (``wrong_value="fp"`` counts a wrong value as a false positive
only, as DSTC10 Track 2's scorer does: ``fn = missing``). A ratio whose denominator is zero is 0.0,
except that precision, recall and F1 are 1.0 when there is nothing to find and nothing was found.

DST per-slot accuracy is ``(correct + absent) / scored``; without a slot schema both-absent is
unknown and it is ``correct / compared``. ``averaging="case"`` makes the run's value P/R/F1 the
mean of each case's P/R/F1 (TRADE's convention) instead of pooling the counts (micro).

The run-level aggregation (`MetricsAccumulator`, `RunMetrics`, slices) is in ``_run_metrics.py``.

Example:
    >>> from stateval.compare import compare_states
    >>> from stateval.state import InterpretiveState
    >>> gold = InterpretiveState.from_flat({"tags": ["a", "b"], "city": "Rome"})
    >>> pred = InterpretiveState.from_flat({"tags": ["a", "c"]})
    >>> case = case_metrics(compare_states(gold, pred), options=MetricOptions("partial"))
    >>> [(o.path, o.outcome.value, o.credit) for o in case.outcomes]
    [('tags', 'wrong', 0.5), ('city', 'missing', 0.0)]
    >>> (case.tp, case.fp, case.fn)
    (0.5, 0.5, 1.5)
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

from stateval.compare._comparison import FieldComparison, FieldStatus, StateComparison
from stateval.compare._metric_options import Averaging, MetricOptions, WrongValue
from stateval.compare._policy import MatchPolicy
from stateval.compare._prf import Ratio, prf, strict_figures, value_shares

__all__ = [
    "CaseMetrics",
    "FieldMetrics",
    "MetricOptions",
    "Outcome",
    "SlotOutcome",
    "case_metrics",
    "case_outcomes",
    "list_f1",
    "prf",
    "strict_figures",
    "value_shares",
]


class Outcome(StrEnum):
    """How one field fared in one case (see the module docstring)."""

    CORRECT = "correct"
    WRONG = "wrong"
    MISSING = "missing"
    EXTRA = "extra"
    ABSENT = "absent"


_OF_STATUS = {
    FieldStatus.MATCHING: Outcome.CORRECT,
    FieldStatus.MISMATCHED: Outcome.WRONG,
    FieldStatus.MISSING: Outcome.MISSING,
    FieldStatus.EXTRA: Outcome.EXTRA,
}


@dataclass(frozen=True, slots=True)
class SlotOutcome:
    """One field of one case.

    Attributes:
        path: The field.
        outcome: Correct, wrong, missing, extra or absent.
        credit: Its true-positive credit in value P/R/F1, in [0, 1].
        score: Its score: 1.0 or 0.0, the similarity for a field whose policy says
            ``score: similarity``, and 1.0 when absent.
    """

    path: str
    outcome: Outcome
    credit: float
    score: float


def _key(item: Any, policy: MatchPolicy | None) -> str:
    if isinstance(item, str):
        return "s:" + (item if policy is None else policy.canonical(item))
    if isinstance(item, bool) or item is None:
        return "j:" + json.dumps(item)
    if isinstance(item, int | float):
        return "n:" + repr(float(item))
    return "j:" + json.dumps(item, sort_keys=True, ensure_ascii=False)


def list_f1(expected: Any, actual: Any, policy: MatchPolicy | None = None) -> float:
    """The F1 of two value lists as sets, after ``policy``'s normalisers and synonyms.

    A value that is not a list is a list of one. Two empty lists score 1.0.

    >>> list_f1(["Thai", "thai", "Indian"], ["thai", "chinese"], MatchPolicy(normalize=("case",)))
    0.5
    """
    want = {_key(v, policy) for v in (expected if isinstance(expected, list) else [expected])}
    got = {_key(v, policy) for v in (actual if isinstance(actual, list) else [actual])}
    if not want and not got:
        return 1.0
    return 2 * len(want & got) / (len(want) + len(got))


def _outcome(fc: FieldComparison, options: MetricOptions) -> SlotOutcome:
    outcome = _OF_STATUS[fc.status]
    policy = fc.policy
    if outcome is Outcome.CORRECT:
        credit = 1.0
    elif outcome is Outcome.WRONG and options.list_credit == "partial":
        e = None if fc.expected is None else fc.expected.value
        a = None if fc.actual is None else fc.actual.value
        is_list = isinstance(e, list) or isinstance(a, list)
        alternatives = policy is not None and policy.list_mode == "any_of"
        if is_list and not alternatives and fc.confidence_matched is not False:
            credit = list_f1(e, a, policy)
        else:
            credit = 0.0
    else:
        credit = 0.0
    return SlotOutcome(fc.path, outcome, credit, fc.score)


@lru_cache(maxsize=4096)
def _strict_outcome(path: str, status: FieldStatus) -> SlotOutcome:
    """The outcome of a field a strict policy decided (the same for every case: shared)."""
    right = 1.0 if status is FieldStatus.MATCHING else 0.0
    return SlotOutcome(path, _OF_STATUS[status], right, right)


def case_outcomes(
    comparison: StateComparison,
    *,
    slots: Collection[str] | None = None,
    options: MetricOptions | None = None,
) -> tuple[SlotOutcome, ...]:
    """Every compared field's outcome, then ``absent`` for each slot neither state holds.

    Args:
        comparison: The case's one comparison (fields a policy ignores are already left out).
        slots: The schema slots in play in this case (None: no schema, both-absent unknown).
            Pass only slots whose policy does not ignore them.
        options: Scorer conventions.
    """
    opts = options or MetricOptions()
    partial = opts.list_credit == "partial"
    out = []
    for path, status, made in comparison.items():
        if made is None and (status is not FieldStatus.MISMATCHED or not partial):
            # decided by a strict policy: binary score and credit, no candidates needed
            out.append(_strict_outcome(path, status))
        else:
            field = made if made is not None else comparison.field(path)
            assert field is not None
            out.append(_outcome(field, opts))
    if slots is not None:
        out.extend(
            SlotOutcome(s, Outcome.ABSENT, 0.0, 1.0) for s in slots if comparison.field(s) is None
        )
    return tuple(out)


@dataclass(frozen=True, slots=True)
class FieldMetrics:
    """How one field fared over many cases: confusion counts and the figures derived from them.

    Attributes:
        path: The field.
        correct: Cases where it matched.
        wrong: Cases where both held it and it did not match (false discoveries).
        missing: Cases where only the expected state held it (false negatives).
        extra: Cases where only the actual state held it (false alarms).
        absent: Cases where neither held it and it was a schema slot in play (true negatives);
            None without a slot schema.
        credit: Summed true-positive credit (``correct`` unless list credit is partial).
        score_sum: Summed scores (see `SlotOutcome.score`) over the scored cases.
        wrong_value: Whether a wrong value is a false negative too (``fp_and_fn``) or not.
    """

    path: str
    correct: int = 0
    wrong: int = 0
    missing: int = 0
    extra: int = 0
    absent: int | None = None
    credit: float = 0.0
    score_sum: float = 0.0
    wrong_value: WrongValue = "fp_and_fn"

    @property
    def n(self) -> int:
        """Cases in which the field was compared (either state held it)."""
        return self.correct + self.wrong + self.missing + self.extra

    @property
    def n_scored(self) -> int:
        """Compared cases plus both-absent ones: the denominator of `slot_accuracy`."""
        return self.n + (self.absent or 0)

    @property
    def n_expected(self) -> int:
        """correct + wrong + missing."""
        return self.correct + self.wrong + self.missing

    @property
    def n_predicted(self) -> int:
        """correct + wrong + extra."""
        return self.correct + self.wrong + self.extra

    @property
    def errors(self) -> int:
        """wrong + missing + extra."""
        return self.wrong + self.missing + self.extra

    @property
    def tp(self) -> float:
        """True positives (credit)."""
        return self.credit

    @property
    def fp(self) -> float:
        """False positives: predicted values without credit."""
        return self.n_predicted - self.credit

    @property
    def fn(self) -> float:
        """False negatives: expected values without credit (missing only with ``fp``)."""
        if self.wrong_value == "fp":
            return float(self.missing)
        return self.n_expected - self.credit

    @property
    def precision(self) -> float:
        """tp / (tp + fp) (see `prf` for zero denominators)."""
        return prf(self.tp, self.fp, self.fn)[0]

    @property
    def recall(self) -> float:
        """tp / (tp + fn)."""
        return prf(self.tp, self.fp, self.fn)[1]

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall: counts wrong, missing and extra values."""
        return prf(self.tp, self.fp, self.fn)[2]

    @property
    def accuracy(self) -> float:
        """correct / (correct + wrong + missing): extras are not counted (0.0 when never
        expected). Kept for the ``thresholds.fields`` minimums."""
        return self.correct / self.n_expected if self.n_expected else 0.0

    @property
    def slot_accuracy(self) -> float:
        """DST per-slot accuracy: (correct + absent) / n_scored (0.0 when never scored)."""
        return (self.correct + (self.absent or 0)) / self.n_scored if self.n_scored else 0.0

    @property
    def mean_score(self) -> float:
        """score_sum / n_scored: with a similarity policy, the mean similarity."""
        return self.score_sum / self.n_scored if self.n_scored else 0.0

    def rates(self) -> dict[str, float | None]:
        """Each outcome count over `n_scored`."""
        n = self.n_scored
        counts: dict[str, int | None] = {
            "correct": self.correct,
            "wrong": self.wrong,
            "missing": self.missing,
            "extra": self.extra,
            "absent": self.absent,
        }
        return {k: None if v is None else (v / n if n else 0.0) for k, v in counts.items()}

    def rank_key(self) -> tuple[float, float, int, str]:
        """Worst first: lowest F1 (which counts extras), lowest slot accuracy, most errors."""
        return (self.f1, self.slot_accuracy, -self.errors, self.path)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (counts, rates and figures)."""
        return {
            "path": self.path,
            "n": self.n,
            "n_scored": self.n_scored,
            "correct": self.correct,
            "wrong": self.wrong,
            "missing": self.missing,
            "extra": self.extra,
            "absent": self.absent,
            "errors": self.errors,
            "rates": self.rates(),
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "slot_accuracy": self.slot_accuracy,
            "accuracy": self.accuracy,
            "mean_score": self.mean_score,
        }


@dataclass(frozen=True, slots=True)
class CaseMetrics:
    """One case's metric figures and the counts the run adds up.

    Attributes:
        outcomes: Every field of the case with its outcome.
        tp: True-positive credit of its scored fields.
        fp: False positives.
        fn: False negatives.
        right: Scored slots (fields without a schema) that are correct or absent.
        total: Scored slots (fields).
        has_schema: Whether a slot schema decided what is scored.
        item_outcomes: The sub-fields of aligned lists of records (``line_items[].quantity``),
            one per item: counted in the per-field figures only (their list field already
            counts in the case's figures).
    """

    outcomes: tuple[SlotOutcome, ...]
    tp: float = 0.0
    fp: float = 0.0
    fn: float = 0.0
    right: int = 0
    total: int = 0
    has_schema: bool = False
    item_outcomes: tuple[SlotOutcome, ...] = ()

    @property
    def precision(self) -> float:
        """The case's value precision."""
        return prf(self.tp, self.fp, self.fn)[0]

    @property
    def recall(self) -> float:
        """The case's value recall."""
        return prf(self.tp, self.fp, self.fn)[1]

    @property
    def f1(self) -> float:
        """The case's value F1."""
        return prf(self.tp, self.fp, self.fn)[2]

    def value_shares(self, averaging: Averaging = "micro") -> tuple[Ratio, Ratio, Ratio]:
        """This case's share of the run's value precision, recall and F1, each a
        ``(numerator, denominator)`` that sums over cases to the run's figure (as
        `MetricsAccumulator` reports it): with ``micro`` averaging its counts
        (``tp / (tp + fp)``, ``tp / (tp + fn)``, ``2tp / (2tp + fp + fn)``), with ``case``
        averaging its own precision, recall and F1 over 1.

        >>> CaseMetrics((), tp=1.5, fp=0.5, fn=1.5).value_shares()
        ((1.5, 2.0), (1.5, 3.0), (3.0, 5.0))
        >>> CaseMetrics((), tp=0.0, fp=0.0, fn=0.0).value_shares("case")
        ((1.0, 1.0), (1.0, 1.0), (1.0, 1.0))
        """
        return value_shares(self.tp, self.fp, self.fn, averaging)

    @property
    def joint_goal(self) -> bool:
        """Every scored slot (every compared field without a schema) right."""
        return self.right == self.total

    @property
    def slot_accuracy(self) -> float | None:
        """Right scored slots over scored slots (1.0 when none; None without a schema)."""
        if not self.has_schema:
            return None
        return self.right / self.total if self.total else 1.0

    @property
    def wrong_slots(self) -> tuple[str, ...]:
        """Scored slots that are not right, in order."""
        return tuple(
            o.path for o in self.outcomes if o.outcome not in (Outcome.CORRECT, Outcome.ABSENT)
        )


# outcome -> (right, predicted, expected)
_FLAGS = {
    Outcome.CORRECT: (1, 1, 1),
    Outcome.WRONG: (0, 1, 1),
    Outcome.MISSING: (0, 0, 1),
    Outcome.EXTRA: (0, 1, 0),
    Outcome.ABSENT: (1, 0, 0),
}


def case_metrics(
    comparison: StateComparison,
    *,
    slots: Collection[str] | None = None,
    in_play: Collection[str] | None = None,
    options: MetricOptions | None = None,
) -> CaseMetrics:
    """One case's outcomes and counts from its one comparison.

    Args:
        comparison: The case's comparison.
        slots: The slot schema (None: every compared field is scored, both-absent unknown).
        in_play: The schema slots in play in this case (default: all of ``slots``); only they
            can be both-absent.
        options: Scorer conventions.
    """
    opts = options or MetricOptions()
    if slots is None and comparison.unmade:
        # every field is an unmade strict one (credit 1 or 0): the counts give the figures
        counts = tuple(comparison.counts.values())
        if not counts[1] or opts.list_credit != "partial":
            outcomes = tuple(map(_strict_outcome, comparison.paths, comparison.statuses))
            figures = strict_figures(counts, opts)
            return CaseMetrics(outcomes, *figures, counts[0], len(outcomes), False)
    slot_set = None if slots is None else frozenset(slots)
    outcomes = case_outcomes(
        comparison,
        slots=None if slots is None else (slots if in_play is None else in_play),
        options=opts,
    )
    tp = fp = fn = 0.0
    right = total = 0
    fp_only = opts.wrong_value == "fp"
    for o in outcomes:
        if slot_set is not None and o.path not in slot_set:
            continue
        is_right, predicted, expected = _FLAGS[o.outcome]
        right += is_right
        total += 1
        tp += o.credit
        fp += predicted - o.credit
        if fp_only:
            fn += o.outcome is Outcome.MISSING
        else:
            fn += expected - o.credit
    items = tuple(
        _ITEM_OUTCOME[sub.status](sub.path)
        for _, _, made in comparison.items()
        if made is not None and made.records is not None
        for sub in made.records.sub_outcomes()
    )
    return CaseMetrics(outcomes, tp, fp, fn, right, total, slot_set is not None, items)


_ITEM_OUTCOME = {
    "correct": lambda path: SlotOutcome(path, Outcome.CORRECT, 1.0, 1.0),
    "wrong": lambda path: SlotOutcome(path, Outcome.WRONG, 0.0, 0.0),
    "missing": lambda path: SlotOutcome(path, Outcome.MISSING, 0.0, 0.0),
    "extra": lambda path: SlotOutcome(path, Outcome.EXTRA, 0.0, 0.0),
}
