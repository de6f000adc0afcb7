"""One scoring core: ``stateval run``, the Phoenix evaluators and the harness give the same
numbers, on the MultiWOZ example and on random states."""

from __future__ import annotations

import asyncio
import doctest
import gc
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stateval.compare import (
    FieldPolicies,
    MatchPolicy,
    compare_delta,
    compare_states,
    score_comparison,
    slot_metrics,
    view_accuracy,
)
from stateval.errors import EvaluationConfigError
from stateval.harness import StateEvaluator
from stateval.mutators import StructuredInput
from stateval.phoenix import (
    changed_fields_accuracy,
    edit_operation,
    field_evaluator,
    overall_match,
    preserved_fields_accuracy,
    slot_accuracy,
    state_accuracy,
    task_output,
)
from stateval.run import CaseResult, Scoring, score_case
from stateval.state import InterpretiveState
from stateval.suite import Case, SlotSchema, load_suite
from test_compare_properties import PATHS, field_policies, policies, states

MULTIWOZ = Path(__file__).resolve().parents[1] / "examples" / "multiwoz" / "suite.yaml"
STATE_METRICS = (
    "state_accuracy",
    "overall_match",
    "changed_fields_accuracy",
    "preserved_fields_accuracy",
    "slot_accuracy",
)

Scored = tuple[float | None, str | None]


def _run_path(
    case: Case, actual: InterpretiveState, scoring: Scoring
) -> dict[str, tuple[Scored, str]]:
    result = CaseResult(case.id, actual, None, None, 0.0)
    score = score_case(case, result, scoring)
    return {e.name: ((e.score, e.label), e.explanation) for e in score.evaluations}


def _phoenix_path(
    case: Case, actual: InterpretiveState, policies: FieldPolicies, slots: tuple[str, ...] | None
) -> dict[str, tuple[Scored, str]]:
    row = {
        "input": {"case_id": case.id, "pre_state": case.pre_state.to_dict()},
        "expected": {"post_state": case.expected_post_state.to_dict()},
        "output": task_output(actual),
    }
    evaluators = [
        state_accuracy(policies),
        overall_match(policies),
        changed_fields_accuracy(policies),
        preserved_fields_accuracy(policies),
        *(edit_operation(op, policies) for op in ("keep", "add", "update", "delete")),
    ]
    if slots is not None:
        evaluators.append(slot_accuracy(list(slots), policies))
    paths = dict.fromkeys(case.expected_post_state.paths() + actual.paths())
    evaluators += [field_evaluator(p, policies) for p in paths]
    out = {}
    for evaluator in evaluators:
        score = evaluator.evaluate(row)[0]
        out[score.name] = ((score.score, score.label), score.explanation or "")
    return out


def _harness_path(
    case: Case, actual: InterpretiveState, policies: FieldPolicies, slots: tuple[str, ...] | None
) -> dict[str, float]:
    out = {}
    for metric in STATE_METRICS:
        if metric == "slot_accuracy" and slots is None:
            continue
        evaluator = StateEvaluator(metric, policies=policies, schema=slots)
        result = asyncio.run(
            evaluator.evaluate(
                {"pre_state": case.pre_state.to_dict()},
                actual.to_dict(),
                case.expected_post_state.to_dict(),
            )
        )
        out[metric] = result.score
    return out


def _assert_same(
    case: Case, actual: InterpretiveState, policies: FieldPolicies, slots: tuple[str, ...] | None
) -> None:
    scoring = Scoring(policies, slots)
    run = _run_path(case, actual, scoring)
    phoenix = _phoenix_path(case, actual, policies, slots)
    harness = _harness_path(case, actual, policies, slots)
    scored = {name: value for name, value in phoenix.items() if value[0][0] is not None}
    # every score the run reports, Phoenix reports with the same score, label and explanation
    assert run == scored, case.id
    for metric, number in harness.items():
        if metric in run:
            assert run[metric][0][0] == number, (case.id, metric)
        else:  # an empty delta view: nothing to score, so the harness passes it
            assert phoenix[metric][0] == (None, "empty"), (case.id, metric)
            assert number == 1.0


@pytest.fixture(scope="module")
def multiwoz() -> tuple[list[tuple[Case, InterpretiveState]], FieldPolicies, tuple[str, ...]]:
    suite = load_suite(MULTIWOZ)
    assert suite.mutator is not None
    mutator = suite.mutator

    async def produce() -> list[tuple[Case, InterpretiveState]]:
        return [(c, await mutator.mutate(c.pre_state, c.input)) for c in suite.cases]

    assert suite.slots is not None
    return asyncio.run(produce()), suite.policies, suite.slots


def test_the_three_paths_agree_on_every_multiwoz_case(
    multiwoz: tuple[list[tuple[Case, InterpretiveState]], FieldPolicies, tuple[str, ...]],
) -> None:
    produced, policies, slots = multiwoz
    assert len(produced) == 213
    for case, actual in produced:
        _assert_same(case, actual, policies, slots)
    # the tracker is not perfect: the comparison saw wrong fields, so the agreement is not vacuous
    scores = [_run_path(c, a, Scoring(policies, slots)) for c, a in produced]
    assert {s["overall_match"][0][1] for s in scores} == {"match", "mismatch"}


def _unjudged(policy: MatchPolicy) -> MatchPolicy:
    return replace(policy, judge=None, rubric=None)


# Without an LLM judge: a run reads journaled verdicts, Phoenix asks a live judge.
UNJUDGED_POLICIES = st.builds(
    FieldPolicies,
    st.dictionaries(
        st.sampled_from(["a", "c.*", "*.h", "b"]), policies().map(_unjudged), max_size=3
    ),
    default=policies().map(_unjudged),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    states(),
    states(),
    states(),
    UNJUDGED_POLICIES,
    st.none() | st.lists(PATHS, min_size=1, max_size=4, unique=True).map(tuple),
)
def test_the_three_paths_agree_on_random_states(
    pre: InterpretiveState,
    expected: InterpretiveState,
    actual: InterpretiveState,
    rules: FieldPolicies,
    slots: tuple[str, ...] | None,
) -> None:
    case = Case("c", pre, StructuredInput("p", "m1"), expected)
    _assert_same(case, actual, rules, slots)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states(), states(), states(), UNJUDGED_POLICIES, st.booleans())
def test_a_case_score_reads_its_accuracy_as_its_state_accuracy_evaluation(
    pre: InterpretiveState,
    expected: InterpretiveState,
    actual: InterpretiveState,
    rules: FieldPolicies,
    failed: bool,
) -> None:
    # The run counts `accuracy` without making any evaluation; it must be the evaluation's score
    # (the empty turn's 1.0, a failed mutator's 0.0 included).
    case = Case("c", pre, StructuredInput("p", "m1"), expected)
    if failed:
        result = CaseResult("c", None, "boom", "RuntimeError", 0.0)
    else:
        result = CaseResult("c", actual, None, None, 0.0)
    counted = score_case(case, result, Scoring(rules)).accuracy
    evaluated = score_case(case, result, Scoring(rules)).evaluation("state_accuracy")
    assert evaluated is not None
    assert counted == evaluated.score


def test_a_scored_case_is_freed_when_dropped_not_left_to_the_garbage_collector() -> None:
    # a run scores 100,000 cases: a reference cycle per case would leave each case's objects
    # to the collector; the scoring core's scores are made once and shared
    pre = InterpretiveState.from_flat({"a": "1", "b": "2"})
    expected = InterpretiveState.from_flat({"a": "1", "b": "3"})
    case = Case("c", pre, StructuredInput("p", "m1"), expected)
    result = CaseResult("c", InterpretiveState.from_flat({"a": "1", "b": "2"}), None, None, 0.0)
    scoring = Scoring()
    gc.collect()
    gc.disable()
    try:
        score = score_case(case, result, scoring)
        core = score.case_scores()
        assert core is not None
        assert score.case_scores() is core
        assert [e.name for e in score.evaluations][:2] == ["state_accuracy", "overall_match"]
        del score, core
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_the_empty_turn_scores_one_everywhere() -> None:
    empty = InterpretiveState()
    case = Case("c", empty, StructuredInput("p", "m1"), empty)
    run = _run_path(case, empty, Scoring())
    assert run["state_accuracy"][0] == (1.0, "empty")
    # an empty delta view has no score: the run leaves it out, Phoenix gives label "empty"
    assert "changed_fields_accuracy" not in run
    assert "preserved_fields_accuracy" not in run
    phoenix = _phoenix_path(case, empty, FieldPolicies(), None)
    assert phoenix["preserved_fields_accuracy"][0] == (None, "empty")
    assert _phoenix_path(case, empty, FieldPolicies(), None)["state_accuracy"][0] == (1.0, "empty")
    assert _harness_path(case, empty, FieldPolicies(), None)["state_accuracy"] == 1.0
    # producing a field nobody asked for is wrong, even with nothing expected
    invented = InterpretiveState.from_flat({"hotel.area": "north"})
    assert _run_path(case, invented, Scoring())["state_accuracy"][0] == (0.0, None)


@settings(max_examples=60)
@given(states(), states(), states(), field_policies(), st.lists(PATHS, max_size=4, unique=True))
def test_views_are_derived_from_the_one_comparison(
    pre: InterpretiveState,
    expected: InterpretiveState,
    actual: InterpretiveState,
    rules: FieldPolicies,
    schema: list[str],
) -> None:
    scores = score_comparison(
        compare_states(expected, actual, rules),
        policies=rules,
        pre=pre,
        expected=expected,
        slots=schema,
    )
    assert scores.delta == compare_delta(pre, expected, actual, rules)
    slot = scores.slot_accuracy()
    assert slot is not None
    if any(not rules.for_path(s).ignore for s in schema):
        reference = slot_metrics([(expected, actual)], schema, rules)
        assert slot.score == pytest.approx(reference.slot_accuracy)
    changed = scores.changed_fields_accuracy()
    assert changed is not None
    assert changed.score == view_accuracy(compare_delta(pre, expected, actual, rules).changed)
    state = scores.state_accuracy()
    assert state.score == (
        1.0 if not scores.comparison.fields else view_accuracy(scores.comparison)
    )


def test_docstring_examples_run() -> None:
    import stateval.compare._scores

    result = doctest.testmod(stateval.compare._scores)
    assert result.attempted > 0
    assert result.failed == 0


# Two services: "a" and "b" belong to s1, "c.d" and "c.e" to s2 ("f.g.h" to none).
BY_SERVICE = {"s1": ["a", "b"], "s2": ["c.d", "c.e"]}
SERVICES = SlotSchema.from_data(
    [
        {"service_name": name, "slots": [{"name": p, "path": p} for p in paths]}
        for name, paths in BY_SERVICE.items()
    ],
    fuzzy=None,
)


def _slot_accuracy_of_run(case: Case, actual: InterpretiveState, rules: FieldPolicies) -> Scored:
    scoring = Scoring(rules, SERVICES.paths, schema=SERVICES, services_key="metadata.services")
    return _run_path(case, actual, scoring)["slot_accuracy"][0]


def _slot_accuracy_of_evaluator(
    case: Case, actual: InterpretiveState, rules: FieldPolicies
) -> Scored:
    evaluator = slot_accuracy(BY_SERVICE, rules, services_key="metadata.services")
    row = {
        "expected": {"post_state": case.expected_post_state.to_dict()},
        "output": task_output(actual),
        "metadata": dict(case.metadata),
    }
    score = evaluator.evaluate(row)[0]
    return score.score, score.label


def test_the_slot_accuracy_evaluator_counts_only_the_services_in_play() -> None:
    expected = InterpretiveState.from_flat({"a": "x"})
    actual = InterpretiveState.from_flat({"a": "y"})
    rules = FieldPolicies()
    hotel = Case(
        "c", InterpretiveState(), StructuredInput("p", "m1"), expected, {"services": ["s1"]}
    )
    # in play: a (wrong) and b (absent on both sides: right) -> 1 of 2
    assert _slot_accuracy_of_evaluator(hotel, actual, rules) == (0.5, "some_wrong")
    # naming no service plays every slot: a wrong, b, c.d, c.e right -> 3 of 4
    unnamed = replace(hotel, metadata={})
    assert _slot_accuracy_of_evaluator(unnamed, actual, rules) == (0.75, "some_wrong")
    # a slot of a service not in play still counts when a state holds it
    invented = InterpretiveState.from_flat({"a": "x", "c.d": "z"})
    assert _slot_accuracy_of_evaluator(hotel, invented, rules) == (2 / 3, "some_wrong")
    # one service name (not a list) works too, and the run agrees in each case
    single = replace(hotel, metadata={"services": "s2"})
    assert _slot_accuracy_of_evaluator(single, actual, rules) == (2 / 3, "some_wrong")
    for case, state in ((hotel, actual), (unnamed, actual), (hotel, invented), (single, actual)):
        assert _slot_accuracy_of_run(case, state, rules) == _slot_accuracy_of_evaluator(
            case, state, rules
        )


def test_services_key_needs_a_schema_by_service() -> None:
    with pytest.raises(EvaluationConfigError, match="services_key needs the schema by service"):
        slot_accuracy(["a", "b"], services_key="metadata.services")
    assert SERVICES.by_service() == BY_SERVICE


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    states(),
    states(),
    UNJUDGED_POLICIES,
    st.none() | st.sampled_from(["s1", "s2", "s3"]) | st.lists(st.sampled_from(["s1", "s2"])),
)
def test_run_and_evaluator_agree_on_slot_accuracy_with_services_in_play(
    expected: InterpretiveState,
    actual: InterpretiveState,
    rules: FieldPolicies,
    services: str | list[str] | None,
) -> None:
    metadata = {} if services is None else {"services": services}
    case = Case("c", InterpretiveState(), StructuredInput("p", "m1"), expected, metadata)
    assert _slot_accuracy_of_run(case, actual, rules) == _slot_accuracy_of_evaluator(
        case, actual, rules
    )
