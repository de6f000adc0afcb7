"""docs/concepts.md's DSTC10 Track 2 recipe reproduces the official scorer's figures.

``tests/fixtures/dstc10_track2/turns.jsonl`` (600 generated turns, ``make_turns.py``) was
scored by the official ``task1/scripts/scores.py`` of alexa/alexa-with-dstc10-track2-dataset
(commit d556d55, "introduced partial scores for handling multiple values") with a two-line
shim for its ``dataset_walker`` import; ``official_scores.json`` is its output, unchanged.
The recipe below is the one docs/concepts.md gives, through public options only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from stateval.compare import (
    FieldPolicies,
    MetricOptions,
    MetricsAccumulator,
    SlotInfo,
    UnitAccumulator,
    compare_states,
    resolve_options,
)
from stateval.state import InterpretiveState

FIXTURE = Path(__file__).parent / "fixtures" / "dstc10_track2"
DOCS = Path(__file__).parent.parent / "docs" / "concepts.md"


def _recipe() -> dict[str, Any]:
    """The YAML recipe block of docs/concepts.md's DSTC10 Track 2 entry."""
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(r"<!-- dstc10-recipe -->\s*```yaml\n(.*?)```", text, re.DOTALL)
    assert match, "docs/concepts.md lost its DSTC10 Track 2 recipe block"
    recipe = yaml.safe_load(match.group(1))
    assert isinstance(recipe, dict)
    return recipe


def _flat(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        f"{domain}.{part}.{slot}": values
        for domain, parts in obj.items()
        for part, slots in parts.items()
        for slot, values in slots.items()
    }


def _stateval_figures(recipe: dict[str, Any]) -> dict[str, float]:
    slots = list(recipe["slots"])
    policies = FieldPolicies.from_mapping(recipe["policies"])
    acc = MetricsAccumulator(slots=slots, options=MetricOptions(**recipe["metrics"]))
    for line in (FIXTURE / "turns.jsonl").read_text(encoding="utf-8").splitlines():
        turn = json.loads(line)
        expected = InterpretiveState.from_flat(_flat(turn["ref"]))
        actual = InterpretiveState.from_flat(_flat(turn["pred"]))
        acc.add(compare_states(expected, actual, policies, paths=slots))
    m = acc.result()
    assert m.slot_accuracy is not None
    return {
        "joint_goal_accuracy": m.joint_goal_accuracy,
        "slot_accuracy": m.slot_accuracy,
        "precision": m.precision,
        "recall": m.recall,
        "f1": m.f1,
    }


def _official() -> dict[str, float]:
    raw = json.loads((FIXTURE / "official_scores.json").read_text(encoding="utf-8"))
    value = raw["slot"]["value_prediction"]
    return {
        "joint_goal_accuracy": raw["joint_goal_accuracy"],
        "slot_accuracy": raw["slot"]["accuracy"],
        "precision": value["prec"],
        "recall": value["rec"],
        "f1": value["f1"],
    }


def test_docs_recipe_reproduces_the_official_dstc10_scorer() -> None:
    recipe = _recipe()
    assert len(recipe["slots"]) == 19
    ours, official = _stateval_figures(recipe), _official()
    for name, figure in official.items():
        assert ours[name] == pytest.approx(figure, abs=1e-9), name


def test_the_former_recipe_does_not_reproduce_value_prf() -> None:
    """The recipe docs/concepts.md gave before (``any_of``, ``wrong_value: fp``,
    ``number_words``) misses the official value P/R/F1: the fixture tells the two apart."""
    recipe = _recipe()
    recipe["metrics"] = {"wrong_value": "fp"}
    recipe["policies"] = {
        "*": {"confidence": "ignore", "normalize": ["case", "number_words"], "list_mode": "any_of"}
    }
    ours, official = _stateval_figures(recipe), _official()
    assert abs(ours["f1"] - official["f1"]) > 0.01
    assert abs(ours["precision"] - official["precision"]) > 0.01


def test_dstc10_preset_reproduces_the_official_scorer() -> None:
    """``metrics: {convention: dstc10}``: the scorer's own matching (pairs equal after
    lower-casing and whole-value number words, list F1 as credit) over the 19 slots, whatever
    the suite's policies (strict here)."""
    slots = list(_recipe()["slots"])
    acc = MetricsAccumulator(slots=slots, options=resolve_options("dstc10"))
    for line in (FIXTURE / "turns.jsonl").read_text(encoding="utf-8").splitlines():
        turn = json.loads(line)
        expected = InterpretiveState.from_flat(_flat(turn["ref"]))
        actual = InterpretiveState.from_flat(_flat(turn["pred"]))
        acc.add(compare_states(expected, actual, paths=slots))
    result = acc.result()
    assert result.convention is not None
    figures = result.convention.figures
    value = {"precision": "value_precision", "recall": "value_recall", "f1": "value_f1"}
    for name, figure in _official().items():
        mine = figures[f"dstc10_{value.get(name, name)}"]
        assert mine == pytest.approx(figure, abs=1e-9), name
    # the run's own figures follow the (strict) policies: not the scorer's
    assert abs(result.joint_goal_accuracy - _official()["joint_goal_accuracy"]) > 0.01


def test_dstc10_preset_counts_value_pairs_as_the_scorer_does() -> None:
    """``["1", "one"]`` against ``["1"]``: the scorer counts two matching pairs (P 2/1, R 2/2,
    F1 4/3), so the slot is wrong (its F1 is not 1) and earns 4/3 as value credit; the
    recipe's ``list_mode: set`` calls it right."""
    gold = InterpretiveState.from_flat({"hotel.book.people": ["1", "one"]})
    pred = InterpretiveState.from_flat({"hotel.book.people": ["1"]})
    acc = UnitAccumulator(resolve_options("dstc10"), [SlotInfo("hotel.book.people")])
    acc.add(compare_states(gold, pred))
    figures = acc.result().figures
    assert figures["dstc10_slot_accuracy"] == 0.0
    assert figures["dstc10_value_precision"] == pytest.approx(4 / 3)
    assert figures["dstc10_value_recall"] == pytest.approx(4 / 3)
