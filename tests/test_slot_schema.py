"""Slot schema files (SGD-like), the policies they imply, and `stateval validate`'s path checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateval.cli import app
from stateval.compare import FieldPolicies, MatchPolicy, compare_states
from stateval.errors import SuiteProblemsError
from stateval.state import InterpretiveState
from stateval.suite import SlotSchema, SlotSchemaError, load_suite

SGD_LIKE = [
    {
        "service_name": "Restaurants_1",
        "description": "A leading provider for restaurant search and reservations",
        "slots": [
            {
                "name": "city",
                "description": "City in which the restaurant is located",
                "is_categorical": False,
                "possible_values": [],
            },
            {
                "name": "price_range",
                "is_categorical": True,
                "possible_values": ["cheap", "moderate", "pricey"],
            },
        ],
        "intents": [{"name": "FindRestaurants", "is_transactional": False}],
    },
    {
        "service_name": "Hotels_2",
        "slots": [{"name": "where_to", "is_categorical": False, "possible_values": []}],
    },
]

SUITE = """
mutator: {type: python, callable: "builtins:print"}
cases:
  inline:
    - id: c1
      input: {prompt: "a cheap place in SF"}
      expected_post_state: {Restaurants_1.city: "San Francisco", Restaurants_1.price_range: cheap}
      metadata: {services: [Restaurants_1]}
slots: {file: schema.json, services_key: metadata.services}
"""


def flat(values: dict[str, object]) -> InterpretiveState:
    return InterpretiveState.from_flat(values)


def test_reads_an_sgd_like_schema() -> None:
    schema = SlotSchema.from_data(SGD_LIKE)
    assert schema.paths == ("Restaurants_1.city", "Restaurants_1.price_range", "Hotels_2.where_to")
    assert schema.services == ("Restaurants_1", "Hotels_2")
    assert schema.active_paths(["Hotels_2"]) == ("Hotels_2.where_to",)
    price = schema.slot("Restaurants_1.price_range")
    assert price is not None
    assert price.possible_values == ("cheap", "moderate", "pricey")
    assert SlotSchema.from_data({"services": SGD_LIKE}).paths == schema.paths


def test_derived_policies_categorical_exact_alternatives_free_form_fuzzy() -> None:
    policies = SlotSchema.from_data(SGD_LIKE).policies(FieldPolicies())
    cat = policies.for_path("Restaurants_1.price_range")
    free = policies.for_path("Restaurants_1.city")
    assert cat.normalize == ("case", "punctuation", "whitespace")
    assert (cat.fuzzy, cat.list_mode) == (None, "any_of")  # SGD's gold is a list: ["cheap"]
    assert (free.fuzzy, free.list_mode) == (0.9, "any_of")
    expected = flat(
        {"Restaurants_1.city": ["San Francisco", "SF"], "Restaurants_1.price_range": "Cheap"}
    )
    actual = flat({"Restaurants_1.city": "sf", "Restaurants_1.price_range": "cheap "})
    assert compare_states(expected, actual, policies).overall_match
    near = compare_states(expected, flat({"Restaurants_1.price_range": "chep"}), policies)
    assert near.field("Restaurants_1.price_range").status.value == "mismatched"  # type: ignore[union-attr]


def test_suite_policies_fill_in_or_win() -> None:
    schema = SlotSchema.from_data(SGD_LIKE)
    user = FieldPolicies(
        {
            "Restaurants_1.city": MatchPolicy(confidence="ignore"),
            "*": MatchPolicy(confidence="ignore", fuzzy=0.7),
        }
    )
    policies = schema.policies(user)
    assert policies.for_path("Restaurants_1.city") == MatchPolicy(confidence="ignore")  # exact wins
    where = policies.for_path("Hotels_2.where_to")  # the glob's options kept, the rest filled in
    assert (where.confidence, where.fuzzy, where.list_mode) == ("ignore", 0.7, "any_of")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "non-empty list of services"),
        ([{"service_name": "x"}], "service 'x': slots: Field required"),
        ([{"service_name": "x", "slots": [{"name": "a"}, {"name": "a"}]}], "duplicate slots"),
    ],
)
def test_bad_schemas_say_where(data: object, message: str) -> None:
    with pytest.raises(SlotSchemaError, match=message):
        SlotSchema.from_data(data)


def test_suite_with_a_schema_file_and_active_services(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text(json.dumps(SGD_LIKE))
    (tmp_path / "suite.yaml").write_text(SUITE)
    suite = load_suite(tmp_path / "suite.yaml", load_mutator=False)
    assert suite.slots == ("Restaurants_1.city", "Restaurants_1.price_range", "Hotels_2.where_to")
    assert suite.services_key == "metadata.services"
    assert suite.policies.for_path("Restaurants_1.city").list_mode == "any_of"
    (tmp_path / "schema.yaml").write_text("- service_name: x\n  slots: [{name: a}]\n")
    other = SUITE.replace("schema.json", "schema.yaml").replace("Restaurants_1.city", "x.a")
    (tmp_path / "suite2.yaml").write_text(other)
    assert load_suite(tmp_path / "suite2.yaml", load_mutator=False).slots == ("x.a",)


def test_a_broken_schema_file_is_one_problem_line(tmp_path: Path) -> None:
    bad = [{"service_name": "s", "slots": [{"is_categorical": True}]}]
    (tmp_path / "schema.json").write_text(json.dumps(bad))
    (tmp_path / "suite.yaml").write_text(SUITE)
    with pytest.raises(SuiteProblemsError) as info:
        load_suite(tmp_path / "suite.yaml", load_mutator=False)
    assert info.value.problems == [
        f"{tmp_path / 'schema.json'}: slots: service 's': slots.0.name: Field required"
    ]


TYPO = """
mutator: {type: python, callable: "builtins:print"}
cases:
  inline:
    - id: c1
      input: {prompt: "north"}
      expected_post_state: {hotel.area: north, hotel.stars: "4"}
policies:
  "*": {confidence: ignore}
  hotel.aera: {normalize: [case]}
  "hotel.*": {normalize: [case]}
  "taxi.*": {normalize: [case]}
thresholds:
  fields: {hotel.starz: 0.5, hotel.area: 0.5}
"""


def test_validate_rejects_policy_and_threshold_paths_that_match_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text(TYPO)
    with pytest.raises(SuiteProblemsError) as info:
        load_suite(tmp_path / "suite.yaml", load_mutator=False)
    assert info.value.problems == [
        "suite.yaml:10: policies.hotel.aera: matches no slot and no expected field "
        "(did you mean 'hotel.area'?)",
        "suite.yaml:12: policies.taxi.*: matches no slot and no expected field",
        "suite.yaml:14: thresholds.fields.hotel.starz: matches no slot and no expected field "
        "(did you mean 'hotel.stars'?)",
    ]
    result = CliRunner().invoke(app, ["validate", "suite.yaml"])
    assert result.exit_code != 0
    assert "policies.hotel.aera: matches no slot" in result.output
    assert "Traceback" not in result.output


def test_a_schema_slot_makes_a_policy_path_valid(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        TYPO.replace("hotel.aera", "taxi.leaveat").replace("hotel.starz", "hotel.stars")
        + "slots: [taxi.leaveat]\n"
    )
    load_suite(tmp_path / "suite.yaml", load_mutator=False)


def test_validate_names_expected_values_outside_a_categorical_slots_possible_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schema.json").write_text(json.dumps(SGD_LIKE))
    text = SUITE.replace("price_range: cheap}", "price_range: Cheap}")  # normalised: fine
    (tmp_path / "suite.yaml").write_text(text)
    load_suite(tmp_path / "suite.yaml", load_mutator=False)
    (tmp_path / "suite.yaml").write_text(SUITE.replace("price_range: cheap}", "price_range: chep}"))
    with pytest.raises(SuiteProblemsError) as info:
        load_suite(tmp_path / "suite.yaml", load_mutator=False)
    assert info.value.problems == [
        "suite.yaml: case 'c1': Restaurants_1.price_range: 'chep' is not one of the slot's "
        "possible values (did you mean 'cheap'?)"
    ]


SGD_TURNS = [
    {  # SGD's own shapes: gold values are lists, dontcare in a categorical and a free slot
        "id": "sgd-1",
        "input": {"prompt": "anywhere cheap, any city"},
        "expected_post_state": {
            "Restaurants_1.price_range": ["dontcare"],
            "Restaurants_1.city": ["dontcare"],
        },
        "metadata": {"services": ["Restaurants_1"]},
    },
    {
        "id": "sgd-2",
        "input": {"prompt": "a cheap place in SF"},
        "expected_post_state": {
            "Restaurants_1.price_range": ["cheap"],
            "Restaurants_1.city": ["San Francisco", "SF"],
        },
        "metadata": {"services": ["Restaurants_1"]},
    },
]


def _sgd_suite(tmp_path: Path, extra: str = "", slots: str | None = None) -> Path:
    (tmp_path / "schema.json").write_text(json.dumps(SGD_LIKE))
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in SGD_TURNS))
    slots = slots or "{file: schema.json, services_key: metadata.services}"
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        'mutator: {type: python, callable: "builtins:print"}\n'
        f"cases: {{file: turns.jsonl}}\nslots: {slots}\n{extra}"
    )
    return suite


def test_dontcare_is_a_legal_value_of_every_sgd_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = load_suite(_sgd_suite(tmp_path), load_mutator=False)
    assert suite.warnings == ()
    schema = suite.slot_schema
    assert schema is not None
    assert "dontcare" in schema.legal_values(schema.slot("Restaurants_1.price_range"))
    result = CliRunner().invoke(app, ["validate", "suite.yaml"])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    # a value outside possible_values and dontcare is still a labelling mistake
    bad = [dict(SGD_TURNS[0], expected_post_state={"Restaurants_1.price_range": ["dontcar"]})]
    (tmp_path / "turns.jsonl").write_text(json.dumps(bad[0]) + "\n")
    with pytest.raises(SuiteProblemsError) as info:
        load_suite(suite.path, load_mutator=False)
    assert info.value.problems == [
        "turns.jsonl: case 'sgd-1': Restaurants_1.price_range: 'dontcar' is not one of the "
        "slot's possible values (did you mean 'dontcare'?)"
    ]


def test_the_schema_derivation_scores_sgd_list_gold_against_a_plain_prediction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = load_suite(_sgd_suite(tmp_path), load_mutator=False)
    gold = flat({"Restaurants_1.price_range": ["cheap"], "Restaurants_1.city": ["SF", "San Fran"]})
    pred = flat({"Restaurants_1.price_range": "Cheap", "Restaurants_1.city": "San Fran"})
    comparison = compare_states(gold, pred, suite.policies)
    assert comparison.overall_match, comparison.mismatched
    assert suite.policies.for_path("Restaurants_1.price_range").list_mode == "any_of"
    wrong = flat({"Restaurants_1.price_range": "pricey", "Restaurants_1.city": "SF"})
    assert compare_states(gold, wrong, suite.policies).mismatched == ("Restaurants_1.price_range",)


def test_validate_warns_when_list_gold_meets_a_whole_list_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plain = "[Restaurants_1.price_range, Restaurants_1.city]"
    suite = load_suite(_sgd_suite(tmp_path, slots=plain), load_mutator=False)
    assert len(suite.warnings) == 2
    assert suite.warnings[0] == (
        "turns.jsonl: case 'sgd-1': Restaurants_1.price_range: expected value ['dontcare'] is a "
        "list but a slot of the schema, and its policy compares whole lists, so a plain "
        "predicted value scores wrong; add 'list_mode: any_of' to its policy (or 'set' when "
        "predictions are lists too)"
    )
    result = CliRunner().invoke(app, ["validate", "suite.yaml"])
    assert result.exit_code == 0, result.output
    assert result.output.count("warning: ") == 2
    # the fix the warning names silences it
    fixed = 'policies: {"*": {list_mode: any_of}}\n'
    suite = load_suite(_sgd_suite(tmp_path, fixed, slots=plain), load_mutator=False)
    assert suite.warnings == ()
    # a schema derivation already reads the list as alternatives: no warning
    assert load_suite(_sgd_suite(tmp_path), load_mutator=False).warnings == ()


def test_a_field_both_list_and_plain_in_its_gold_is_warned_without_a_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    turns = [
        {"id": "a", "input": {"prompt": "x"}, "expected_post_state": {"hotel.area": ["north"]}},
        {
            "id": "b",
            "input": {"prompt": "y"},
            "expected_post_state": {"hotel.area": "south", "tags": ["x"]},
        },
    ]
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    (tmp_path / "suite.yaml").write_text(
        'mutator: {type: python, callable: "builtins:print"}\ncases: {file: turns.jsonl}\n'
    )
    warnings = load_suite(tmp_path / "suite.yaml", load_mutator=False).warnings
    assert [w.split(": ")[2] for w in warnings] == ["hotel.area"]  # tags: a list everywhere
    assert "a plain value elsewhere" in warnings[0]


def test_a_replayed_sgd_run_warns_and_the_schema_scores_list_gold_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new user's story of issue 28, end to end: SGD's list gold against plain predictions
    scored 0% under a plain slot list; `stateval run` now warns, and with the SGD schema the
    derived policies score it right."""
    monkeypatch.chdir(tmp_path)
    predictions = [
        {"id": "sgd-1", "actual_post_state": {"Restaurants_1.price_range": "dontcare"}},
        {
            "id": "sgd-2",
            "actual_post_state": {
                "Restaurants_1.price_range": "cheap",
                "Restaurants_1.city": "San Francisco",
            },
        },
    ]
    _sgd_suite(tmp_path)
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    replay = "mutator: {type: replay, predictions: predictions.jsonl}\n"

    def run(slots: str) -> tuple[str, dict[str, float]]:
        text = (tmp_path / "suite.yaml").read_text().splitlines()
        body = [line for line in text if not line.startswith(("mutator:", "slots:"))]
        (tmp_path / "suite.yaml").write_text(replay + "\n".join(body) + f"\nslots: {slots}\n")
        report = tmp_path / "report.json"
        result = CliRunner().invoke(
            app, ["run", "suite.yaml", "--no-phoenix", "--report-json", str(report)]
        )
        assert result.exit_code in (0, 1), result.output
        fields = json.loads(report.read_text())["fields"]
        return result.output, {f["path"]: f["accuracy"] for f in fields}

    output, accuracy = run("[Restaurants_1.price_range, Restaurants_1.city]")
    assert "warning: turns.jsonl: case 'sgd-1': Restaurants_1.price_range: expected" in output
    assert accuracy["Restaurants_1.price_range"] == 0.0
    output, accuracy = run("{file: schema.json, services_key: metadata.services}")
    assert "warning" not in output
    assert accuracy["Restaurants_1.price_range"] == 1.0
