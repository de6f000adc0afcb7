"""Metrics: per-field aggregates, slot metrics (hand-computed), joint goal accuracy, delta view."""

from __future__ import annotations

import pytest

from stateval.compare import (
    FieldAggregate,
    FieldPolicies,
    MatchPolicy,
    compare_delta,
    compare_states,
    field_aggregates,
    joint_goal_accuracy,
    slot_metrics,
    worst_fields,
)
from stateval.state import InterpretiveState, ValueConfidence


def flat(values: dict[str, object], confidence: float = 1.0) -> InterpretiveState:
    return InterpretiveState.from_flat(values, confidence=confidence)


# -- field aggregates --------------------------------------------------------------------------


def test_field_aggregates_count_each_status_per_path() -> None:
    comparisons = [
        compare_states(flat({"a": 1, "b": 1}), flat({"a": 1, "b": 2})),
        compare_states(flat({"a": 1, "b": 1}), flat({"a": 2, "c": 0})),
        compare_states(flat({"a": 1}), flat({"a": 1})),
    ]
    agg = field_aggregates(comparisons)
    assert list(agg) == ["a", "b", "c"]
    assert agg["a"] == FieldAggregate("a", n=3, matching=2, mismatched=1)
    assert agg["b"] == FieldAggregate("b", n=2, mismatched=1, missing=1)
    assert agg["c"] == FieldAggregate("c", n=1, extra=1)
    assert agg["a"].accuracy == pytest.approx(2 / 3)
    assert agg["b"].accuracy == 0.0
    assert agg["c"].accuracy == 0.0  # never expected
    assert agg["c"].n_expected == 0


def test_worst_fields_sorts_by_accuracy_then_errors() -> None:
    agg = {
        "good": FieldAggregate("good", n=2, matching=2),
        "half": FieldAggregate("half", n=2, matching=1, missing=1),
        "bad": FieldAggregate("bad", n=3, mismatched=3),
        "extra": FieldAggregate("extra", n=1, extra=1),
    }
    assert [a.path for a in worst_fields(agg)] == ["bad", "extra", "half", "good"]
    assert [a.path for a in worst_fields(agg.values(), limit=2)] == ["bad", "extra"]


def test_joint_goal_accuracy_of_comparisons() -> None:
    comparisons = [
        compare_states(flat({"a": 1}), flat({"a": 1})),
        compare_states(flat({"a": 1}), flat({"a": 1, "b": 1})),
        compare_states(flat({"a": 1}), flat({"a": 1})),
        compare_states(flat({"a": 1}), flat({})),
    ]
    assert joint_goal_accuracy(comparisons) == 0.5
    assert joint_goal_accuracy([]) == 0.0


# -- slot metrics ------------------------------------------------------------------------------

GOLD = flat({"hotel.area": "centre", "hotel.stars": "4"})
PRED = flat({"hotel.area": "center", "hotel.stars": "4", "hotel.parking": "yes"})
SCHEMA = ["hotel.area", "hotel.stars", "hotel.parking", "hotel.internet"]


def test_multiwoz_like_example_without_synonyms() -> None:
    # area: mismatched (wrong; FP+FN), stars: match (TP), parking: extra (wrong; FP),
    # internet: absent in both (right). Slot acc 2/4, JGA 0, P = 1/3, R = 1/2, F1 = 0.4.
    m = slot_metrics([(GOLD, PRED)], SCHEMA)
    assert (m.n_cases, m.n_slots) == (1, 4)
    assert m.slot_accuracy == 0.5
    assert m.joint_goal_accuracy == 0.0
    assert (m.tp, m.fp, m.fn) == (1, 2, 1)
    assert m.precision == pytest.approx(1 / 3)
    assert m.recall == pytest.approx(1 / 2)
    assert m.f1 == pytest.approx(0.4)
    assert m.per_slot == {
        "hotel.area": 0.0,
        "hotel.stars": 1.0,
        "hotel.parking": 0.0,
        "hotel.internet": 1.0,
    }


def test_multiwoz_like_example_with_synonyms() -> None:
    # area now matches (TP). Slot acc 3/4, JGA still 0 (parking is extra),
    # TP=2, FP=1, FN=0: P = 2/3, R = 1, F1 = 0.8.
    policies = FieldPolicies.from_mapping({"*": {"synonyms": {"center": "centre"}}})
    m = slot_metrics([(GOLD, PRED)], SCHEMA, policies)
    assert m.slot_accuracy == 0.75
    assert m.joint_goal_accuracy == 0.0
    assert (m.tp, m.fp, m.fn) == (2, 1, 0)
    assert m.precision == pytest.approx(2 / 3)
    assert m.recall == 1.0
    assert m.f1 == pytest.approx(0.8)


def test_one_policy_for_every_slot_gives_the_same_numbers() -> None:
    m = slot_metrics([(GOLD, PRED)], SCHEMA, MatchPolicy(synonyms={"center": "centre"}))
    assert (m.tp, m.fp, m.fn, m.slot_accuracy) == (2, 1, 0, 0.75)


def test_slot_metrics_over_several_cases() -> None:
    pairs = [
        (GOLD, PRED),
        (flat({"hotel.area": "north"}), flat({"hotel.area": "north"})),
        (flat({}), flat({})),
    ]
    m = slot_metrics(pairs, SCHEMA)
    # correct slots: 2 + 4 + 4 of 12; joint: cases 2 and 3.
    assert m.slot_accuracy == pytest.approx(10 / 12)
    assert m.joint_goal_accuracy == pytest.approx(2 / 3)
    assert (m.tp, m.fp, m.fn) == (2, 2, 1)
    assert m.per_slot["hotel.area"] == pytest.approx(2 / 3)


def test_slot_metrics_see_only_schema_slots() -> None:
    m = slot_metrics([(flat({"a": 1}), flat({"a": 1, "other": 9}))], ["a"])
    assert m.joint_goal_accuracy == 1.0
    assert (m.tp, m.fp, m.fn) == (1, 0, 0)


def test_slot_metrics_zero_conventions() -> None:
    nothing = slot_metrics([(flat({}), flat({}))], ["a", "b"])
    assert (nothing.precision, nothing.recall, nothing.f1) == (1.0, 1.0, 1.0)
    assert nothing.slot_accuracy == 1.0
    assert nothing.joint_goal_accuracy == 1.0
    silent = slot_metrics([(flat({"a": 1}), flat({}))], ["a"])
    assert (silent.precision, silent.recall, silent.f1) == (0.0, 0.0, 0.0)
    empty = slot_metrics([], ["a"])
    assert (empty.n_cases, empty.slot_accuracy, empty.joint_goal_accuracy) == (0, 0.0, 0.0)


def test_slot_metrics_drop_ignored_slots() -> None:
    policies = FieldPolicies({"b": MatchPolicy(ignore=True)})
    m = slot_metrics([(flat({"a": 1, "b": 1}), flat({"a": 1, "b": 2}))], ["a", "b"], policies)
    assert m.n_slots == 1
    assert m.joint_goal_accuracy == 1.0
    assert list(m.per_slot) == ["a"]


def test_slot_metrics_reject_a_string_schema() -> None:
    with pytest.raises(TypeError):
        slot_metrics([], "hotel.area")


# -- delta view --------------------------------------------------------------------------------

PRE = flat({"name": "Ada", "city": "London", "stale": "x"})
EXPECTED = flat({"name": "Ada", "city": "Paris", "email": "ada@example.org"})


def test_delta_splits_changed_from_preserved() -> None:
    delta = compare_delta(PRE, EXPECTED, EXPECTED.copy())
    assert delta.preserved_paths == ("name",)
    assert delta.changed_paths == ("city", "email", "stale")
    assert delta.changed_accuracy == 1.0
    assert delta.preserved_accuracy == 1.0
    assert (delta.n_changed, delta.n_preserved) == (2, 1)
    assert delta.changed.overall_match


def test_delta_penalises_clobbering_preserved_fields() -> None:
    actual = flat({"name": "Bob", "city": "Paris", "email": "ada@example.org"})
    delta = compare_delta(PRE, EXPECTED, actual)
    assert delta.preserved_accuracy < 1.0
    assert delta.preserved.mismatched == ("name",)
    assert delta.changed_accuracy == 1.0


def test_delta_counts_kept_stale_fields_and_inventions_as_extra_changes() -> None:
    actual = flat({"name": "Ada", "city": "Paris", "email": "ada@example.org", "stale": "x"})
    actual.add_value("invented", ValueConfidence(1, 1.0))
    delta = compare_delta(PRE, EXPECTED, actual)
    assert delta.changed.extra == ("stale", "invented")
    assert delta.changed_accuracy == 1.0
    assert not delta.changed.overall_match
    assert delta.preserved.overall_match


def test_delta_of_a_mutator_that_does_nothing() -> None:
    delta = compare_delta(PRE, EXPECTED, PRE.copy())
    assert delta.preserved_accuracy == 1.0
    assert delta.changed.mismatched == ("city",)
    assert delta.changed.missing == ("email",)
    assert delta.changed.extra == ("stale",)
    assert delta.changed_accuracy == 0.0


def test_delta_uses_the_policy_to_decide_what_changed() -> None:
    pre = flat({"a": "x"}, confidence=0.5)
    expected = flat({"a": "x"}, confidence=0.9)
    assert compare_delta(pre, expected, expected).changed_paths == ("a",)
    loose = compare_delta(pre, expected, expected, MatchPolicy(confidence="ignore"))
    assert loose.preserved_paths == ("a",)
    assert loose.n_changed == 0
    assert loose.changed_accuracy == 0.0  # empty side: callers check n_changed


def test_delta_leaves_out_ignored_paths() -> None:
    policies = FieldPolicies({"stale": MatchPolicy(ignore=True), "name": MatchPolicy(ignore=True)})
    delta = compare_delta(PRE, EXPECTED, PRE.copy(), policies)
    assert delta.preserved_paths == ()
    assert "stale" not in delta.changed_paths
    assert delta.changed.field("stale") is None
