"""``metrics: {convention: mwzeval}`` reproduces the official mwzeval DST figures.

``tests/fixtures/mwzeval_official/`` holds 816 real MultiWOZ 2.1 test turns with perturbed
predictions (``make_turns.py``, the edge cases its docstring lists) and the output of
Tomiinek/MultiWOZ_Evaluation's own ``normalize_data`` + ``get_dst`` on them under fuzzywuzzy's
three back-ends (``run_official.py``: ``official_scores.json``, each turn's joint match too),
and fuzzywuzzy's ``partial_ratio`` of 1,945 string pairs under the same back-ends
(``partial_ratio_pairs.json``), and its value normaliser on 3,152 (slot, value) pairs
(``normaliser_values.json``). Here the turns become stateval cases as a user would write
them (``domain.slot`` paths, values as they are) and ``stateval run`` scores a replay of the
predictions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay_report import replay_report
from stateval.compare import UnitAccumulator, compare_states, resolve_options
from stateval.compare._fuzzywuzzy import partial_ratio
from stateval.compare._mwzeval import normalize_slot_value
from stateval.state import InterpretiveState

FIXTURE = Path(__file__).parent / "fixtures" / "mwzeval_official"
PINNED = "python-Levenshtein 0.27.5"


def _load(name: str) -> Any:
    return json.loads((FIXTURE / name).read_text(encoding="utf-8"))


def _turns() -> list[dict[str, Any]]:
    lines = (FIXTURE / "turns.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _flat(state: dict[str, dict[str, str]]) -> dict[str, str]:
    return {f"{domain}.{slot}": v for domain, slots in state.items() for slot, v in slots.items()}


def _run(tmp_path: Path, metrics: str, with_dontcare: bool = False) -> dict[str, Any]:
    """``with_dontcare``: the expected states also hold the ``dontcare`` labels mwzeval's
    loader drops from its references (as MultiWOZ 2.2 and the shared data have them)."""
    turns = _turns()
    expected = [
        (t["id"], _flat(t["ref"]) | _flat(t["dropped"] if with_dontcare else {})) for t in turns
    ]
    predicted = [_flat(t["pred"]) for t in turns]
    return replay_report(tmp_path, expected, predicted, f"metrics: {metrics}\n")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("mwzeval"), "{convention: mwzeval}")


def _official(backend: str = PINNED) -> dict[str, float]:
    """The official figures as fractions (mwzeval reports joint accuracy and F1 in percent)."""
    dst = _load("official_scores.json")[backend]["dst"]
    return {
        "mwzeval_joint_goal_accuracy": dst["joint_accuracy"] / 100,
        "mwzeval_value_precision": dst["slot_precision"],
        "mwzeval_value_recall": dst["slot_recall"],
        "mwzeval_value_f1": dst["slot_f1"] / 100,
    }


def test_mwzeval_preset_gives_the_official_figures(report: dict[str, Any]) -> None:
    official = _official()
    assert report["conventions"]["convention"]["n_units"] == 816
    for name, figure in official.items():
        assert report[name] == pytest.approx(figure, abs=1e-9), name
    # beside stateval's own figures (strict equality here), which keep their meaning
    assert report["overall_match_rate"] < official["mwzeval_joint_goal_accuracy"] - 0.1
    assert report["value_f1"] < official["mwzeval_value_f1"] - 0.1


def test_dontcare_in_the_expected_states_is_dropped_as_mwzevals_loader_does(
    tmp_path: Path,
) -> None:
    """Gold with its ``dontcare`` labels (132 slots in 115 turns): the preset reads them as no
    value, as mwzeval's references have none, so the figures stay the official ones; keeping
    them (``drop_expected: []``) gives other figures, no longer named mwzeval's."""
    assert sum(bool(t["dropped"]) for t in _turns()) > 100
    official = _official()
    (tmp_path / "a").mkdir()
    data = _run(tmp_path / "a", "{convention: mwzeval}", with_dontcare=True)
    for name, figure in official.items():
        assert data[name] == pytest.approx(figure, abs=1e-9), name
    (tmp_path / "b").mkdir()
    kept = _run(tmp_path / "b", "{convention: mwzeval, drop_expected: []}", with_dontcare=True)
    assert "mwzeval_joint_goal_accuracy" not in kept
    assert kept["custom_joint_goal_accuracy"] > official["mwzeval_joint_goal_accuracy"] + 0.01


def test_list_valued_gold_reads_as_mwzevals_loader_reads_it() -> None:
    """MultiWOZ 2.2 gold lists a slot's accepted values; mwzeval's loader keeps the first and
    drops a slot whose list holds ``dontcare``: the preset reads such gold the same way."""
    gold = InterpretiveState.from_flat(
        {"train.leaveat": ["16:15", "17:00"], "hotel.area": ["north", "dontcare"]}
    )
    first = InterpretiveState.from_flat({"train.leaveat": "4:15 pm"})
    second = InterpretiveState.from_flat({"train.leaveat": "17:00"})  # only the second
    figures = []
    for pred in (first, second):
        acc = UnitAccumulator(resolve_options("mwzeval"), ())
        acc.add(compare_states(gold, pred))
        figures.append(acc.result().figures)
    assert figures[0]["mwzeval_joint_goal_accuracy"] == 1.0  # 4:15 pm -> 16:15, area dropped
    assert figures[0]["mwzeval_value_recall"] == 1.0
    assert figures[1]["mwzeval_joint_goal_accuracy"] == 0.0


def test_mwzeval_preset_agrees_turn_by_turn() -> None:
    """Each turn alone: the preset's joint goal is the official one of that turn."""
    official = _load("official_scores.json")[PINNED]["joint_per_turn"]
    options = resolve_options("mwzeval")
    differ = []
    for t in _turns():
        one = UnitAccumulator(options, ())
        expected, actual = (InterpretiveState.from_flat(_flat(t[k])) for k in ("ref", "pred"))
        one.add(compare_states(expected, actual))
        joint = one.result().figures["mwzeval_joint_goal_accuracy"]
        if (joint == 1.0) != official[t["id"]]:
            differ.append(t["id"])
    assert differ == []
    assert 100 < sum(official.values()) < 700  # right and wrong turns both


def test_the_normaliser_decides_turns_of_the_fixture() -> None:
    """Slots the normaliser turns from wrong to right (or back) under partial_ratio > 95."""
    flips = 0
    for t in _turns():
        ref, pred = _flat(t["ref"]), _flat(t["pred"])
        for path in ref.keys() & pred.keys():
            raw = partial_ratio(pred[path], ref[path]) > 95
            norm = normalize_slot_value(path, pred[path])
            read = partial_ratio(norm, normalize_slot_value(path, ref[path])) > 95
            flips += raw != read
    assert flips > 50


def test_the_backends_part_on_the_fixture_and_the_preset_follows_the_pinned_one(
    report: dict[str, Any],
) -> None:
    """python-Levenshtein 0.12.2 (C) aligns some pairs differently from 0.27.5 (rapidfuzz):
    the official joint accuracy moves, and the preset follows 0.27.5."""
    old = _official("python-Levenshtein 0.12.2")["mwzeval_joint_goal_accuracy"]
    assert abs(report["mwzeval_joint_goal_accuracy"] - old) > 1e-4


def test_partial_ratio_is_fuzzywuzzys_with_python_levenshtein() -> None:
    data = _load("partial_ratio_pairs.json")
    columns = data["columns"]
    rows = [dict(zip(columns, row, strict=True)) for row in data["pairs"]]
    assert len(rows) > 1500
    wrong = [(r["a"], r["b"]) for r in rows if partial_ratio(r["a"], r["b"]) != r["lev027"]]
    assert wrong == []
    for other in ("lev012", "difflib"):  # the back-ends do part on mwzeval's "> 95"
        assert any((r["lev027"] > 95) != (r[other] > 95) for r in rows), other


def test_mwzeval_normaliser_is_mwzevals() -> None:
    """mwzeval's own ``normalize_state_slot_value`` on 3,152 (slot, value) pairs: every key of
    its tables, real values and time-like strings (``normaliser_values.json``)."""
    data = _load("normaliser_values.json")
    rows = data["rows"]
    assert data["columns"] == ["slot", "value", "normalised"]
    assert sum(value != out for _, value, out in rows) > 2000
    wrong = [(s, v, o) for s, v, o in rows if normalize_slot_value(f"domain.{s}", v) != o]
    assert wrong == []


@pytest.mark.parametrize(
    ("path", "value", "normalised"),
    [
        ("train.leaveat", "5:15 pm", "17:15"),
        ("taxi.arriveby", "by 1715", "17:15"),
        ("train.leaveat", "after 7:05 am", "07:05"),
        ("train.arrive", "morning", "08:00"),
        ("restaurant.name", " Nando's ", "nandos"),
        ("hotel.name", "A & B Guest House", "a and b guest house"),
        ("attraction.type", "night club", "nightclub"),
        ("attraction.type", "Night Club", "Night Club"),
        ("restaurant.food", "Sea Food", "seafood"),
        ("hotel.parking", "free", "yes"),
        ("hotel.area", "North", "North"),
        ("restaurant.booktime", "5:15 pm", "5:15 pm"),
        ("train.leaveat", "five pm", "five"),
        ("train.leaveat", "five:30 pm", "five:30"),  # mwzeval raises ValueError here
    ],
)
def test_mwzeval_normaliser(path: str, value: str, normalised: str) -> None:
    assert normalize_slot_value(path, value) == normalised
