"""Convention presets (``metrics: {convention: ...}``): one table, settings mixed with it, report
names that say which convention a number follows, and frame-scoped scoring of SGD turns."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import jsonschema
import pytest
from typer.testing import CliRunner

from stateval.cli import app
from stateval.compare import (
    CONVENTIONS,
    FIGURES,
    SlotInfo,
    UnitAccumulator,
    compare_states,
    report_prefix,
    resolve_options,
)
from stateval.errors import SuiteProblemsError
from stateval.state import InterpretiveState
from stateval.suite import load_suite

REPORT_SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "report-schema.json"

SCHEMA = [
    {
        "service_name": "Restaurants_1",
        "slots": [
            {"name": "city", "is_categorical": False, "possible_values": []},
            {
                "name": "price_range",
                "is_categorical": True,
                "possible_values": ["cheap", "moderate", "pricey"],
            },
        ],
    },
    {
        "service_name": "Hotels_2",
        "slots": [{"name": "where_to", "is_categorical": False, "possible_values": []}],
    },
]

TURNS = [
    {
        "id": "t1",
        "input": {"prompt": "a cheap place in SF"},
        "expected_post_state": {
            "Restaurants_1.city": ["San Francisco", "SF"],
            "Restaurants_1.price_range": ["cheap"],
        },
        "metadata": {"services": ["Restaurants_1"]},
    },
    {
        "id": "t2",
        "input": {"prompt": "San Jose, and a hotel in New York"},
        "expected_post_state": {
            "Restaurants_1.city": ["San Jose"],
            "Hotels_2.where_to": ["New York"],
        },
        "metadata": {"services": ["Restaurants_1", "Hotels_2"]},
    },
]

PREDICTIONS = [
    # reordered words: token_sort_ratio 100; a plain "cheap" equals the list gold's first value
    {"id": "t1", "actual_post_state": {"Restaurants_1.city": "Francisco San",
                                       "Restaurants_1.price_range": "cheap"}},
    # price_range only in the prediction (0 in its frame); "NYC" vs "New York": Indel distance
    # 7 over 11 characters -> round(100 * 4/11) = 36
    {"id": "t2", "actual_post_state": {"Restaurants_1.city": "San Jose",
                                       "Hotels_2.where_to": "NYC",
                                       "Restaurants_1.price_range": "cheap"}},
]  # fmt: skip


def _suite(tmp_path: Path, metrics: str) -> Path:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TURNS))
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "mutator: {type: replay, predictions: predictions.jsonl}\n"
        "cases: {file: turns.jsonl}\n"
        "slots: {file: schema.json, services_key: metadata.services}\n"
        f"metrics: {metrics}\n"
    )
    return suite


def _run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metrics: str, phoenix: str | None = None
) -> dict[str, object]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    _suite(tmp_path, metrics)
    report = tmp_path / "r.json"
    where = ["--no-phoenix"] if phoenix is None else ["--phoenix-url", phoenix]
    ran = CliRunner().invoke(
        app,
        ["run", "suite.yaml", *where, "--report-json", str(report), "--markdown", "r.md"],
    )
    assert ran.exit_code in (0, 1), ran.output
    data = json.loads(report.read_text())
    assert isinstance(data, dict)
    jsonschema.validate(data, json.loads(REPORT_SCHEMA.read_text()))
    data["terminal"] = ran.output
    data["markdown"] = (tmp_path / "r.md").read_text()
    return data


def test_every_convention_is_one_complete_entry() -> None:
    for name, entry in CONVENTIONS.items():
        assert entry.name == name
        assert set(entry.reported) <= set(FIGURES), name
        options = resolve_options(name)
        assert options.convention == name
        assert options.scope == entry.scope
        assert report_prefix(options) == name


def test_settings_mix_with_a_convention_and_change_its_name_when_they_change_its_figures() -> None:
    assert report_prefix(resolve_options("sgd", list_credit="partial")) == "sgd"
    mixed = resolve_options("sgd", matching="policies")
    assert (mixed.scope, mixed.matching, mixed.joint) == ("frame", "policies", "product")
    assert report_prefix(mixed) == "custom"
    alone = resolve_options(None, joint="product")
    assert (alone.scope, alone.convention, report_prefix(alone)) == ("turn", None, "custom")
    assert resolve_options(None, list_credit="partial").scope is None  # no figures asked for
    with pytest.raises(ValueError, match="unknown convention 'sgd2'"):
        resolve_options("sgd2")
    with pytest.raises(ValueError, match="unknown matching 'levenshtein'"):
        resolve_options("sgd", matching="levenshtein")


def test_sgd_run_reports_frame_figures_named_after_sgd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _run(tmp_path, monkeypatch, "{convention: sgd, seen_services: [Restaurants_1]}")
    # frames: t1/Restaurants (1 * 1), t2/Restaurants (1 * 0: price only predicted),
    # t2/Hotels (0.36)
    assert data["sgd_joint_goal_accuracy"] == pytest.approx((1 + 0 + 0.36) / 3, abs=1e-12)
    # macro mean over frames of the slots in the reference: 1, 1 (city only), 0.36
    assert data["sgd_average_goal_accuracy"] == pytest.approx((1 + 1 + 0.36) / 3, abs=1e-12)
    assert data["sgd_joint_cat_accuracy"] == pytest.approx(0.5, abs=1e-12)  # no cat in Hotels
    assert data["sgd_average_cat_accuracy"] == pytest.approx(1.0, abs=1e-12)
    assert data["sgd_joint_noncat_accuracy"] == pytest.approx((1 + 1 + 0.36) / 3, abs=1e-12)
    # stateval's own figures keep their names and meaning (per turn, pass/fail)
    assert data["joint_goal_accuracy"] == 0.0
    convention = data["conventions"]["convention"]  # type: ignore[index]
    assert convention["name"] == "sgd"
    assert convention["n_units"] == 3
    seen = convention["slices"]["seen"]
    assert seen["unseen"]["sgd_joint_goal_accuracy"] == pytest.approx(0.36, abs=1e-12)
    assert seen["seen"]["sgd_joint_goal_accuracy"] == pytest.approx(0.5, abs=1e-12)
    assert convention["slices"]["domain"]["Hotels"]["sgd_joint_cat_accuracy"] is None
    assert "sgd joint goal accuracy" in data["terminal"]  # type: ignore[operator]
    assert "| sgd_joint_goal_accuracy | 45.3% |" in data["markdown"]  # type: ignore[operator]


def test_seen_services_can_be_a_train_schema_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "schema.json").write_text(json.dumps(SCHEMA[:1]))
    data = _run(tmp_path, monkeypatch, "{convention: sgd, seen_services: train/schema.json}")
    seen = data["conventions"]["convention"]["slices"]["seen"]  # type: ignore[index]
    assert seen["unseen"]["sgd_joint_goal_accuracy"] == pytest.approx(0.36, abs=1e-12)


def test_an_unreadable_seen_services_file_is_one_line(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "{convention: sgd, seen_services: nowhere.json}")
    with pytest.raises(SuiteProblemsError) as info:
        load_suite(suite, load_mutator=False)
    (line,) = info.value.problems
    assert "metrics.seen_services: cannot read" in line


def test_overridden_matching_is_not_called_sgd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _run(tmp_path, monkeypatch, "{convention: sgd, matching: policies}")
    assert not [k for k in data if k.startswith("sgd_")]
    # the derived policies (rapidfuzz ratio >= 0.9 after normalising, binary): "Francisco San"
    # and "NYC" are wrong; frames t1/R (0, 1), t2/R (1, price only predicted), t2/H (0)
    assert data["custom_joint_goal_accuracy"] == 0.0
    assert data["custom_average_goal_accuracy"] == pytest.approx((0.5 + 1.0 + 0.0) / 3, abs=1e-12)


def test_frame_scope_does_not_see_slots_outside_the_turns_frames() -> None:
    slots = [
        SlotInfo("R.city", "R"),
        SlotInfo("H.where", "H"),
    ]
    acc = UnitAccumulator(resolve_options("sgd"), slots, services_key="metadata.services")
    want = InterpretiveState.from_flat({"R.city": ["Rome"]})
    got = InterpretiveState.from_flat({"R.city": "Rome", "H.where": "Paris"})
    acc.add(compare_states(want, got), {"services": ["R"]})
    assert acc.result().figures["sgd_joint_goal_accuracy"] == 1.0
    turn = UnitAccumulator(resolve_options("sgd", scope="turn"), slots)
    turn.add(compare_states(want, got), {"services": ["R"]})
    assert turn.result().figures["custom_joint_goal_accuracy"] == 0.0


def test_frame_slices_read_the_same_in_any_order_of_the_turns() -> None:
    slots = [SlotInfo("R.city", "R"), SlotInfo("H.where", "H")]
    turns = [
        ({"R.city": ["Rome"]}, {"R.city": "Rome"}, {"services": ["R"], "kind": "single"}),
        ({"H.where": ["Paris"]}, {"H.where": "Oslo"}, {"services": ["H"]}),
    ]
    results = []
    for order in (turns, turns[::-1]):
        acc = UnitAccumulator(
            resolve_options("sgd"), slots, services_key="metadata.services", slices=["kind"]
        )
        for want, got, meta in order:
            acc.add(compare_states(*map(InterpretiveState.from_flat, (want, got))), meta)
        results.append(json.dumps(acc.result().to_dict()))
    assert results[0] == results[1]
    slices = json.loads(results[0])["slices"]
    assert list(slices) == ["kind", "service", "domain"]  # the suite's keys, then the frames'
    assert list(slices["service"]) == ["H", "R"]
    assert list(slices["kind"]) == ["single", "(none)"]


@pytest.mark.parametrize(
    ("metrics", "slots", "message"),
    [
        ("{convention: sgd}", None, "convention 'sgd' needs 'slots'"),
        ("{convention: sgd}", "[a.b, c.d]", "convention 'sgd' scores service frames"),
        ("{convention: sgdd}", "[a.b]", "unknown convention 'sgdd'"),
        ("{scope: frame, matching: nope}", "[a.b]", "unknown matching 'nope'"),
    ],
)
def test_a_convention_the_suite_cannot_carry_is_one_clear_line(
    tmp_path: Path, metrics: str, slots: str | None, message: str
) -> None:
    (tmp_path / "suite.yaml").write_text(
        'mutator: {type: python, callable: "builtins:print"}\n'
        "cases: {inline: [{id: c1, input: {prompt: p}, expected_post_state: {a.b: 1}}]}\n"
        + ("" if slots is None else f"slots: {slots}\n")
        + f"metrics: {metrics}\n"
    )
    with pytest.raises(SuiteProblemsError) as info:
        load_suite(tmp_path / "suite.yaml", load_mutator=False)
    lines = [p for p in info.value.problems if message in p]
    assert lines, info.value.problems
    assert "suite.yaml:" in lines[0]


@pytest.mark.phoenix
def test_the_experiment_stores_the_conventions_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, phoenix_url: str
) -> None:
    """The run's Phoenix experiment carries the SGD figures under their names, read back over
    REST."""
    data = _run(tmp_path, monkeypatch, "{convention: sgd}", phoenix=phoenix_url)
    experiment = str(data["experiment_url"]).split("experimentId=")[1]
    response = httpx.get(f"{phoenix_url}/v1/experiments/{experiment}", timeout=30)
    response.raise_for_status()
    meta = response.json()["data"]["metadata"]
    assert meta["sgd_joint_goal_accuracy"] == pytest.approx((1 + 0 + 0.36) / 3, abs=1e-12)
    assert meta["sgd_average_goal_accuracy"] == pytest.approx((1 + 1 + 0.36) / 3, abs=1e-12)
    assert meta["conventions"]["convention"]["name"] == "sgd"


def test_a_dstc10_run_whose_value_figures_exceed_one_is_a_valid_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DSTC10's scorer counts ``["1", "one"]`` against ``["1"]`` as two matching pairs (value
    P and R 4/3): the run's JSON report still validates against docs/report-schema.json, and
    the terminal, Markdown and HTML reports show the figure as it is."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    turns = [
        {"id": "t1", "input": {"prompt": "one person"},
         "expected_post_state": {"hotel.book.people": ["1", "one"]}},
        {"id": "t2", "input": {"prompt": "two nights"},
         "expected_post_state": {"hotel.book.stay": ["2"]}},
    ]  # fmt: skip
    predictions = [
        {"id": "t1", "actual_post_state": {"hotel.book.people": ["1"]}},
        {"id": "t2", "actual_post_state": {"hotel.book.stay": ["two"]}},
    ]
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    (tmp_path / "suite.yaml").write_text(
        "mutator: {type: replay, predictions: predictions.jsonl}\n"
        "cases: {file: turns.jsonl}\n"
        "slots: [hotel.book.people, hotel.book.stay]\n"
        "metrics: {convention: dstc10}\n"
    )
    ran = CliRunner().invoke(
        app,
        ["run", "suite.yaml", "--no-phoenix", "--report-json", "r.json", "--markdown", "r.md",
         "--report-html", "r.html"],
    )  # fmt: skip
    assert ran.exit_code in (0, 1), ran.output
    data = json.loads((tmp_path / "r.json").read_text())
    # t1: 2 pairs over 1 predicted / 2 expected values -> slot credit 4/3; t2: "two" is "2" -> 1
    assert data["dstc10_value_precision"] == pytest.approx((4 / 3 + 1) / 2, abs=1e-12)
    assert data["dstc10_value_recall"] == pytest.approx((4 / 3 + 1) / 2, abs=1e-12)
    assert data["dstc10_value_f1"] > 1
    assert data["dstc10_slot_accuracy"] == pytest.approx(3 / 4, abs=1e-12)
    figures = data["conventions"]["convention"]["figures"]
    assert figures["dstc10_value_precision"] == data["dstc10_value_precision"]
    schema = json.loads(REPORT_SCHEMA.read_text())
    jsonschema.validate(data, schema)
    # accuracies stay ratios, at top level and under conventions.convention.figures
    with pytest.raises(jsonschema.ValidationError, match="greater than the maximum"):
        jsonschema.validate({**data, "dstc10_slot_accuracy": 1.5}, schema)
    figures["dstc10_slot_accuracy"] = 1.5
    with pytest.raises(jsonschema.ValidationError, match="greater than the maximum"):
        jsonschema.validate(data, schema)
    assert "| dstc10_value_precision | 116.7% |" in (tmp_path / "r.md").read_text()
    assert "116.7%" in ran.output
    assert "116.7%" in (tmp_path / "r.html").read_text()


def _frame_suite(tmp_path: Path, slots: str, metadata: list[object]) -> Path:
    """The SGD suite with its turns' metadata replaced (an item None: no metadata)."""
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    turns = [
        {k: v for k, v in t.items() if k != "metadata"} | ({} if m is None else {"metadata": m})
        for t, m in zip(TURNS, metadata, strict=True)
    ]
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "mutator: {type: replay, predictions: predictions.jsonl}\n"
        "cases: {file: turns.jsonl}\n"
        f"slots: {slots}\n"
        "metrics: {convention: sgd}\n"
    )
    return suite


SERVICES = [{"services": ["Restaurants_1"]}, {"services": ["Restaurants_1", "Hotels_2"]}]
WITH_KEY = "{file: schema.json, services_key: metadata.services}"


@pytest.mark.parametrize(
    ("slots", "metadata", "line"),
    [
        (
            "{file: schema.json}",
            SERVICES,
            "suite.yaml:3: slots.services_key: convention 'sgd' scores the service frames each "
            "case names: set it to the case metadata key listing them",
        ),
        (
            WITH_KEY,
            [SERVICES[0], None],
            "turns.jsonl: case 't2': metadata.services: convention 'sgd' scores the service "
            "frames each case names under metadata.services, but 1 of 2 cases name none",
        ),
        (
            "{file: schema.json, services_key: metadata.service}",  # a typo: no case has it
            SERVICES,
            "turns.jsonl: case 't1': metadata.service: convention 'sgd' scores the service "
            "frames each case names under metadata.service, but 2 of 2 cases name none",
        ),
        (
            WITH_KEY,
            [{"services": []}, {"services": []}],
            "turns.jsonl: metadata.services: convention 'sgd' scores the service frames each "
            "case names under metadata.services, but every case names an empty list",
        ),
    ],
    ids=["no-services-key", "a-case-names-none", "key-typo", "no-case-has-a-frame"],
)
def test_validate_says_in_one_line_when_the_cases_carry_no_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slots: str, metadata: list[object], line: str
) -> None:
    """``convention: sgd`` scores the frames each case names: a suite that cannot say which
    (no services_key, cases without it, no case with a frame) would report sgd_ figures that
    are not SGD's, or none. ``stateval validate`` says so in one line, exit 2."""
    monkeypatch.chdir(tmp_path)
    _frame_suite(tmp_path, slots, metadata)
    result = CliRunner().invoke(app, ["validate", "suite.yaml"])
    assert result.exit_code == 2, result.output
    errors = [x for x in result.output.splitlines() if x.startswith("error:")]
    assert len(errors) == 1, result.output
    assert line in errors[0]
    assert "Traceback" not in result.output


def test_validate_accepts_a_case_with_no_frame_beside_framed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``services: []`` is a turn with no frame (SGD scores nothing there), not a mistake."""
    monkeypatch.chdir(tmp_path)
    _frame_suite(tmp_path, WITH_KEY, [SERVICES[0], {"services": []}])
    result = CliRunner().invoke(app, ["validate", "suite.yaml"])
    assert result.exit_code == 0, result.output
    assert "ok (2 cases" in result.output
