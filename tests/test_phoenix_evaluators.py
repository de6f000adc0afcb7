"""stateval.phoenix evaluators, run through Phoenix's own `evaluate_dataframe`."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pytest
from phoenix.evals import evaluate_dataframe

from stateval.checks import contains
from stateval.compare import FieldPolicies, MatchPolicy
from stateval.errors import EvaluationConfigError, StateError
from stateval.phoenix import (
    changed_fields_accuracy,
    check_evaluators,
    coerce_state,
    contains_all_keywords,
    contains_any_keyword,
    evaluator_set,
    exact_match,
    field_evaluator,
    field_scores,
    json_parseable,
    json_schema,
    matches_regex,
    overall_match,
    pre_state_of,
    preserved_fields_accuracy,
    slot_accuracy,
    state_accuracy,
    task_output,
)
from stateval.state import InterpretiveState, ValueConfidence


def case(
    expected: dict[str, Any],
    actual: dict[str, Any] | None,
    *,
    pre: dict[str, Any] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """One row in stateval's Phoenix wire format."""
    post = None if actual is None else InterpretiveState.from_flat(actual)
    return {
        "input": {
            "case_id": "c",
            "pre_state": InterpretiveState.from_flat(pre or {}).to_dict(),
            "input": {"prompt": "p", "message_id": "m1", "metadata": {}},
        },
        "expected": {"post_state": InterpretiveState.from_flat(expected).to_dict()},
        "output": task_output(post, error),
    }


def run(rows: list[dict[str, Any]], evaluators: list[Any]) -> list[dict[str, dict[str, Any]]]:
    """Evaluate rows with Phoenix; per row, ``{score name: score dict}``."""
    df = evaluate_dataframe(dataframe=pd.DataFrame(rows), evaluators=evaluators, hide_tqdm_bar=True)
    for ev in evaluators:
        for details in df[f"{ev.name}_execution_details"]:
            assert details["status"] == "COMPLETED", details
    out = []
    for _, row in df.iterrows():
        out.append(
            {
                col.removesuffix("_score"): row[col]
                for col in df.columns
                if col.endswith("_score") and row[col] is not None
            }
        )
    return out


HOTEL = {"hotel.area": "centre", "hotel.stars": 4}


def test_state_accuracy_and_overall_match_score_each_case() -> None:
    rows = [
        case(HOTEL, HOTEL),
        case(HOTEL, {"hotel.area": "centre", "hotel.stars": 5}),
        case(HOTEL, {"hotel.area": "centre", "hotel.parking": "yes"}),
        case(HOTEL, None, error="MutatorOutputError: not JSON"),
    ]
    results = run(rows, [state_accuracy(), overall_match()])
    acc = [r["state_accuracy"] for r in results]
    assert [a["score"] for a in acc] == [1.0, 0.5, 0.5, 0.0]
    assert "mismatched: hotel.stars" in acc[1]["explanation"]
    assert "missing: hotel.stars" in acc[2]["explanation"]
    assert "extra: hotel.parking" in acc[2]["explanation"]
    assert acc[2]["metadata"] == {"matching": 1, "mismatched": 0, "missing": 1, "extra": 1}
    assert acc[3]["label"] == "error"
    assert acc[3]["explanation"] == "task failed: MutatorOutputError: not JSON"
    match = [r["overall_match"] for r in results]
    assert [(m["score"], m["label"]) for m in match] == [
        (1.0, "match"),
        (0.0, "mismatch"),
        (0.0, "mismatch"),
        (0.0, "error"),
    ]


def test_field_evaluator_labels_each_status_and_shows_both_values() -> None:
    rows = [
        case(HOTEL, HOTEL),
        case(HOTEL, {"hotel.area": "center", "hotel.parking": "yes"}),
        case({"hotel.stars": 4}, {}),
    ]
    evaluators = [field_evaluator(p) for p in ("hotel.area", "hotel.stars", "hotel.parking")]
    results = run(rows, evaluators)
    got = [
        {name: (s.get("score"), s["label"]) for name, s in r.items() if name.startswith("field:")}
        for r in results
    ]
    assert got == [
        {
            "field:hotel.area": (1.0, "matching"),
            "field:hotel.stars": (1.0, "matching"),
            "field:hotel.parking": (None, "absent"),
        },
        {
            "field:hotel.area": (0.0, "mismatched"),
            "field:hotel.stars": (0.0, "missing"),
            "field:hotel.parking": (0.0, "extra"),
        },
        {
            "field:hotel.area": (None, "absent"),
            "field:hotel.stars": (0.0, "missing"),
            "field:hotel.parking": (None, "absent"),
        },
    ]
    area = results[1]["field:hotel.area"]
    assert "'centre'" in area["explanation"]
    assert "'center'" in area["explanation"]
    assert area["metadata"]["expected"] == {"value": "centre", "confidence": 1.0}
    assert area["metadata"]["actual"] == {"value": "center", "confidence": 1.0}


def test_field_evaluator_compares_best_candidates_and_confidence() -> None:
    expected = InterpretiveState()
    expected.add_value("name", ValueConfidence("Ada", 0.9))
    actual = InterpretiveState()
    actual.add_value("name", ValueConfidence("Ada L.", 0.4))
    actual.add_value("name", ValueConfidence("Ada", 0.9))
    lower = InterpretiveState.from_flat({"name": "Ada"}, confidence=0.5)
    rows = [
        {"output": task_output(actual), "expected": {"post_state": expected.to_dict()}},
        {"output": task_output(lower), "expected": {"post_state": expected.to_dict()}},
    ]
    first, second = run(rows, [field_evaluator("name")])
    assert (first["field:name"]["score"], first["field:name"]["label"]) == (1.0, "matching")
    assert second["field:name"]["label"] == "mismatched"
    assert "confidence differs" in second["field:name"]["explanation"]


def test_policies_loosen_the_match_per_field() -> None:
    policies = FieldPolicies.from_mapping(
        {"hotel.area": {"normalize": ["case"], "synonyms": {"center": "centre"}}}
    )
    rows = [case(HOTEL, {"hotel.area": "Center", "hotel.stars": 4})]
    (strict,) = run(rows, [field_evaluator("hotel.area")])
    (loose,) = run(rows, [field_evaluator("hotel.area", policies)])
    assert strict["field:hotel.area"]["label"] == "mismatched"
    assert loose["field:hotel.area"]["label"] == "matching"
    # suite-file data works too, and an ignored field is labelled so, without a score
    (ignored,) = run(rows, [field_evaluator("hotel.area", {"hotel.*": {"ignore": True}})])
    assert ignored["field:hotel.area"]["label"] == "ignored"
    assert "score" not in ignored["field:hotel.area"]


def test_task_errors_and_unreadable_outputs_are_scores_not_exceptions() -> None:
    expected = {"post_state": InterpretiveState.from_flat(HOTEL).to_dict()}
    rows: list[dict[str, Any]] = [
        {"output": {"post_state": None, "error": "TimeoutError: mutator"}, "expected": expected},
        {"output": "not json at all", "expected": expected},
        {"output": {"post_state": None, "error": None}, "expected": expected},
        {"output": {"fields": {"a": "bad"}}, "expected": expected},
        {"output": task_output(InterpretiveState()), "expected": ["answer", 1]},
        {"output": {"bad path ": 1}, "expected": expected},
    ]
    results = run(rows, [state_accuracy(), field_evaluator("hotel.area")])
    for result in results:
        for name in ("state_accuracy", "field:hotel.area"):
            assert (result[name]["score"], result[name]["label"]) == (0.0, "error")
    assert results[0]["field:hotel.area"]["explanation"] == "task failed: TimeoutError: mutator"
    assert "JSON does not parse" in results[1]["state_accuracy"]["explanation"]
    assert "post_state is null" in results[2]["state_accuracy"]["explanation"]
    assert "candidates at 'a' must be a list" in results[3]["state_accuracy"]["explanation"]
    wrong_shape = results[4]["state_accuracy"]["explanation"]
    assert wrong_shape.startswith("expected: a list is not a state; expected a flat")
    assert '{"fields": {path: [{"value", "confidence"}]}}' in wrong_shape
    assert "not a flat or nested state" in results[5]["state_accuracy"]["explanation"]


def test_flat_and_nested_states_score_like_the_candidate_form() -> None:
    candidate = InterpretiveState.from_flat(HOTEL).to_dict()
    nested: dict[str, Any] = {}
    for path, value in HOTEL.items():
        head, tail = path.split(".", 1)
        nested.setdefault(head, {})[tail] = value
    wrong = {**HOTEL, "hotel.area": "south"}
    rows: list[dict[str, Any]] = [
        {"output": HOTEL, "expected": candidate},
        {"output": {"post_state": nested}, "expected": HOTEL},
        {"output": wrong, "expected": nested},
    ]
    evaluators = [state_accuracy(), overall_match(), field_evaluator("hotel.area")]
    flat_out, nested_out, wrong_out = run(rows, evaluators)
    for result in (flat_out, nested_out):
        assert result["state_accuracy"]["score"] == 1.0
        assert result["overall_match"]["label"] == "match"
        assert result["field:hotel.area"]["label"] == "matching"
    assert wrong_out["field:hotel.area"]["label"] == "mismatched"
    assert wrong_out["state_accuracy"]["score"] == pytest.approx((len(HOTEL) - 1) / len(HOTEL))


def test_states_are_read_in_every_accepted_shape() -> None:
    state = InterpretiveState.from_flat(HOTEL)
    shapes: list[Any] = [
        state,
        state.to_dict(),
        {"post_state": state.to_dict()},
        {"post_state": state},
        state.to_json(),
        json.dumps({"post_state": state.to_dict(), "error": None}),
    ]
    for shape in shapes:
        assert coerce_state(shape) == state
    rows: list[dict[str, Any]] = [{"output": shape, "expected": state} for shape in shapes]
    results = run(rows, [state_accuracy()])
    assert [r["state_accuracy"]["score"] for r in results] == [1.0] * len(shapes)
    bad_shapes: list[Any] = [None, 3, [], {"answer": {"": 1}}, "[1, 2]"]
    for bad in bad_shapes:
        with pytest.raises(StateError):
            coerce_state(bad, what="output")
    assert pre_state_of({"case_id": "x"}) == InterpretiveState()
    with pytest.raises(StateError, match=r"input\.pre_state"):
        pre_state_of({"pre_state": [1]})
    assert pre_state_of({"pre_state": {"user.name": "Ada"}}) == InterpretiveState.from_flat(
        {"user.name": "Ada"}
    )


def test_delta_evaluators_split_changed_from_preserved_fields() -> None:
    pre = {"name": "Ada", "email": "ada@old.org"}
    expected = {"name": "Ada", "email": "ada@new.org", "phone": "123"}
    rows = [
        case(expected, expected, pre=pre),
        # updated the email, forgot the phone, clobbered the name
        case(expected, {"name": "Bob", "email": "ada@new.org"}, pre=pre),
        # nothing expected to change, and nothing changed: the empty turn of the changed view
        case(pre, pre, pre=pre),
        # nothing expected to change, but a field was set
        case(pre, {**pre, "phone": "123"}, pre=pre),
    ]
    results = run(rows, [changed_fields_accuracy(), preserved_fields_accuracy()])
    changed = [r["changed_fields_accuracy"] for r in results]
    preserved = [r["preserved_fields_accuracy"] for r in results]
    assert [c.get("score") for c in changed] == [1.0, 0.5, None, 0.0]
    assert [p.get("score") for p in preserved] == [1.0, 0.0, 1.0, 1.0]
    assert "missing: phone" in changed[1]["explanation"]
    assert "mismatched: name" in preserved[1]["explanation"]
    assert changed[2]["label"] == "empty"
    assert "extra: phone" in changed[3]["explanation"]


def test_slot_accuracy_scores_schema_slots_only() -> None:
    schema = ["hotel.area", "hotel.stars", "hotel.parking", "train.day"]
    rows = [
        case(HOTEL, HOTEL),
        case(HOTEL, {"hotel.area": "centre", "hotel.parking": "yes", "other": 1}),
    ]
    first, second = run(rows, [slot_accuracy(schema)])
    assert first["slot_accuracy"]["score"] == 1.0
    assert first["slot_accuracy"]["label"] == "all_right"
    assert second["slot_accuracy"]["score"] == 0.5
    assert "wrong: hotel.stars, hotel.parking" in second["slot_accuracy"]["explanation"]


def test_field_scores_returns_one_named_result_per_field() -> None:
    fn = field_scores()
    row = case(HOTEL, {"hotel.area": "center", "hotel.parking": "yes"})
    results = fn(output=row["output"], expected=row["expected"])
    assert [(r["name"], r.get("score"), r["label"]) for r in results] == [
        ("field:hotel.area", 0.0, "mismatched"),
        ("field:hotel.stars", 0.0, "missing"),
        ("field:hotel.parking", 0.0, "extra"),
    ]
    failed = case(HOTEL, None, error="boom")
    assert [
        (r["name"], r["score"], r["label"])
        for r in fn(output=failed["output"], expected=failed["expected"])
    ] == [("field:hotel.area", 0.0, "error"), ("field:hotel.stars", 0.0, "error")]


def test_parity_checks_on_the_whole_output_match_phoenix_prebuilt_rules() -> None:
    rows = [
        {"output": "Read the disclaimer. Due 2024-05-01."},
        {"output": "nothing here"},
        {"output": '{"ok": true}'},
    ]
    evaluators = [
        contains_any_keyword(["disclaimer", "warranty"]),
        contains_all_keywords(["disclaimer", "Due"]),
        matches_regex(r"\d{4}-\d{2}-\d{2}"),
        json_parseable(),
    ]
    names = [e.name for e in evaluators]
    assert names == [
        "ContainsAny(['disclaimer', 'warranty'])",
        "ContainsAll(['disclaimer', 'Due'])",
        r"matches_(\d{4}-\d{2}-\d{2})",
        "JSONParsable",
    ]
    results = run(rows, evaluators)
    scores = [[r[n]["score"] for n in names] for r in results]
    assert scores == [[1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    assert (
        results[0][names[0]]["explanation"]
        == "the keywords ['disclaimer'] were found in the output"
    )
    assert results[1][names[2]]["explanation"] == (
        r"no substrings matched the regex pattern \d{4}-\d{2}-\d{2}"
    )


def test_parity_checks_on_a_field_of_the_post_state() -> None:
    evaluators = [
        matches_regex(r"@example\.org$", path="user.email"),
        json_schema({"type": "integer"}, path="user.age", parse=False),
        exact_match("user.name"),
        exact_match("user.name", value="ada", case_sensitive=False, name="name_is_ada"),
        contains_any_keyword(["@"], path="user.email"),
    ]
    assert [e.name for e in evaluators] == [
        "check:user.email:matches_regex",
        "check:user.age:json_schema",
        "check:user.name:exact",
        "name_is_ada",
        "check:user.email:contains_any",
    ]
    expected = {"user.email": "ada@example.org", "user.age": 36, "user.name": "Ada"}
    rows = [
        case(expected, expected),
        case(expected, {"user.email": "ada@example.com", "user.age": "36", "user.name": "ADA"}),
        case(expected, {}),
    ]
    results = run(rows, evaluators)
    table = [[(r[e.name]["score"], r[e.name]["label"]) for e in evaluators] for r in results]
    assert table == [
        [(1.0, "pass")] * 5,
        [(0.0, "fail"), (0.0, "fail"), (0.0, "fail"), (1.0, "pass"), (1.0, "pass")],
        [(0.0, "missing")] * 5,
    ]


def test_check_evaluators_name_checks_by_path_and_number_repeats() -> None:
    evaluators = check_evaluators(
        {
            "user.email": [
                {"type": "regex", "pattern": r"^\S+@\S+$"},
                {"type": "contains", "value": "@"},
                {"type": "contains", "value": "."},
            ],
            "user.age": [{"type": "json_schema", "schema": {"type": "integer", "minimum": 0}}],
            "user.bio": [lambda v: contains(v, "engineer")],
        }
    )
    assert [e.name for e in evaluators] == [
        "check:user.email:regex",
        "check:user.email:contains",
        "check:user.email:contains#2",
        "check:user.age:json_schema",
        "check:user.bio:<lambda>",
    ]
    actual = {"user.email": "ada@example", "user.age": -1, "user.bio": "engineer, mathematician"}
    (result,) = run([case(actual, actual)], evaluators)
    assert {n: s["score"] for n, s in result.items()} == {
        "check:user.email:regex": 1.0,
        "check:user.email:contains": 1.0,
        "check:user.email:contains#2": 0.0,
        "check:user.age:json_schema": 0.0,
        "check:user.bio:<lambda>": 1.0,
    }
    assert "minimum" in result["check:user.age:json_schema"]["explanation"]
    with pytest.raises(EvaluationConfigError, match="criterion 0"):
        check_evaluators({"x": [{"type": "regex", "pattern": "("}]})
    with pytest.raises(EvaluationConfigError, match="criterion 0"):
        check_evaluators({"x": [{"type": "contains", "value": "a", "bogus": 1}]})


def test_evaluator_set_scores_listed_fields_only_where_present() -> None:
    policies = {"debug.*": {"ignore": True}}
    evaluators = evaluator_set(
        policies, fields=["hotel.area", "hotel.stars", "hotel.parking", "debug.trace"]
    )
    names = [getattr(e, "name", getattr(e, "__name__", None)) for e in evaluators]
    assert names == [
        "state_accuracy",
        "overall_match",
        "changed_fields_accuracy",
        "preserved_fields_accuracy",
        "field_scores",
    ]
    row = case(HOTEL, {"hotel.area": "north", "hotel.stars": 4, "hotel.garden": "yes"})
    got = evaluators[-1](output=row["output"], expected=row["expected"])
    # hotel.parking is in neither state: no evaluation (not an "absent" one); hotel.garden is
    # not listed; debug.trace is ignored
    assert [(r["name"], r["label"]) for r in got] == [
        ("field:hotel.area", "mismatched"),
        ("field:hotel.stars", "matching"),
    ]
    with pytest.raises(EvaluationConfigError, match=r"'hotel\.area' asks for judge='llm'"):
        evaluator_set({"hotel.*": {"judge": "llm", "rubric": "same"}}, fields=["hotel.area"])


def test_evaluator_set_lists_case_field_and_check_evaluators() -> None:
    policies = {"hotel.stars": {"numeric_tolerance": 0}, "debug.*": {"ignore": True}}
    evaluators = evaluator_set(
        policies,
        fields=["hotel.area", "hotel.stars", "debug.trace", "hotel.area"],
        schema=["hotel.area", "hotel.stars"],
        checks={"hotel.area": [{"type": "contains_any", "keywords": ["centre", "north"]}]},
        every_field=True,  # the strict form: one phoenix.evals evaluator per field
    )
    assert [e.name for e in evaluators] == [
        "state_accuracy",
        "overall_match",
        "changed_fields_accuracy",
        "preserved_fields_accuracy",
        "slot_accuracy",
        "field:hotel.area",
        "field:hotel.stars",
        "check:hotel.area:contains_any",
    ]
    rows = [case(HOTEL, {"hotel.area": "centre", "hotel.stars": "4", "debug.trace": "x"})]
    (result,) = run(rows, evaluators)
    assert result["state_accuracy"]["score"] == 1.0
    assert result["field:hotel.stars"]["label"] == "matching"
    assert result["check:hotel.area:contains_any"]["score"] == 1.0
    assert result["overall_match"]["label"] == "match"


def test_evaluator_set_refuses_judged_fields_without_a_judge() -> None:
    policies = {"hotel.area": {"judge": "llm", "rubric": "spellings agree"}}
    with pytest.raises(EvaluationConfigError, match=r"'hotel\.area' asks for judge='llm'"):
        evaluator_set(policies, fields=["hotel.area"])
    assert len(evaluator_set(policies, fields=["hotel.stars"], delta=False)) == 3


def test_evaluators_accept_a_match_policy_for_all_fields() -> None:
    rows = [case(HOTEL, {"hotel.area": "centre", "hotel.stars": 4.0})]
    (strict,) = run(rows, [state_accuracy(MatchPolicy(confidence="ignore"))])
    assert strict["state_accuracy"]["score"] == 1.0


def test_rule_checks_run_on_outputs_with_no_gold() -> None:
    # Without gold there is no `expected`: the checks still bind (no "Path not found:
    # expected"), so Phoenix goes on to the next evaluator.
    evaluators = check_evaluators(
        {
            "email": [{"type": "regex", "pattern": "@"}],
            "phone": [{"type": "contains", "value": "5"}],
        }
    )
    output = {"email": "ada at example", "phone": "555"}
    scores = [ev.evaluate({"output": output})[0] for ev in evaluators]
    assert [(s.name, s.label) for s in scores] == [
        ("check:email:regex", "fail"),
        ("check:phone:contains", "pass"),
    ]
    frame = pd.DataFrame([{"output": output}])
    results = evaluate_dataframe(dataframe=frame, evaluators=evaluators, hide_tqdm_bar=True)
    assert results["check:email:regex_score"][0]["score"] == 0.0
    assert results["check:phone:contains_score"][0]["score"] == 1.0


def test_delta_evaluators_say_when_the_input_has_no_pre_state() -> None:
    expected = {"name": "Ada", "phone": "123"}
    row = {"output": expected, "expected": expected, "input": {"before": {"name": "Ada"}}}
    missing = changed_fields_accuracy().evaluate(row)[0]
    assert missing.label == "error"
    assert "input['pre_state']" in str(missing.explanation)
    named = changed_fields_accuracy(pre_state_key="before").evaluate(row)[0]
    assert named.score == 1.0
    kept = evaluator_set(fields=["name"], pre_state_key="before")
    scores = {s.name: s for ev in kept[2:4] for s in ev.evaluate(row)}
    assert scores["preserved_fields_accuracy"].score == 1.0
