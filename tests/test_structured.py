"""Structured values: lists of records aligned item by item, typed comparators, weights and
critical fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stateval.compare import (
    FieldPolicies,
    MatchPolicy,
    MetricsAccumulator,
    compare_states,
    path_matches,
    score_comparison,
)
from stateval.compare._match import match_values
from stateval.errors import PolicyError, SuiteProblemsError
from stateval.state import InterpretiveState
from stateval.suite import load_suite

ITEMS = [
    {"sku": "A-1", "description": "bolts", "quantity": 10, "unit_price": 0.25},
    {"sku": "B-2", "description": "nuts", "quantity": 20, "unit_price": 0.1},
    {"sku": "C-3", "description": "washers", "quantity": 5, "unit_price": 0.05},
    {"sku": "D-4", "description": "screws", "quantity": 8, "unit_price": 0.3},
]
ALIGN = FieldPolicies.from_mapping({"line_items": {"list_mode": "align", "score": "similarity"}})


def _compare(expected: object, actual: object, policies: FieldPolicies = ALIGN):  # type: ignore[no-untyped-def]
    want = InterpretiveState.from_flat({"invoice": "INV-1", "line_items": expected})
    got = InterpretiveState.from_flat({"invoice": "INV-1", "line_items": actual})
    return compare_states(want, got, policies)


def test_a_reordered_list_of_records_scores_one() -> None:
    comparison = _compare(ITEMS, list(reversed(ITEMS)))
    field = comparison.field("line_items")
    assert field is not None
    assert field.matched
    assert field.score == 1.0
    assert comparison.overall_match
    assert field.records is not None
    assert [i.status for i in field.records.items] == ["matched"] * 4


def test_one_wrong_quantity_is_exactly_one_wrong_sub_field() -> None:
    actual = [dict(item) for item in reversed(ITEMS)]
    actual[1]["quantity"] = 6  # C-3, expected third, now second
    field = _compare(ITEMS, actual).field("line_items")
    assert field is not None
    assert field.records is not None
    subs = field.records.sub_outcomes()
    assert [(s.path, s.status) for s in subs if s.status != "correct"] == [
        ("line_items[].quantity", "wrong")
    ]
    assert len(subs) == 16
    assert field.score == pytest.approx(0.9375, abs=1e-12)
    assert "1 partial (line_items[2].quantity)" in field.explanation
    statuses = [(i.expected_index, i.actual_index, i.status) for i in field.records.items]
    assert statuses == [(0, 3, "matched"), (1, 2, "matched"), (2, 1, "partial"), (3, 0, "matched")]


def test_sub_path_figures_reach_the_run_metrics_and_the_case_scores() -> None:
    actual = [dict(item) for item in ITEMS[:3]]
    actual[0]["quantity"] = 11
    comparison = _compare(ITEMS, actual)
    acc = MetricsAccumulator()
    acc.add(comparison)
    fields = acc.result().fields
    quantity = fields["line_items[].quantity"]
    assert (quantity.correct, quantity.wrong, quantity.missing, quantity.extra) == (2, 1, 1, 0)
    assert quantity.precision == pytest.approx(2 / 3)
    assert quantity.recall == pytest.approx(2 / 4)
    assert fields["line_items[].sku"].missing == 1
    assert fields["line_items"].wrong == 1  # the list itself still counts once per case
    assert acc.result().n_cases == 1
    scores = score_comparison(comparison, policies=ALIGN)
    names = {s.name: s for s in scores.fields()}
    assert names["field:line_items[].quantity"].score == pytest.approx(0.5)
    assert names["field:line_items[].quantity"].metadata["missing"] == 1
    assert names["field:line_items[].sku"].label == "wrong"


def test_duplicates_are_counted_and_extra_items_reported() -> None:
    twice = [ITEMS[0], ITEMS[0]]
    field = _compare(twice, [ITEMS[0]]).field("line_items")
    assert field is not None
    assert field.records is not None
    assert field.records.counts() == {"matched": 1, "partial": 0, "missing": 1, "extra": 0}
    field = _compare([ITEMS[0]], [ITEMS[0], ITEMS[1]]).field("line_items")
    assert field is not None
    assert field.records is not None
    assert field.records.counts()["extra"] == 1
    assert field.score == 0.5


def test_items_below_the_threshold_stay_unpaired() -> None:
    other = {"sku": "Z-9", "description": "glue", "quantity": 1, "unit_price": 9.0}
    field = _compare([ITEMS[0]], [other]).field("line_items")
    assert field is not None
    assert field.records is not None
    assert [i.status for i in field.records.items] == ["missing", "extra"]
    loose = FieldPolicies.from_mapping(
        {"line_items": {"list_mode": "align", "item_threshold": 0.0, "score": "similarity"}}
    )
    half = {**ITEMS[0], "quantity": 99, "unit_price": 9.0}
    field = _compare([ITEMS[0]], [half], loose).field("line_items")
    assert field is not None
    assert field.records is not None
    assert [i.status for i in field.records.items] == ["partial"]


def test_item_key_pairs_by_id_and_sub_policies_apply() -> None:
    policies = FieldPolicies.from_mapping(
        {
            "line_items": {"list_mode": "align", "item_key": "sku"},
            "line_items[].description": {"normalize": ["case"]},
            "line_items[].unit_price": {"numeric_tolerance": 0.01},
        }
    )
    actual = [{**item, "description": item["description"].upper()} for item in ITEMS]
    actual[0]["unit_price"] = 0.255
    assert _compare(ITEMS, actual[::-1], policies).overall_match
    assert path_matches("line_items[].unit_price", "line_items[].*")
    assert not path_matches("line_items.unit_price", "line_items[].*")


def test_nested_lists_of_records_recurse() -> None:
    policies = FieldPolicies.from_mapping(
        {"orders": {"list_mode": "align"}, "orders[].lines": {"list_mode": "align"}}
    )
    want = {"orders": [{"id": 1, "lines": [{"sku": "a", "n": 1}, {"sku": "b", "n": 2}]}]}
    got = {"orders": [{"id": 1, "lines": [{"sku": "b", "n": 3}, {"sku": "a", "n": 1}]}]}
    comparison = compare_states(
        InterpretiveState.from_flat(want), InterpretiveState.from_flat(got), policies
    )
    field = comparison.field("orders")
    assert field is not None
    assert field.records is not None
    wrong = [(s.path, s.status) for s in field.records.sub_outcomes() if s.status != "correct"]
    assert wrong == [("orders[].lines[].n", "wrong"), ("orders[].lines", "wrong")]


def test_two_thousand_item_lists_align() -> None:
    want = [{"id": i, "name": f"item {i}", "qty": i % 7} for i in range(1000)]
    got = [dict(x) for x in reversed(want)]
    for x in got[::50]:
        x["qty"] += 1
    field = _compare(want, got).field("line_items")
    assert field is not None
    assert field.records is not None
    assert field.records.counts()["partial"] == 20
    assert field.records.counts()["matched"] == 980


# -- typed comparators -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "expected", "actual"),
    [
        (MatchPolicy(comparator="date"), "2026-03-01", "March 1, 2026"),
        (MatchPolicy(comparator="date"), "2026-03-01", "Sunday, 1st March 2026"),
        (MatchPolicy(comparator="date", date_order="DMY"), "2026-03-04", "04/03/2026"),
        (MatchPolicy(comparator="date", date_order="MDY"), "2026-03-04", "03/04/2026"),
        (MatchPolicy(comparator="date"), "2026-03", "Mar 2026"),
        (MatchPolicy(comparator="date", date_tolerance=1), "2026-03-01", "2026-03-02"),
        (MatchPolicy(comparator="datetime"), "2026-03-01T14:30:00Z", "1 March 2026 2:30 pm Z"),
        (MatchPolicy(comparator="phone", phone_region="GB"), "+44 20 7946 0958", "020 7946 0958"),
        (MatchPolicy(comparator="money"), "$1,234.50", {"amount": 1234.5, "currency": "USD"}),
        (MatchPolicy(comparator="money"), "1.234,50 €", "EUR 1234.50"),
        (MatchPolicy(comparator="email"), "Ann.Lee@Example.COM", "Ann <Ann.Lee@example.com>"),
        (MatchPolicy(comparator="unit"), "2.5 km", "2500 m"),
    ],
)
def test_typed_comparators_match_equivalent_forms(
    policy: MatchPolicy, expected: object, actual: object
) -> None:
    assert match_values(policy, expected, actual).matched


@pytest.mark.parametrize(
    ("policy", "expected", "actual", "why"),
    [
        (MatchPolicy(comparator="date"), "2026-03-01", "March 2, 2026", "another date"),
        (MatchPolicy(comparator="date"), "2026-03-04", "03/04/2026", "date_order is not set"),
        (MatchPolicy(comparator="date", date_order="MDY"), "2026-03-04", "25/03/2026", "month"),
        (MatchPolicy(comparator="date"), "2026-03", "2026-03-01", "another date"),
        (MatchPolicy(comparator="date"), "2026-03-01", "1 Mar 26", "four digits"),
        (MatchPolicy(comparator="phone", phone_region="GB"), "020 7946 0958", "020 7946 0959", ""),
        (MatchPolicy(comparator="phone"), "+44 20 7946 0958", "020 7946 0958", "phone_region"),
        (MatchPolicy(comparator="money"), "12.50 EUR", "12.50 USD", "another money"),
        (MatchPolicy(comparator="money"), "12.50 EUR", "12.50", "no currency"),
        (MatchPolicy(comparator="email"), "ann@example.com", "Ann@example.com", "another email"),
        (MatchPolicy(comparator="unit"), "5 kg", "5000 m", "another unit"),
    ],
)
def test_typed_comparators_refuse_near_misses_and_say_why(
    policy: MatchPolicy, expected: object, actual: object, why: str
) -> None:
    verdict = match_values(policy, expected, actual)
    assert not verdict.matched
    assert why in verdict.note


def test_bad_structured_options_are_one_line_naming_the_suite_key(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    for policy, problem in [
        ("{line_items: {list_mode: align, weight: 0}}", "policies.line_items.weight: expected"),
        ("{when: {comparator: dat}}", "policies.when: unknown comparator 'dat'"),
        ("{when: {comparator: date, date_order: DM}}", "policies.when.date_order: expected"),
        ("{when: {date_order: DMY}}", "date_order needs comparator"),
    ]:
        path.write_text(
            'mutator: {type: python, callable: "builtins:print"}\n'
            f"policies: {policy}\n"
            "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {v: 1}}]}\n"
        )
        with pytest.raises(SuiteProblemsError) as info:
            load_suite(path, load_mutator=False)
        (line,) = info.value.problems
        assert problem in line, line
    with pytest.raises(PolicyError, match="weight must be a positive number"):
        MatchPolicy(weight=-1)


# -- weights -----------------------------------------------------------------------------------


def test_weighted_state_accuracy_weighs_each_expected_field() -> None:
    policies = FieldPolicies.from_mapping({"total": {"weight": 3}})
    want = InterpretiveState.from_flat({"total": 10, "note": "a", "ref": "x"})
    got = InterpretiveState.from_flat({"total": 10, "note": "b", "extra": 1})
    scores = score_comparison(compare_states(want, got, policies), policies=policies)
    weighted = scores.weighted_state_accuracy()
    assert weighted is not None
    assert weighted.score == pytest.approx(3 / 5)
    assert scores.state_accuracy().score == pytest.approx(1 / 3)
    assert [s.name for s in scores.case_level()][:2] == [
        "state_accuracy",
        "weighted_state_accuracy",
    ]
    plain = score_comparison(compare_states(want, got))
    assert plain.weighted_state_accuracy() is None


def test_the_phoenix_evaluator_set_scores_weights_and_sub_fields() -> None:
    from stateval.phoenix import evaluator_set

    policies = {"line_items": {"list_mode": "align", "score": "similarity", "weight": 2}}
    evaluators = evaluator_set(policies, fields=["invoice", "line_items"], delta=False)
    names = [getattr(e, "name", getattr(e, "__name__", "")) for e in evaluators]
    assert names[:3] == ["state_accuracy", "weighted_state_accuracy", "overall_match"]
    expected = {"invoice": "INV-1", "line_items": ITEMS}
    wrong = [dict(i) for i in ITEMS[::-1]]
    wrong[0]["quantity"] = 9
    output = {"invoice": "INV-1", "line_items": wrong}
    weighted = evaluators[1].evaluate({"output": output, "expected": expected})[0]
    assert weighted.score == pytest.approx((1 + 2 * 0.9375) / 3)
    field_scores = evaluators[-1]
    assert callable(field_scores)
    by_name = {e["name"]: e for e in field_scores(output, expected)}
    assert by_name["field:line_items[].quantity"]["score"] == pytest.approx(0.75)
    assert by_name["field:line_items[].quantity"]["metadata"]["wrong"] == 1
    assert by_name["field:line_items"]["score"] == pytest.approx(0.9375)


def test_a_sub_field_pattern_that_matches_no_expected_sub_field_is_named(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        'mutator: {type: python, callable: "builtins:print"}\n'
        "policies:\n  line_items: {list_mode: align}\n  line_items[].qty: {weight: 2}\n"
        "thresholds:\n  critical_fields:\n    - line_items[].quantity\n    - totl\n"
        "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: "
        "{total: 1, line_items: [{sku: a, quantity: 1}]}}]}\n"
    )
    with pytest.raises(SuiteProblemsError) as info:
        load_suite(path, load_mutator=False)
    assert [p.rsplit("/", 1)[-1] for p in info.value.problems] == [
        "suite.yaml:4: policies.line_items[].qty: matches no slot and no expected field "
        "(did you mean 'line_items[].quantity'?)",
        "suite.yaml:8: thresholds.critical_fields.totl: matches no slot and no expected field "
        "(did you mean 'total'?)",
    ]


def test_the_list_field_score_lists_its_items_that_are_not_matched() -> None:
    actual = [dict(item) for item in ITEMS[1:]]
    actual[0]["quantity"] = 0
    scores = score_comparison(_compare(ITEMS, actual), policies=ALIGN)
    meta = scores.field("line_items").metadata
    assert meta["item_counts"] == {"matched": 2, "partial": 1, "missing": 1, "extra": 0}
    assert [(i["expected_index"], i["status"]) for i in meta["items"]] == [
        (0, "missing"),
        (1, "partial"),
    ]
    assert meta["items"][1]["not_correct"] == ["line_items[].quantity:wrong"]


def test_critical_fields_is_a_case_score_and_an_evaluator() -> None:
    from stateval.phoenix import critical_fields, evaluator_set

    actual = [dict(item) for item in ITEMS]
    actual[2]["quantity"] = 0
    comparison = _compare(ITEMS, actual)
    scores = score_comparison(comparison, policies=ALIGN, critical=["line_items[].quantity"])
    value = scores.critical_fields()
    assert value is not None
    assert (value.score, value.label) == (0.0, "failed")
    assert value.metadata["errors"] == ["line_items[].quantity wrong"]
    assert "critical_fields" in [s.name for s in scores.case_level()]
    fine = score_comparison(comparison, policies=ALIGN, critical=["invoice", "line_items[].sku"])
    assert fine.critical_fields() == fine.metric("critical_fields")
    assert (fine.critical_fields() or value).label == "ok"
    assert score_comparison(comparison, policies=ALIGN).critical_fields() is None

    policies = {"line_items": {"list_mode": "align"}}
    evaluator = critical_fields(["line_items[].quantity", "invoice"], policies)
    output = {"invoice": "INV-2", "line_items": actual}
    expected = {"invoice": "INV-1", "line_items": ITEMS}
    (score,) = evaluator.evaluate({"output": output, "expected": expected})
    assert score.score == 0.0
    assert score.metadata["errors"] == ["invoice mismatched", "line_items[].quantity wrong"]
    names = [getattr(e, "name", "") for e in evaluator_set(policies, critical=["invoice"])]
    assert "critical_fields" in names


def test_sub_field_weights_weigh_the_item_similarity() -> None:
    actual = [dict(item) for item in ITEMS]
    actual[0]["quantity"] = 99
    plain = _compare(ITEMS, actual).field("line_items")
    spec: dict[str, Any] = {
        "line_items": {"list_mode": "align", "score": "similarity", "item_threshold": 0.4},
        "line_items[].quantity": {"weight": 4},
    }
    weighted = _compare(ITEMS, actual, FieldPolicies.from_mapping(spec)).field("line_items")
    assert plain is not None
    assert weighted is not None
    assert plain.score == pytest.approx((3 + 3 / 4) / 4)
    assert weighted.score == pytest.approx((3 + 3 / 7) / 4)  # 3 of 1+1+4+1 weights right
    spec["line_items"]["item_threshold"] = 0.5  # 3/7 < 0.5: the item is no longer paired
    unpaired = _compare(ITEMS, actual, FieldPolicies.from_mapping(spec)).field("line_items")
    assert unpaired is not None
    assert unpaired.records is not None
    assert unpaired.score == pytest.approx(3 / 4)
    assert unpaired.records.counts() == {"matched": 3, "partial": 0, "missing": 1, "extra": 1}
