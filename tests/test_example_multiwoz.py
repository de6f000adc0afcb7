"""The MultiWOZ example: its data slice, the rule-based tracker, and the scoring script."""

from __future__ import annotations

import doctest
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from stateval import InterpretiveState, PythonMutator, StructuredInput

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "multiwoz"
DATA = EXAMPLE / "data"
_MODULES = ("tracker", "lexicon", "slots", "score", "make_slice")


@pytest.fixture(scope="module")
def example() -> Iterator[dict[str, ModuleType]]:
    """The example's modules, imported the way its scripts import each other."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        yield {name: importlib.import_module(name) for name in _MODULES}
    finally:
        sys.path.remove(str(EXAMPLE))
        for name in _MODULES:
            sys.modules.pop(name, None)


def _updates(example: dict[str, ModuleType], utterance: str, **kwargs: Any) -> dict[str, str]:
    raw = example["tracker"].extract_updates(utterance, **kwargs)
    return {slot: value for slot, (value, _rule) in raw.items()}


def _cases() -> list[dict[str, Any]]:
    with (DATA / "cases.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


# -- the tracker's rules ---------------------------------------------------------------------


def test_domain_detection_finds_every_domain_in_order(example: dict[str, ModuleType]) -> None:
    detect = example["tracker"].detect_domains
    assert detect("I need a taxi from the hotel to the police station") == [
        "taxi",
        "hotel",
        "police",
    ]
    assert detect("Where is the nearest hospital? Also a train and a restaurant.") == [
        "hospital",
        "train",
        "restaurant",
    ]
    assert detect("I want to visit a museum") == ["attraction"]
    assert detect("Thank you, goodbye.") == []


@pytest.mark.parametrize(
    ("utterance", "expected"),
    [
        ("I want a restaurant in the center of town", {"restaurant.area": "centre"}),
        ("Find me an expensive hotel in the west", {"hotel.pricerange": "expensive"}),
        ("Is there a cheap place to eat?", {"restaurant.pricerange": "cheap"}),
        ("It should have a 4 star rating", {"hotel.stars": "4"}),
        ("I want a three-star place to stay", {"hotel.stars": "3"}),
        ("It needs free parking and wifi", {"hotel.parking": "yes", "hotel.internet": "yes"}),
        ("I'd like a guest house please", {"hotel.type": "guesthouse"}),
        ("Actually I'd prefer a hotel", {"hotel.type": "hotel"}),
        ("I want some modern european food", {"restaurant.food": "modern european"}),
        ("We'll stay for 3 nights", {"hotel.book_stay": "3"}),
        (
            "Book a table for 4 people at 15:00 on wednesday",
            {
                "restaurant.book_people": "4",
                "restaurant.book_time": "15:00",
                "restaurant.book_day": "wednesday",
            },
        ),
        (
            "I need a train from cambridge to london kings cross on friday after 9am",
            {
                "train.departure": "cambridge",
                "train.destination": "london kings cross",
                "train.day": "friday",
                "train.leaveat": "09:00",
            },
        ),
        ("The train should arrive by 5:30 pm", {"train.arriveby": "17:30"}),
        ("I need 2 tickets for the train", {"train.book_people": "2"}),
        ("A train leaving stansted please", {"train.departure": "stansted airport"}),
        (
            "Book me a taxi to Christ College leaving at 10.15",
            {"taxi.destination": "christ college", "taxi.leaveat": "10:15"},
        ),
        ("Is there a hotel called the Lensfield Hotel?", {"hotel.name": "lensfield hotel"}),
        ("I need the paediatric department of the hospital", {"hospital.department": "paediatric"}),
    ],
)
def test_each_rule_sets_its_slot(
    example: dict[str, ModuleType], utterance: str, expected: dict[str, str]
) -> None:
    updates = _updates(example, utterance)
    assert {slot: updates.get(slot) for slot in expected} == expected


def test_cuisine_words_are_not_read_as_areas(example: dict[str, ModuleType]) -> None:
    assert _updates(example, "A restaurant with north american food please") == {
        "restaurant.food": "north american"
    }


def test_stay_length_is_not_read_as_people(example: dict[str, ModuleType]) -> None:
    updates = _updates(example, "Book the hotel for 2 nights for 5 people")
    assert updates["hotel.book_stay"] == "2"
    assert updates["hotel.book_people"] == "5"


def test_domain_neutral_slots_follow_the_nearest_domain(example: dict[str, ModuleType]) -> None:
    updates = _updates(example, "I need a hotel in the north and a restaurant in the south")
    assert updates["hotel.area"] == "north"
    assert updates["restaurant.area"] == "south"


def test_without_any_domain_clue_neutral_slots_are_left_alone(
    example: dict[str, ModuleType],
) -> None:
    assert _updates(example, "Something in the north on friday") == {}
    system = "Where in town would you like the restaurant to be?"
    assert _updates(example, "Something in the north", system_utterance=system) == {
        "restaurant.area": "north"
    }


def test_dontcare_goes_to_the_slot_named_or_asked_about(example: dict[str, ModuleType]) -> None:
    assert _updates(example, "I don't care about the price of the restaurant") == {
        "restaurant.pricerange": "dontcare"
    }
    # MultiWOZ's tokenised "do n't" is read as "don't"; the system's question names the slot.
    system = "What area of town would you like the hotel in?"
    assert _updates(example, "I do n't care .", system_utterance=system) == {
        "hotel.area": "dontcare"
    }


def test_taxi_endpoints_resolve_to_names_in_the_state(example: dict[str, ModuleType]) -> None:
    previous = {"hotel.name": "acorn guest house", "restaurant.name": "bedouin"}
    updates = _updates(
        example,
        "I need a taxi from the hotel to the restaurant, arriving by 7pm",
        previous=previous,
    )
    assert updates == {
        "taxi.departure": "acorn guest house",
        "taxi.destination": "bedouin",
        "taxi.arriveby": "19:00",
    }


def test_same_day_and_group_are_copied_from_another_booking(
    example: dict[str, ModuleType],
) -> None:
    previous = {"hotel.book_day": "friday", "hotel.book_people": "3"}
    updates = _updates(
        example, "Book a table for the same group of people on the same day", previous=previous
    )
    assert updates == {"restaurant.book_day": "friday", "restaurant.book_people": "3"}


# -- the tracker as a python mutator ---------------------------------------------------------


def test_track_keeps_the_pre_state_and_records_its_values(example: dict[str, ModuleType]) -> None:
    pre = InterpretiveState.from_flat({"train.day": "monday"})
    turn = StructuredInput("I also want a cheap guesthouse", "d7:2")
    post = example["tracker"].track(pre, turn)
    assert post.to_flat() == {
        "train.day": "monday",
        "hotel.type": "guesthouse",
        "hotel.pricerange": "cheap",
    }
    value = post.best("hotel.pricerange")
    assert value is not None
    assert (value.message_id, value.inference) == ("d7:2", "rule:pricerange")
    # "cheap" comes before the domain word that places it: a lexicon match, domain found after
    tracker = example["tracker"]
    strength = tracker.STRENGTH["lexicon"] * tracker.DOMAIN_EVIDENCE["after"]
    assert value.confidence == pytest.approx(strength, abs=1e-3)


def test_track_is_less_sure_where_its_evidence_is_weaker(example: dict[str, ModuleType]) -> None:
    track = example["tracker"].track

    def confidence(prompt: str, path: str, system: str = "") -> float:
        turn = StructuredInput(prompt, "m", {"system_utterance_before": system})
        value = track(InterpretiveState(), turn).best(path)
        assert value is not None, (prompt, path)
        return value.confidence

    named = confidence("a restaurant in the centre", "restaurant.area")
    alias = confidence("a restaurant in the center", "restaurant.area")
    from_system = confidence("in the centre please", "restaurant.area", "which restaurant area?")
    free_text = confidence("a restaurant called the golden wok", "restaurant.name")
    assert named > alias > from_system
    assert named > free_text


def test_track_never_changes_its_input_and_is_deterministic(
    example: dict[str, ModuleType],
) -> None:
    track = example["tracker"].track
    for case in _cases()[:40]:
        pre = InterpretiveState.from_flat(case["pre_state"])
        before = pre.to_dict()
        turn = StructuredInput(**case["input"])
        first, second = track(pre, turn), track(pre, turn)
        assert pre.to_dict() == before
        assert first.to_dict() == second.to_dict()


async def test_track_runs_as_a_python_mutator(example: dict[str, ModuleType]) -> None:
    mutator = PythonMutator(example["tracker"].track)
    post = await mutator.mutate(InterpretiveState(), StructuredInput("a 2 star hotel", "m"))
    assert post.to_flat() == {"hotel.stars": "2", "hotel.type": "hotel"}


def test_tracker_docstring_examples_run(example: dict[str, ModuleType]) -> None:
    result = doctest.testmod(example["tracker"])
    assert result.attempted > 0
    assert result.failed == 0


# -- the data ----------------------------------------------------------------------------------


def test_cases_are_well_formed_stateval_cases(example: dict[str, ModuleType]) -> None:
    cases = _cases()
    trade_slots = set(example["slots"].TRADE_SLOTS)
    assert len(trade_slots) == 30
    ids = [case["id"] for case in cases]
    assert len(ids) == len(set(ids))
    assert 150 <= len(cases) <= 250
    assert len({case["metadata"]["dialogue_id"] for case in cases}) >= 25
    for case in cases:
        assert set(case) == {"id", "pre_state", "input", "expected_post_state", "metadata"}
        InterpretiveState.from_flat(case["pre_state"])
        expected = InterpretiveState.from_flat(case["expected_post_state"])
        turn = StructuredInput(**case["input"])
        assert turn.message_id == case["id"]
        assert case["id"] == f"{turn.metadata['dialogue_id']}:{turn.metadata['turn_index']}"
        assert "system_utterance_before" in turn.metadata
        assert set(expected.paths()) <= trade_slots


def test_committed_files_are_make_slice_output(
    example: dict[str, ModuleType], tmp_path: Path
) -> None:
    # Re-cut the committed slice keeping every dialogue: both files come out byte for byte.
    example["make_slice"].main([str(DATA / "multiwoz21_slice.jsonl"), "--every", "1",
                                "--out-dir", str(tmp_path)])  # fmt: skip
    for name in ("multiwoz21_slice.jsonl", "cases.jsonl"):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes()


def test_slice_keeps_whole_dialogues_and_its_attribution() -> None:
    text = (DATA / "multiwoz21_slice.jsonl").read_text(encoding="utf-8")
    turns = [json.loads(line) for line in text.splitlines()]
    by_dialogue: dict[str, list[int]] = {}
    for turn in turns:
        by_dialogue.setdefault(turn["dialogue_id"], []).append(turn["turn_index"])
    for indexes in by_dialogue.values():
        assert indexes == list(range(len(indexes)))
    attribution = (DATA / "ATTRIBUTION.md").read_text(encoding="utf-8")
    for needle in ("CC BY 4.0", "Eric", "Budzianowski", "ConvLab-2", "creativecommons.org"):
        assert needle in attribution


# -- the scoring script ----------------------------------------------------------------------


def test_score_script_prints_the_three_metrics() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLE / "score.py"), "--limit", "20"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("20 turns from ")
    assert "Per-slot accuracy" in out
    figures = {}
    for name in ("joint goal accuracy", "slot accuracy", "F1"):
        match = re.search(rf"{name}: ([0-9.]+)", out)
        assert match, f"{name} missing from:\n{out}"
        figures[name] = float(match.group(1))
    assert all(0.0 <= v <= 1.0 for v in figures.values())
    # Slot accuracy counts absent-in-both slots as right, so it is never below JGA.
    assert figures["slot accuracy"] >= figures["joint goal accuracy"]


def test_readme_figures_come_from_a_real_run(tmp_path: Path) -> None:
    """The figures README.md and the example's README quote are what a run of the suite prints."""
    import asyncio

    from stateval.run import start_journal
    from stateval.suite import load_suite
    from stateval.upload import run_suite

    suite = load_suite(EXAMPLE / "suite.yaml")
    summary = asyncio.run(
        run_suite(suite, start_journal(tmp_path / ".stateval", suite), concurrency=4)
    ).summary
    readme = (EXAMPLE.parents[1] / "README.md").read_text(encoding="utf-8")
    local = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    p, r, f = summary.value_precision, summary.value_recall, summary.value_f1
    assert f"value precision / recall / F1  {p:.1%} / {r:.1%} / {f:.1%}" in readme
    for name, value in (
        ("joint goal accuracy", summary.joint_goal_accuracy),
        ("slot accuracy", summary.slot_accuracy),
    ):
        assert re.search(rf"^{name} +{value:.1%}$", readme, re.M), name
    rows = {row.path: row for row in summary.fields}
    worst = summary.fields[0]
    assert worst.path == "taxi.arriveby"
    line = re.search(r"^ taxi\.arriveby .*$", readme, re.M)
    assert line is not None
    assert line.group(0).split()[1:] == [
        str(worst.n),
        str(worst.matching),
        str(worst.mismatched),
        str(worst.missing),
        str(worst.extra),
        str(worst.absent),
        f"{worst.precision:.1%}",
        f"{worst.recall:.1%}",
        f"{worst.f1:.1%}",
        f"{worst.slot_accuracy:.1%}",
    ]
    assert rows["attraction.name"].f1 == pytest.approx(0.851, abs=5e-4)
    dialogue = summary.slices_dict()["metadata.dialogue"]
    for kind in ("multi-domain", "single-domain"):
        figures = dialogue[kind]
        assert f"{figures['value_f1']:.3f}" in local
        assert re.search(
            rf"^ {kind} +{figures['n_cases']} +{figures['value_precision']:.1%} +"
            rf"{figures['value_recall']:.1%} +{figures['value_f1']:.1%}",
            readme,
            re.M,
        ), kind
    assert f"value precision\n{p:.3f}, recall {r:.3f}, F1 {f:.3f}" in local


def test_the_schema_suite_counts_both_absent_only_in_the_domains_in_play(tmp_path: Path) -> None:
    import asyncio

    from stateval.run import start_journal
    from stateval.suite import load_suite
    from stateval.upload import run_suite

    suite = load_suite(EXAMPLE / "suite_schema.yaml")
    assert suite.slot_schema is not None
    assert suite.policies.for_path("hotel.name").list_mode == "any_of"  # free-form, derived
    assert suite.policies.for_path("hotel.area").fuzzy is None  # categorical, derived
    summary = asyncio.run(
        run_suite(suite, start_journal(tmp_path / ".stateval", suite), concurrency=4)
    ).summary
    cases = {c.id: c for c in suite.cases}
    rows = {row.path: row for row in summary.fields}
    for path in ("taxi.arriveby", "hotel.name", "train.day"):
        domain = path.split(".")[0]
        in_play = {cid for cid, c in cases.items() if domain in c.metadata["domains"]}
        compared = {s.case_id for s in summary.cases if s.comparison.field(path) is not None}
        assert rows[path].absent == len(in_play - compared), path
    local = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    assert f"slot accuracy is {summary.slot_accuracy:.3f} over the domains in play" in local
    assert f"value F1 is\n{summary.value_f1:.3f}" in local
