"""Property-based tests of compare_states: invariants that must hold for any states and policy."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from stateval.compare import (
    NORMALIZERS,
    FieldPolicies,
    FieldStatus,
    MatchPolicy,
    MetricOptions,
    case_metrics,
    compare_states,
    field_edits,
    score_comparison,
)
from stateval.state import InterpretiveState, ValueConfidence

PATHS = st.sampled_from(["a", "b", "c.d", "c.e", "f.g.h"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(-5, 5, allow_nan=False)
    | st.sampled_from(["x", "X", " x ", "two", "2", "center", "centre", "a|b", "hotel", ""])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("kl"), inner),
    max_leaves=6,
)
CONFIDENCES = st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0])


@st.composite
def states(draw: st.DrawFn) -> InterpretiveState:
    state = InterpretiveState()
    for path in draw(st.lists(PATHS, max_size=5)):
        state.add_value(path, ValueConfidence(draw(VALUES), draw(CONFIDENCES)))
    return state


@st.composite
def policies(draw: st.DrawFn) -> MatchPolicy:
    list_mode = draw(st.sampled_from(["exact", "set", "any_of"]))
    confidence = draw(st.sampled_from(["exact", "ignore"]))
    judge = draw(st.sampled_from([None, "llm"]))
    kwargs: dict[str, Any] = {
        "confidence": confidence,
        "confidence_tolerance": (
            draw(st.none() | st.floats(0, 0.5)) if confidence == "exact" else None
        ),
        "normalize": tuple(draw(st.lists(st.sampled_from(NORMALIZERS), max_size=4))),
        "synonyms": draw(st.sampled_from([{}, {"center": "centre", "any": "dontcare"}])),
        "numeric_tolerance": draw(st.none() | st.floats(0, 2)),
        "list_mode": list_mode,
        "alternatives_separator": draw(st.sampled_from([None, "|"]))
        if list_mode == "any_of"
        else None,
        "fuzzy": draw(st.none() | st.floats(0, 1)),
        "judge": judge,
        "rubric": draw(st.sampled_from([None, "r"])) if judge else None,
    }
    return MatchPolicy(**kwargs)


@st.composite
def field_policies(draw: st.DrawFn) -> FieldPolicies:
    rules = draw(st.dictionaries(st.sampled_from(["a", "c.*", "*.h", "b"]), policies(), max_size=3))
    return FieldPolicies(rules, default=draw(policies()))


@given(states(), field_policies())
def test_a_state_compared_with_itself_matches_fully(
    state: InterpretiveState, rules: FieldPolicies
) -> None:
    result = compare_states(state, state.copy(), rules)
    assert result.overall_match
    assert result.accuracy_score == (1.0 if result.fields else 0.0)


@given(states(), states(), field_policies())
def test_counts_add_up_to_the_union(
    expected: InterpretiveState, actual: InterpretiveState, rules: FieldPolicies
) -> None:
    result = compare_states(expected, actual, rules)
    union = set(expected.paths()) | set(actual.paths())
    assert sum(result.counts.values()) == len(union) == len(result.fields)
    assert {f.path for f in result.fields} == union
    assert result.overall_match == (result.counts["matching"] == len(union))


@given(states(), states(), field_policies())
def test_policies_never_turn_missing_or_extra_into_a_match(
    expected: InterpretiveState, actual: InterpretiveState, rules: FieldPolicies
) -> None:
    result = compare_states(expected, actual, rules)
    assert set(result.missing) == set(expected.paths()) - set(actual.paths())
    assert set(result.extra) == set(actual.paths()) - set(expected.paths())


@given(states(), states(), field_policies())
def test_accuracy_is_in_unit_interval(
    expected: InterpretiveState, actual: InterpretiveState, rules: FieldPolicies
) -> None:
    result = compare_states(expected, actual, rules)
    assert 0.0 <= result.accuracy_score <= 1.0
    if result.counts["matching"] + result.counts["mismatched"] + result.counts["missing"] == 0:
        assert result.accuracy_score == 0.0


@given(states(), states(), field_policies(), PATHS)
def test_ignore_removes_a_path_from_counts(
    expected: InterpretiveState, actual: InterpretiveState, rules: FieldPolicies, ignored: str
) -> None:
    with_ignore = FieldPolicies(
        [(ignored, MatchPolicy(ignore=True)), *((k, v) for k, v in rules.items() if k != ignored)],
        default=rules.default,
    )
    full = compare_states(expected, actual, rules)
    result = compare_states(expected, actual, with_ignore)
    assert result.field(ignored) is None
    assert [f for f in full.fields if f.path != ignored] == list(result.fields)


@given(states(), states())
def test_loosening_a_policy_never_loses_matches(
    expected: InterpretiveState, actual: InterpretiveState
) -> None:
    strict = compare_states(expected, actual)
    loose = compare_states(expected, actual, MatchPolicy(confidence="ignore", fuzzy=0.5))
    assert set(strict.matching) <= set(loose.matching)
    for f in loose.fields:
        if f.status is FieldStatus.MISMATCHED:
            assert f.value_matched is False


FLAT_STATES = st.builds(
    lambda values, confidence: InterpretiveState.from_flat(values, confidence=confidence),
    st.dictionaries(PATHS, st.sampled_from(["x", "y"]) | VALUES, max_size=5),
    CONFIDENCES,
)
STRICT = st.sampled_from([FieldPolicies(), FieldPolicies(default=MatchPolicy(confidence="ignore"))])


@given(states() | FLAT_STATES, states() | FLAT_STATES, STRICT | field_policies())
def test_value_outcomes_read_like_the_field_comparisons(
    expected: InterpretiveState, actual: InterpretiveState, rules: FieldPolicies
) -> None:
    # calibration reads value_outcomes, which makes no FieldComparison of a strict field
    fast = compare_states(expected, actual, rules).value_outcomes()
    slow = [
        (f.path, f.actual.confidence, f.status is not FieldStatus.EXTRA and bool(f.value_matched))
        for f in compare_states(expected, actual, rules).fields
        if f.actual is not None
    ]
    assert fast == slow


OPTIONS = st.builds(
    MetricOptions,
    st.sampled_from(["all_or_nothing", "partial"]),
    st.sampled_from(["fp_and_fn", "fp"]),
)


@given(states() | FLAT_STATES, states() | FLAT_STATES, STRICT | field_policies(), OPTIONS)
def test_figures_of_an_unread_comparison_are_those_of_its_field_comparisons(
    expected: InterpretiveState,
    actual: InterpretiveState,
    rules: FieldPolicies,
    options: MetricOptions,
) -> None:
    # a comparison nothing has read is counted from its statuses (no FieldComparison made);
    # one whose fields were all made is counted field by field: the figures are the same
    unread = compare_states(expected, actual, rules)
    read = compare_states(expected, actual, rules)
    _ = read.fields
    assert case_metrics(unread, options=options) == case_metrics(read, options=options)
    assert (
        score_comparison(unread, policies=rules).field_outcomes()
        == score_comparison(read, policies=rules).field_outcomes()
    )


@given(states() | FLAT_STATES, states() | FLAT_STATES, states() | FLAT_STATES, policies())
def test_field_edits_are_the_same_whether_policies_are_planned_once_or_per_path(
    pre: InterpretiveState,
    expected: InterpretiveState,
    actual: InterpretiveState,
    policy: MatchPolicy,
) -> None:
    # one policy for every path is resolved once; a pattern matching no path makes each
    # path resolved on its own, to the same policy: the edits must not differ
    once = FieldPolicies(default=policy)
    per_path = FieldPolicies({"zz.*": MatchPolicy()}, default=policy)
    assert once.uniform_mode is not None
    assert per_path.uniform_mode is None
    for comparison in (None, compare_states(expected, actual, once)):
        assert field_edits(pre, expected, actual, once, comparison) == field_edits(
            pre, expected, actual, per_path, comparison
        )
