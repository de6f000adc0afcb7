"""Field and state comparison: the seed rules, statuses, ordering, policies, judge hand-off."""

from __future__ import annotations

import json

import pytest

from stateval.compare import (
    FieldComparison,
    FieldPolicies,
    FieldStatus,
    MatchPolicy,
    StateComparison,
    compare_field,
    compare_states,
)
from stateval.errors import ComparisonError
from stateval.state import InterpretiveState, ValueConfidence


def flat(values: dict[str, object], confidence: float = 1.0) -> InterpretiveState:
    return InterpretiveState.from_flat(values, confidence=confidence)


def status_of(expected: object, actual: object, policy: MatchPolicy | None = None) -> FieldStatus:
    result = compare_states(flat({"x": expected}), flat({"x": actual}), policy)
    f = result.field("x")
    assert f is not None
    return f.status


# -- seed rule ---------------------------------------------------------------------------------


def test_seed_example_matches_fully() -> None:
    expected = InterpretiveState()
    expected.add_value("registrant.name", ValueConfidence("Ada Lovelace", 0.95))
    actual = InterpretiveState()
    actual.add_value("registrant.name", ValueConfidence("Ada Lovelace", 0.95, "stated"))
    result = compare_states(expected, actual)
    assert result.overall_match
    assert result.accuracy_score == 1.0
    assert result.matching == ("registrant.name",)


def test_each_status() -> None:
    expected = flat({"a": 1, "b": 2, "c": 3})
    actual = flat({"a": 1, "b": 20, "d": 4})
    result = compare_states(expected, actual)
    assert result.matching == ("a",)
    assert result.mismatched == ("b",)
    assert result.missing == ("c",)
    assert result.extra == ("d",)
    assert result.counts == {"matching": 1, "mismatched": 1, "missing": 1, "extra": 1}
    assert not result.overall_match
    assert result.accuracy_score == pytest.approx(1 / 3)


def test_confidence_difference_is_a_mismatch_by_default() -> None:
    result = compare_states(flat({"a": "x"}, 0.9), flat({"a": "x"}, 0.8))
    f = result.field("a")
    assert f is not None
    assert f.status is FieldStatus.MISMATCHED
    assert f.value_matched is True
    assert f.confidence_matched is False
    assert f.explanation == "expected 'x' (0.9), got 'x' (0.8): confidence differs"


def test_best_candidates_are_compared() -> None:
    expected = InterpretiveState()
    expected.add_value("a", ValueConfidence("low", 0.2))
    expected.add_value("a", ValueConfidence("high", 0.9))
    actual = InterpretiveState()
    actual.add_value("a", ValueConfidence("high", 0.9))
    actual.add_value("a", ValueConfidence("other", 0.5))
    assert compare_states(expected, actual).overall_match


def test_extra_fields_count_against_overall_match_but_not_accuracy() -> None:
    result = compare_states(flat({"a": 1}), flat({"a": 1, "z": 0}))
    assert result.accuracy_score == 1.0
    assert not result.overall_match


def test_no_expected_fields_scores_zero() -> None:
    assert compare_states(flat({}), flat({"z": 0})).accuracy_score == 0.0
    empty = compare_states(flat({}), flat({}))
    assert empty.accuracy_score == 0.0
    assert empty.overall_match
    assert empty.fields == ()


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        ("1", 1, False),
        (None, None, True),
        (None, "", False),
        ([1, 2], [1, 2], True),
        ([1, 2], [2, 1], False),
        ({"a": [1, {"b": True}]}, {"a": [1.0, {"b": True}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ({"a": True}, {"a": 1}, False),
    ],
)
def test_value_equality_is_strict_json(expected: object, actual: object, matches: bool) -> None:
    assert (status_of(expected, actual) is FieldStatus.MATCHING) is matches


def test_order_is_expected_then_extra_in_actual_order() -> None:
    expected = flat({"b": 1, "a": 1, "c": 1})
    actual = flat({"z": 1, "a": 1, "y": 1, "b": 2})
    result = compare_states(expected, actual)
    assert [f.path for f in result.fields] == ["b", "a", "c", "z", "y"]


def test_paths_restricts_the_comparison() -> None:
    expected = flat({"a": 1, "b": 2})
    actual = flat({"a": 0, "c": 3})
    result = compare_states(expected, actual, paths=["a", "c", "not.there"])
    assert [f.path for f in result.fields] == ["a", "c"]
    assert result.field("b") is None


def test_paths_as_a_single_string_is_rejected() -> None:
    with pytest.raises(ComparisonError, match="not the string"):
        compare_states(flat({"a": 1}), flat({"a": 1}), paths="a")


def test_ignored_paths_are_left_out() -> None:
    policies = FieldPolicies({"meta.*": MatchPolicy(ignore=True)})
    result = compare_states(flat({"a": 1, "meta.t": 1}), flat({"a": 1, "meta.u": 2}), policies)
    assert [f.path for f in result.fields] == ["a"]
    assert result.overall_match


def test_single_policy_applies_to_every_path() -> None:
    policy = MatchPolicy(normalize=("case",))
    result = compare_states(flat({"a": "X", "b": "Y"}), flat({"a": "x", "b": "y"}), policy)
    assert result.overall_match


def test_policy_decides_matching_and_explains() -> None:
    policies = FieldPolicies({"hotel.area": MatchPolicy(synonyms={"center": "centre"})})
    result = compare_states(
        flat({"hotel.area": "centre"}), flat({"hotel.area": "center"}), policies
    )
    f = result.field("hotel.area")
    assert f is not None
    assert f.matched
    assert f.explanation == "expected 'centre' (1.0), got 'center' (1.0): match (equal as 'centre')"


def test_policies_never_rescue_missing_or_extra() -> None:
    loose = MatchPolicy(confidence="ignore", fuzzy=0.0, list_mode="any_of")
    result = compare_states(flat({"a": "x"}), flat({"b": "x"}), loose)
    assert result.missing == ("a",)
    assert result.extra == ("b",)


def test_fuzzy_similarity_is_reported() -> None:
    result = compare_states(
        flat({"name": "Lovelace"}), flat({"name": "Lovelase"}), MatchPolicy(fuzzy=0.8)
    )
    f = result.field("name")
    assert f is not None
    assert f.matched
    assert f.similarity == pytest.approx(0.875)
    assert "fuzzy 0.88 >= 0.8" in f.explanation


def test_explanations_for_missing_and_extra() -> None:
    result = compare_states(flat({"a": "x"}, 0.5), flat({"b": 2}, 0.25))
    a, b = result.field("a"), result.field("b")
    assert a is not None
    assert b is not None
    assert a.explanation == "expected 'x' (0.5), got nothing: missing"
    assert b.explanation == "expected nothing, got 2 (0.25): extra"
    assert a.actual is None
    assert b.expected is None


def test_long_values_are_truncated_in_explanations() -> None:
    result = compare_states(flat({"a": "x" * 500}), flat({"a": "y"}))
    f = result.field("a")
    assert f is not None
    assert len(f.explanation) < 150
    assert "..." in f.explanation


def test_to_dict_is_json_and_complete() -> None:
    result = compare_states(flat({"a": 1, "b": "x"}), flat({"a": 1, "c": True}))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["overall_match"] is False
    assert data["accuracy_score"] == 0.5
    assert data["counts"] == {"matching": 1, "mismatched": 0, "missing": 1, "extra": 1}
    assert [f["status"] for f in data["fields"]] == ["matching", "missing", "extra"]
    assert data["fields"][2]["actual"] == {"value": True, "confidence": 1.0}


def test_compare_field_rejects_nothing_on_both_sides() -> None:
    with pytest.raises(ComparisonError, match="neither state"):
        compare_field("a", None, None)


def test_field_comparison_matched_property() -> None:
    f = FieldComparison("a", FieldStatus.MATCHING, None, None, "")
    assert f.matched
    assert not FieldComparison("a", FieldStatus.EXTRA, None, None, "").matched


# -- judge hand-off ----------------------------------------------------------------------------


def judged_policies() -> FieldPolicies:
    return FieldPolicies(
        {"notes": MatchPolicy(judge="llm", rubric="same meaning", confidence="ignore")}
    )


def test_judge_requests_lists_mismatched_values_whose_policy_wants_a_judge() -> None:
    expected = flat({"notes": "likes tea", "a": 1, "gone": 1})
    actual = flat({"notes": "enjoys tea", "a": 2})
    result = compare_states(expected, actual, judged_policies())
    requests = result.judge_requests
    assert [f.path for f in requests] == ["notes"]
    assert requests[0].policy is not None
    assert requests[0].policy.rubric == "same meaning"
    assert result.to_dict()["fields"][0]["wants_judge"] is True


def test_missing_field_never_wants_a_judge() -> None:
    result = compare_states(flat({"notes": "x"}), flat({}), judged_policies())
    assert result.judge_requests == ()
    with pytest.raises(ComparisonError, match="is missing"):
        result.with_judgement("notes", matched=True)


def test_with_judgement_turns_a_mismatch_into_a_match() -> None:
    result = compare_states(
        flat({"notes": "likes tea"}), flat({"notes": "enjoys tea"}), judged_policies()
    )
    judged = result.with_judgement("notes", matched=True, explanation="same meaning")
    assert judged.overall_match
    f = judged.field("notes")
    assert f is not None
    assert f.explanation.endswith("judge accepts the value (same meaning)")
    assert not result.overall_match  # the original is unchanged
    rejected = result.with_judgement("notes", matched=False)
    assert rejected.mismatched == ("notes",)


def test_judge_cannot_fix_a_confidence_difference() -> None:
    policies = FieldPolicies({"notes": MatchPolicy(judge="llm")})
    result = compare_states(flat({"notes": "a"}, 0.9), flat({"notes": "b"}, 0.5), policies)
    judged = result.with_judgement("notes", matched=True)
    assert judged.mismatched == ("notes",)


def test_confidence_only_mismatch_is_not_sent_to_the_judge() -> None:
    policies = FieldPolicies({"notes": MatchPolicy(judge="llm")})
    result = compare_states(flat({"notes": "a"}, 0.9), flat({"notes": "a"}, 0.5), policies)
    assert result.judge_requests == ()
    with pytest.raises(ComparisonError, match="already match"):
        result.with_judgement("notes", matched=True)


def test_state_comparison_field_lookup() -> None:
    result = StateComparison(())
    assert result.field("a") is None
    assert result.counts == {"matching": 0, "mismatched": 0, "missing": 0, "extra": 0}


def test_integers_past_the_float_range_compare_exactly_under_numeric_tolerance() -> None:
    # A 400-digit integer used to raise OverflowError in the normaliser and crash the run.
    policy = MatchPolicy(numeric_tolerance=0.5)
    big = 10**400
    same = compare_states(
        InterpretiveState.from_flat({"n": big}), InterpretiveState.from_flat({"n": big}), policy
    )
    assert same.overall_match
    other = compare_states(
        InterpretiveState.from_flat({"n": big}),
        InterpretiveState.from_flat({"n": big + 1}),
        policy,
    )
    assert not other.overall_match
    assert not compare_states(
        InterpretiveState.from_flat({"n": 5}), InterpretiveState.from_flat({"n": big}), policy
    ).overall_match
