"""A case decided as columns (`stateval.compare.strict_case`: three flat states of strings under
one strict policy) reads, and is scored, counted and journaled, exactly as the general path
compares, splits, edits and counts it field by field."""

from __future__ import annotations

import pickle
from contextlib import nullcontext
from dataclasses import replace
from typing import Any
from unittest import mock

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from stateval.compare import (
    EditTally,
    FieldPolicies,
    MatchPolicy,
    MetricOptions,
    MetricsAccumulator,
    compare_states,
    field_edits,
    split_delta,
    strict_case,
)
from stateval.compare._strict_shape import HELD
from stateval.mutators import StructuredInput
from stateval.run import SCORES_KEY, CaseResult, RunTally, Scoring, compact_scores, score_case
from stateval.run._compact_scores import compact_scores_json
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import Case

PATHS = st.sampled_from(["a", "b", "c.d", "c.e", "f", "g"])
TEXTS = st.sampled_from(["x", "y", "z", ""])
CONFIDENCES = st.sampled_from([1.0, 0.5])
STRICT = st.sampled_from([FieldPolicies(), FieldPolicies(default=MatchPolicy(confidence="ignore"))])


def _flat(values: dict[str, Any], confidence: float) -> InterpretiveState:
    return InterpretiveState.from_flat(values, confidence=confidence)


TEXT_STATES = st.builds(_flat, st.dictionaries(PATHS, TEXTS, max_size=5), CONFIDENCES)


@given(TEXT_STATES, TEXT_STATES, TEXT_STATES, STRICT)
def test_a_case_decided_as_columns_reads_like_its_comparison_split_and_edits(
    pre: InterpretiveState,
    expected: InterpretiveState,
    actual: InterpretiveState,
    policies: FieldPolicies,
) -> None:
    case = strict_case(pre, expected, actual, policies)
    assert case is not None
    general = compare_states(expected, actual, policies)
    assert case.comparison.counts == general.counts  # read before deciding: from the columns
    assert case.comparison.paths == general.paths
    assert case.comparison.statuses == general.statuses
    assert case.comparison.unmatched() == tuple(f for f in general.fields if not f.matched)
    assert case.comparison.fields == general.fields  # made from the status codes
    assert [f.to_dict() for f in case.comparison.fields] == [f.to_dict() for f in general.fields]
    split, delta = split_delta(general, pre, expected, policies), case.delta()
    assert (delta.changed_paths, delta.preserved_paths) == (
        split.changed_paths,
        split.preserved_paths,
    )
    assert delta.changed.paths == split.changed.paths
    assert delta.preserved.statuses == split.preserved.statuses
    assert case.edits() == field_edits(pre, expected, actual, policies, general)
    paths, confidences, right = general.value_columns()
    held, correct = case.value_columns()
    assert (held, list(map(bool, correct))) == (tuple(paths), right)
    assert all(c == case.confidence for c in confidences)


@given(
    st.builds(_flat, st.dictionaries(PATHS, st.integers(0, 2) | TEXTS, max_size=4), CONFIDENCES),
    TEXT_STATES,
    STRICT | st.just(FieldPolicies(default=MatchPolicy(normalize=("case",)))),
)
def test_only_flat_states_of_strings_under_one_strict_policy_are_decided_as_columns(
    other: InterpretiveState, texts: InterpretiveState, policies: FieldPolicies
) -> None:
    strings = all(isinstance(v, str) for v in other.to_flat().values())
    strict = policies.uniform_mode in ("strict", "strict_value")
    made = strict_case(texts, other, texts, policies)
    assert (made is not None) == (strings and strict)
    candidates = InterpretiveState()
    candidates.add_value("a", ValueConfidence("x", 1.0))
    candidates.add_value("a", ValueConfidence("y", 0.5))
    assert strict_case(texts, texts, candidates, policies) is None  # not flat


@st.composite
def runs(draw: st.DrawFn) -> tuple[Scoring, list[Case], list[CaseResult]]:
    """A scoring with strict policies and a few cases: most of flat states of strings, some
    with a number (the general path), some failed calls."""
    options = MetricOptions(
        draw(st.sampled_from(["all_or_nothing", "partial"])),
        draw(st.sampled_from(["fp_and_fn", "fp"])),
        draw(st.sampled_from(["micro", "case"])),
    )
    scoring = Scoring(draw(STRICT), slices=("kind",), metric_options=options)
    cases, results = [], []
    for i in range(draw(st.integers(1, 8))):
        values = TEXTS | st.integers(0, 1) if draw(st.booleans()) else TEXTS
        pre, expected, actual = (
            draw(st.builds(_flat, st.dictionaries(PATHS, v, max_size=5), CONFIDENCES))
            for v in (TEXTS, values, TEXTS)
        )
        kind = draw(st.sampled_from([{}, {"kind": "a"}, {"kind": ["a", "b"]}]))
        cases.append(Case(f"c{i}", pre, StructuredInput(str(i), "m"), expected, kind))
        failed = draw(st.integers(0, 5)) == 0
        error = "boom" if failed else None
        results.append(CaseResult(f"c{i}", None if failed else actual, error, error, 0.25))
    # the same cases again under other ids: counted once per distinct case, then multiplied
    once = list(zip(cases, results, strict=True))
    for k in range(1, draw(st.integers(1, 3))):
        cases += [replace(c, id=f"{c.id}.{k}") for c, _ in once]
        results += [replace(r, case_id=f"{r.case_id}.{k}") for _, r in once]
    return scoring, cases, results


def _scored(
    scoring: Scoring, cases: list[Case], results: list[CaseResult], columns: bool
) -> tuple[list[bytes], bytes, bytes]:
    """Each result record (with its compact scores), the JSON report and the tally's counts
    pickled and merged again, scored as a run scores them (decided as columns or not)."""
    off = mock.patch("stateval.run._scoring.strict_case", return_value=None)
    with nullcontext() if columns else off:
        tally, figures = RunTally(scoring), scoring.accumulator()
        records, scores = [], []
        for index, (case, result) in enumerate(zip(cases, results, strict=True)):
            score = score_case(case, result, scoring)
            assert (score.strict_under(scoring) is not None) <= columns
            tally.add(case, score, index)
            record = score.result.to_dict()
            record[SCORES_KEY] = compact_scores(case, score, scoring, figures)
            records.append(orjson.dumps(record))
            # what a journal line holds: the same, encoded (once per distinct outcome)
            encoded, made = compact_scores_json(case, score, scoring, figures), record[SCORES_KEY]
            assert encoded == (None if made is None else orjson.dumps(made))
            scores.append(score)
        summary = tally.summary(tuple(scores), suite_name="s", run_id="r", n_planned=len(cases))
        report = orjson.dumps(summary.to_dict())
        merged = RunTally(scoring)
        merged.merge(
            pickle.loads(pickle.dumps(tally.part())),
            range(len(cases)),
            lambda i: (cases[i], scores[i]),
        )
        again = merged.summary((), suite_name="s", run_id="r", n_planned=len(cases))
    return records, report, orjson.dumps(again.to_dict())


@settings(max_examples=200, deadline=None)
@given(runs())
def test_a_run_scored_off_columns_journals_and_reports_what_the_general_path_does(
    run: tuple[Scoring, list[Case], list[CaseResult]],
) -> None:
    assert _scored(*run, columns=True) == _scored(*run, columns=False)


def test_columns_are_used_on_strict_flat_cases_and_counted_a_few_distinct_at_a_time() -> None:
    pre = _flat({"a": "x", "b": "y"}, 1.0)
    expected = _flat({"a": "x", "b": "z"}, 1.0)
    scoring = Scoring()
    metrics, edits = MetricsAccumulator(), EditTally()
    for i in range(1000):
        actual = _flat({"a": "x", "b": "z" if i % 3 else "y"}, 1.0)
        case = strict_case(pre, expected, actual, scoring.policies)
        assert case is not None
        metrics.add_strict(case)
        edits.add_strict(case)
    assert len(metrics._pending) == len(edits._pending) == 2  # two distinct cases held
    # pickled (a worker's counts) as counts: the cases held are counted first
    assert pickle.loads(pickle.dumps(metrics)).result() == metrics.result()
    assert pickle.loads(pickle.dumps(edits)).result() == edits.result()
    b = metrics.result().fields["b"]
    assert (b.correct, b.wrong, b.credit) == (666, 334, 666.0)
    assert edits.result().pooled.errors == edits.result().fields["b"].errors == {"stale": 334}


def test_the_distinct_cases_held_are_bounded_and_counted_in_order_of_first_sight() -> None:
    # every case of its own paths: at most HELD held, the rest counted as they come, and the
    # per-field counts made in the order the cases show the paths
    pre = _flat({"a": "x"}, 1.0)
    metrics, edits = MetricsAccumulator(), EditTally()
    for i in range(HELD * 2 + 7):
        state = _flat({"a": "x", f"p{i}": "y"}, 1.0)
        case = strict_case(pre, state, state, FieldPolicies())
        assert case is not None
        metrics.add_strict(case)
        edits.add_strict(case)
        assert len(metrics._pending) <= HELD
        assert len(edits._pending) <= HELD
    fields = metrics.result().fields
    assert list(fields)[:3] == ["a", "p0", "p1"]
    assert len(fields) == HELD * 2 + 8
    assert (fields["a"].correct, fields["p9"].correct) == (HELD * 2 + 7, 1)
    assert edits.result().pooled.cells == {
        ("keep", "keep"): HELD * 2 + 7,
        ("add", "add"): HELD * 2 + 7,
    }


def test_cases_of_one_outcome_share_a_shape_and_a_tally_holds_equal_statuses_once() -> None:
    pre = _flat({"a": "x", "b": "y"}, 1.0)
    policies = FieldPolicies()
    same = [
        strict_case(
            pre, _flat({"a": "x", "b": f"z{i}"}, 1.0), _flat({"a": "x", "b": "w"}, 1.0), policies
        )
        for i in range(3)
    ]
    assert all(c is not None for c in same)
    assert len({id(c.shape) for c in same if c is not None}) == 1  # values differ, shape shared
    # the same statuses (b wrong) from other edits: held once by the metrics, twice by the edits
    stale = strict_case(pre, _flat({"a": "x", "b": "z"}, 1.0), pre, policies)
    assert stale is not None
    assert stale.shape is not same[0].shape  # type: ignore[union-attr]
    metrics, edits = MetricsAccumulator(), EditTally()
    for case in [*same, stale]:
        assert case is not None
        metrics.add_strict(case)
        edits.add_strict(case)
    assert (len(metrics._pending), len(edits._pending)) == (1, 2)
    b = metrics.result().fields["b"]
    assert (b.correct, b.wrong) == (0, 4)
    assert edits.result().fields["b"].errors == {"wrong_update": 3, "stale": 1}


def test_shapes_and_path_numbers_made_again_count_alike() -> None:
    # shapes and path numbers dropped between cases (a small table): equal figures
    from stateval.compare import _strict_shape

    def figures() -> tuple[object, object]:
        metrics, edits = MetricsAccumulator(), EditTally()
        pre = _flat({"a": "x", "b": "y"}, 1.0)
        for i in range(40):
            expected = _flat({"a": "x", "b": "z", f"p{i % 7}": "q"}, 1.0)
            actual = _flat({"a": "x", "b": "z" if i % 3 else "y", f"p{i % 5}": "q"}, 1.0)
            case = strict_case(pre, expected, actual, FieldPolicies())
            assert case is not None
            metrics.add_strict(case)
            edits.add_strict(case)
        return metrics.result(), edits.result()

    kept = figures()
    with (
        mock.patch.object(_strict_shape, "SHAPES", 2),
        mock.patch.object(_strict_shape, "PATH_SETS", 2),
    ):
        assert figures() == kept
