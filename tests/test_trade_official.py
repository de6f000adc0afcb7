"""``metrics: {convention: trade}`` reproduces TRADE's ``evaluate_metrics``.

``tests/fixtures/trade_official/`` holds 751 real MultiWOZ 2.1 test turns (TRADE's cleaned
labels) with perturbed predictions and 40 turns with ``-`` in a name (``make_turns.py``), and
the output of TRADE's own ``evaluate_metrics`` / ``compute_acc`` / ``compute_prf`` on them
(``run_official.py``: ``official_scores.json``). Here the turns become stateval cases and
``stateval run`` scores a replay of the predictions over TRADE's 30 slots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay_report import replay_report

FIXTURE = Path(__file__).parent / "fixtures" / "trade_official"
TRADE_SLOTS = [
    f"{domain}.{slot}"
    for domain, slots in (
        ("hotel", "pricerange type parking book_stay book_day book_people area stars internet"),
        ("hotel", "name"),
        ("train", "destination day departure arriveby book_people leaveat"),
        ("attraction", "area name type"),
        ("restaurant", "food pricerange area name book_time book_day book_people"),
        ("taxi", "leaveat destination departure arriveby"),
    )
    for slot in slots.split()
]
NAMES = {"trade_joint_goal_accuracy": "Joint Acc", "trade_slot_accuracy": "Turn Acc",
         "trade_value_f1": "Joint F1"}  # fmt: skip


def _turns(name: str) -> list[dict[str, Any]]:
    lines = (FIXTURE / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _official(name: str) -> dict[str, float]:
    raw = json.loads((FIXTURE / "official_scores.json").read_text(encoding="utf-8"))
    figures: dict[str, float] = raw[name]["evaluation_metrics"]
    return figures


def _run(tmp_path: Path, name: str, metrics: str = "{convention: trade}") -> dict[str, Any]:
    turns = _turns(name)
    expected = [(t["id"], t["gold"]) for t in turns]
    suite = f"slots: {json.dumps(TRADE_SLOTS)}\nmetrics: {metrics}\n"
    return replay_report(tmp_path, expected, [t["pred"] for t in turns], suite)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("trade"), "turns.jsonl")


def test_trade_preset_gives_the_official_figures(report: dict[str, Any]) -> None:
    official = _official("turns.jsonl")
    assert report["conventions"]["convention"]["n_units"] == 751
    for name, key in NAMES.items():
        assert report[name] == pytest.approx(official[key], abs=1e-9), name
    # the run's own figures under the suite's (here strict) policies: the same numbers,
    # with the preset's averaging (per turn) for value F1
    assert report["joint_goal_accuracy"] == pytest.approx(official["Joint Acc"], abs=1e-9)
    assert report["slot_accuracy"] == pytest.approx(official["Turn Acc"], abs=1e-9)
    assert report["value_f1"] == pytest.approx(official["Joint F1"], abs=1e-9)


def test_the_former_recipe_does_not_reproduce_trade(tmp_path: Path) -> None:
    """docs/concepts.md used to configure TRADE with ``normalize: [case, whitespace]``: TRADE
    compares values exactly, so on predictions that differ in case or spacing it counts right
    what TRADE counts wrong."""
    (tmp_path / "run").mkdir()
    data = _run(tmp_path / "run", "turns.jsonl", "{averaging: case}\npolicies: "
                '{"*": {confidence: ignore, normalize: [case, whitespace]}}')  # fmt: skip
    official = _official("turns.jsonl")
    assert data["joint_goal_accuracy"] > official["Joint Acc"] + 0.03
    assert data["value_f1"] > official["Joint F1"] + 0.03


def test_trade_counts_a_dashed_wrong_value_twice(tmp_path: Path) -> None:
    """TRADE's ``compute_acc`` finds a triple's slot with ``rsplit("-", 1)``: a wrong value with
    a ``-`` in it (in one of the two values) counts as two errors in slot accuracy. The preset
    counts it once (joint accuracy and F1 agree): the official figure is lower by exactly
    those slots over 30 per turn."""
    turns = _turns("dash_turns.jsonl")
    twice = sum(
        1
        for t in turns
        for path in t["gold"].keys() & t["pred"].keys()
        if t["gold"][path] != t["pred"][path] and "-" in t["gold"][path] + t["pred"][path]
    )
    assert twice > 5
    data = _run(tmp_path, "dash_turns.jsonl")
    official = _official("dash_turns.jsonl")
    assert data["trade_joint_goal_accuracy"] == pytest.approx(official["Joint Acc"], abs=1e-9)
    assert data["trade_value_f1"] == pytest.approx(official["Joint F1"], abs=1e-9)
    gap = data["trade_slot_accuracy"] - official["Turn Acc"]
    assert gap == pytest.approx(twice / (30 * len(turns)), abs=1e-9)
