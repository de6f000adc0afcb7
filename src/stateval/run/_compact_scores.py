"""What a diff reads of each case, journaled with its result under a fingerprint of the
scoring settings, so ``stateval diff`` and the ``--baseline`` gate need not score a run again.

A run's header holds `scores_fingerprint` of the suite it runs (policies, slot schema, checks,
``metrics:`` settings, slices, the cases' hash and stateval's version; not the mutator, the
thresholds or Phoenix names), and each result record the run writes holds ``"scores"``: the
case's `compact_scores`, about 0.5 KB for 20 fields:

- ``s``: score name -> score, of each field evaluation (``field:<path>``, sub-fields of lists
  of records too) and of the case-level scores a diff's metrics read (``state_accuracy``,
  ``overall_match``, ``changed_fields_accuracy``, ``preserved_fields_accuracy``,
  ``slot_accuracy``), as the scoring core gives them (`stateval.compare.CaseScores`);
- ``x``: the field evaluations labelled ``extra``;
- ``slots``: ``[right, total]`` schema slots, with a slot schema;
- ``ops``: expected edit operation -> ``[right, n, {error: count}]``;
- ``shares``: run-summary figure -> the case's ``[numerator, denominator]`` share of it
  (`stateval.compare.MetricsAccumulator.case_shares`).

The diff reads these when the run's fingerprint equals the current suite's, and scores the
journal again otherwise (a run journaled before them, or a suite whose policies changed since:
both sides of a diff must be scored alike). `stateval.regressions` turns them into the same
observations scoring the case again gives, and scores a case again through this same function,
so the two ways give the same figures.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from itertools import compress
from typing import Any

import orjson
from pydantic import BaseModel

from stateval.compare import (
    CELLS,
    EDIT_CODE_OPS,
    FIELD_PREFIX,
    SCORED_OPS,
    EditError,
    EditOp,
    FieldStatus,
    MetricsAccumulator,
    Shape,
    StateComparison,
    StrictCase,
)
from stateval.run._results import CaseScore
from stateval.run._scoring import Scoring
from stateval.suite import Case

__all__ = ["SCORES_KEY", "compact_scores", "compact_scores_json", "scores_fingerprint"]

SCORES_KEY = "scores"
"""The key of a result record that holds its case's `compact_scores`."""
_FORMAT = 1  # bump when what `compact_scores` writes changes


def scores_fingerprint(scoring: Scoring, cases_hash: str) -> str:
    """A hash of what a case's scores depend on besides its result: ``scoring`` (not its
    thresholds), the cases (``cases_hash``) and stateval's version."""
    from stateval._version import __version__

    settings = {
        name: _canonical(getattr(scoring, name))
        for name in (
            "policies",
            "slots",
            "checks",
            "schema",
            "services_key",
            "slices",
            "metric_options",
            "seen_services",
        )
    }
    data = {"format": _FORMAT, "stateval": __version__, "cases": cases_hash, **settings}
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _canonical(value: object) -> object:
    """``value`` as plain JSON data that is the same in every process (sets sorted, mappings
    in their order, a function by its name)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, enum.Enum):
        return _canonical(value.value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _canonical(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if isinstance(value, Mapping):
        out = [[str(k), _canonical(v)] for k, v in value.items()]
        default = getattr(value, "default", None)  # FieldPolicies: its rules and default
        return [out, _canonical(default)] if default is not None else out
    if isinstance(value, set | frozenset):
        return sorted((_canonical(v) for v in value), key=repr)
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    name = getattr(value, "__qualname__", None)
    if name is not None:
        return f"{getattr(value, '__module__', '')}.{name}"
    return repr(value)


def compact_scores(
    case: Case, score: CaseScore, scoring: Scoring, figures: MetricsAccumulator
) -> dict[str, Any] | None:
    """What a diff reads of one scored case (see the module docstring), or None when the
    score has no scoring core (its evaluations were given, not made).

    ``figures`` (``scoring.accumulator()``, nothing counted) gives the case's shares of the
    run-summary figures.
    """
    strict = score.strict_under(scoring)
    if strict is not None:
        return _strict_scores(case, score, scoring, figures, strict)
    core = score.case_scores()
    if core is None:
        return None
    failed = core.failure is not None
    scores: dict[str, float] = {
        "state_accuracy": score.accuracy,
        "overall_match": 0.0 if failed else float(core.comparison.overall_match),
    }
    delta = core.delta
    if delta is not None:
        if failed:
            scores["changed_fields_accuracy"] = scores["preserved_fields_accuracy"] = 0.0
        else:
            scores.update(_delta_scores(core.comparison, frozenset(delta.preserved_paths)))
    out: dict[str, Any] = {"s": scores}
    slots = core.slots
    if slots is not None:
        scores["slot_accuracy"] = slots.slot_accuracy if slots.slot_accuracy is not None else 0.0
        out["slots"] = [slots.right, slots.total]
    outcomes = core.field_outcomes()
    if outcomes:
        names, values, labels = zip(*outcomes, strict=True)
        scores.update(zip(names, values, strict=True))
        extra = list(compress(names, map("extra".__eq__, labels)))
        if extra:
            out["x"] = extra
    if core.edits is not None:
        by_op: dict[EditOp, list[Any]] = {}  # op -> [right, n, {error: count}]
        for edit in core.edits:
            _count_edit(by_op, edit.expected, edit.error, 1)
        out["ops"] = _ops(by_op)
    shares = figures.case_shares(
        score.metrics_under(scoring, case), case.metadata, score.comparison
    )
    out["shares"] = {name: list(pair) for name, pair in shares.items()}
    return out


_MEMO_MAX = 1024
"""Distinct encoded compact scores `compact_scores_json` holds (then it starts again)."""
_MEMO: dict[tuple[object, float, Shape], bytes] = {}


def compact_scores_json(
    case: Case, score: CaseScore, scoring: Scoring, figures: MetricsAccumulator
) -> bytes | None:
    """`compact_scores` as a result record's line holds them (``orjson.dumps``), or None.

    A case decided as columns whose scores read nothing but its columns (no slot schema, no
    convention's figures: `stateval.compare.MetricsAccumulator.counts_strict`) has them made
    once per shape (`stateval.compare.StrictCase.shape`), accuracy and metric options: a
    run's cases mostly share a few (at most `_MEMO_MAX` are held).

    Raises:
        orjson.JSONEncodeError: orjson refuses them (`encode_result` encodes their dict).
    """
    strict = score.strict_under(scoring)
    if strict is not None and figures.counts_strict and scoring.slots is None:
        key = (figures.options, score.accuracy, strict.shape)
        made = _MEMO.get(key)
        if made is None:
            if len(_MEMO) >= _MEMO_MAX:
                _MEMO.clear()
            made = _MEMO[key] = orjson.dumps(_strict_scores(case, score, scoring, figures, strict))
        return made
    scores = compact_scores(case, score, scoring, figures)
    return None if scores is None else orjson.dumps(scores)


def _strict_scores(
    case: Case,
    score: CaseScore,
    scoring: Scoring,
    figures: MetricsAccumulator,
    strict: StrictCase,
) -> dict[str, Any]:
    """`compact_scores` of a case decided as columns (`stateval.compare.strict_case`), read
    off them: the same record as the scoring core's (a property test holds them equal)."""
    matching, mismatched, missing, extra = strict.counts
    scores: dict[str, float] = {
        "state_accuracy": score.accuracy,
        "overall_match": float(not (mismatched or missing or extra)),
    }
    n_kept, kept_matching = strict.kept_counts()  # kept: expected paths, never extra
    scores.update(_delta_figures(len(strict.paths), extra, matching, n_kept, 0, kept_matching))
    out: dict[str, Any] = {"s": scores}
    metrics = None if scoring.slots is None else score.metrics_under(scoring, case)
    if metrics is not None:
        scores["slot_accuracy"] = metrics.slot_accuracy or 0.0
        out["slots"] = [metrics.right, metrics.total]
    if strict.paths:
        names = _field_names(strict.paths)
        scores.update(zip(names, map(_SCORE_OF.__getitem__, strict.statuses_code), strict=True))
        if extra:
            out["x"] = list(names[strict.n_expected :])
    out["ops"] = {
        op: [right, k, dict(errors)] for op, right, k, errors in _strict_ops(strict.edit_code)
    }
    shares = figures.case_shares(metrics or strict, case.metadata, score.comparison)
    out["shares"] = {name: list(pair) for name, pair in shares.items()}
    return out


_SCORE_OF = (1.0, 0.0, 0.0, 0.0)  # a status code -> its field's score (matching or not)


@lru_cache(maxsize=256)
def _field_names(paths: tuple[str, ...]) -> tuple[str, ...]:
    """The field evaluations' names of ``paths`` (shared by the cases of the same paths)."""
    return tuple(FIELD_PREFIX + path for path in paths)


@lru_cache(maxsize=1024)
def _strict_ops(codes: bytes) -> tuple[tuple[str, int, int, tuple[tuple[str, int], ...]], ...]:
    """``ops`` of field edits given as codes (`stateval.compare.StrictCase.edit_code`), as
    `compact_scores` counts them (shared by the cases of the same codes)."""
    by_op: dict[EditOp, list[Any]] = {}
    for code, k in Counter(codes).items():  # codes in the order first seen
        expected, actual, wrong = EDIT_CODE_OPS[code]
        _count_edit(by_op, expected, CELLS[(expected, actual)] if wrong else None, k)
    return tuple(
        (op, right, k, tuple(errors.items())) for op, (right, k, errors) in _ops(by_op).items()
    )


def _count_edit(
    by_op: dict[EditOp, list[Any]], expected: EditOp, error: EditError | None, n: int
) -> None:
    """Count ``n`` field edits of ``expected`` operation and ``error`` into ``by_op``."""
    counts = by_op.get(expected)
    if counts is None:
        counts = by_op[expected] = [0, 0, {}]
    counts[1] += n
    if error is None:
        counts[0] += n
    else:
        counts[2][error] = counts[2].get(error, 0) + n


def _ops(by_op: dict[EditOp, list[Any]]) -> dict[str, Any]:
    """``ops`` of the compact scores: expected operation -> ``[right, n, {error: count}]``."""
    return {
        op.value: [right, n, {e.value: k for e, k in errors.items()}]
        for op, (right, n, errors) in by_op.items()
        if op in SCORED_OPS
    }


def _delta_scores(comparison: StateComparison, preserved: frozenset[str]) -> dict[str, float]:
    """``changed_fields_accuracy`` and ``preserved_fields_accuracy`` as the scoring core gives
    them (`view_accuracy` of each delta view; none for an empty view), counted from the
    comparison's statuses instead of deciding each view (the views partition its paths)."""
    paths, statuses = comparison.paths, comparison.statuses
    kept = list(compress(statuses, map(preserved.__contains__, paths)))
    matching, _, _, extra = comparison.counts.values()
    kept_matching, kept_extra = kept.count(FieldStatus.MATCHING), kept.count(FieldStatus.EXTRA)
    return _delta_figures(len(paths), extra, matching, len(kept), kept_extra, kept_matching)


def _delta_figures(
    n_paths: int, extra: int, matching: int, n_kept: int, kept_extra: int, kept_matching: int
) -> dict[str, float]:
    """The two delta scores from the comparison's counts (paths, extra, matching) and its
    preserved view's (paths, extra, matching)."""
    out = {}
    for name, n_view, expected, right in (  # [paths, expected, matching] of each view
        (
            "changed_fields_accuracy",
            n_paths - n_kept,
            n_paths - extra - (n_kept - kept_extra),
            matching - kept_matching,
        ),
        ("preserved_fields_accuracy", n_kept, n_kept - kept_extra, kept_matching),
    ):
        if n_view:
            out[name] = right / expected if expected else 0.0
    return out
