"""Run-level figures, per-field confusion counts and slices stored on the Phoenix experiment,
and similarity-scored fields, read back from a real Phoenix server over REST."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from stateval.mutators import PythonMutator, StructuredInput
from stateval.run import PhoenixTarget, start_journal
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import load_suite
from stateval.upload import rescore_to_phoenix, run_suite

pytestmark = pytest.mark.phoenix

CASES = [
    {
        "id": "h1",
        "input": {"prompt": "hotel north, Acorn Guest House"},
        "expected_post_state": {"hotel.area": "north", "hotel.name": "acorn guest house"},
        "metadata": {"domain": "hotel"},
    },
    {
        "id": "h2",
        "input": {"prompt": "hotel south, Alpha Milton"},
        "expected_post_state": {"hotel.area": "south", "hotel.name": "alpha milton"},
        "metadata": {"domain": "hotel"},
    },
    {
        "id": "t1",
        "input": {"prompt": "taxi"},
        "expected_post_state": {"taxi.leaveat": "10:00"},
        "metadata": {"domain": "taxi"},
    },
]

PREDICTED = {
    "h1": {"hotel.area": "north", "hotel.name": "acorn guesthouse"},  # fuzzy match
    "h2": {"hotel.area": "north", "hotel.name": "alpha milton", "hotel.stars": "4"},  # extra
    "t1": {},  # missing
}


def _tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    out = state.copy()
    for path, value in PREDICTED[input.message_id].items():
        out.set_value(path, ValueConfidence(value, 1.0))
    return out


def _get(url: str, path: str) -> Any:
    response = httpx.get(f"{url}{path}", timeout=30)
    response.raise_for_status()
    return response.json()


def test_the_experiment_stores_run_figures_fields_and_slices(
    tmp_path: Path, phoenix_url: str
) -> None:
    data = {
        "name": "metrics",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": CASES},
        "slots": ["hotel.area", "hotel.name", "hotel.stars", "taxi.leaveat"],
        "policies": {"hotel.name": {"fuzzy": 0.8, "score": "similarity"}},
        "slices": ["metadata.domain"],
        "thresholds": {"value_f1": 0.9},
        "phoenix": {"dataset": f"metrics-{uuid.uuid4().hex[:8]}"},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(data))
    suite = load_suite(tmp_path / "suite.yaml", load_mutator=False)
    suite = dataclasses.replace(suite, mutator=PythonMutator(_tracker))
    journal = start_journal(tmp_path / ".stateval", suite, phoenix_url=phoenix_url)
    target = PhoenixTarget(phoenix_url)
    outcome = asyncio.run(run_suite(suite, journal, concurrency=2, phoenix=target))
    assert outcome.upload is not None
    assert outcome.upload.error is None
    summary = outcome.summary
    # by hand: tp 3 (area h1, name h1, name h2), fp 2 (area h2 wrong, stars extra),
    # fn 2 (area h2 wrong, leaveat missing)
    assert (summary.value_precision, summary.value_recall) == (0.6, 0.6)
    assert summary.passed is False  # value_f1 0.6 < 0.9

    experiment_id = journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    meta = _get(phoenix_url, f"/v1/experiments/{experiment_id}")["data"]["metadata"]
    assert meta["stateval_run_id"] == journal.run_id  # the creation metadata is kept
    assert meta["passed"] is False
    assert meta["value_precision"] == pytest.approx(0.6)
    assert meta["value_recall"] == pytest.approx(0.6)
    assert meta["value_f1"] == pytest.approx(0.6)
    assert meta["joint_goal_accuracy"] == pytest.approx(1 / 3)
    assert meta["slot_accuracy"] == pytest.approx(9 / 12)
    assert meta["conventions"]["list_credit"] == "all_or_nothing"
    stars = meta["fields"]["hotel.stars"]
    assert (stars["extra"], stars["absent"], stars["f1"]) == (1, 2, 0.0)
    area = meta["fields"]["hotel.area"]
    assert (area["matching"], area["mismatched"], area["absent"]) == (1, 1, 1)
    assert meta["worst_fields"][:2] == ["hotel.stars", "taxi.leaveat"]
    hotel = meta["slices"]["metadata.domain"]["hotel"]
    assert hotel["n_cases"] == 2
    assert hotel["value_precision"] == pytest.approx(3 / 5)
    assert meta["slices"]["metadata.domain"]["taxi"]["value_recall"] == 0.0
    assert meta["thresholds"][0]["name"] == "value_f1"

    # a similarity-scored field: its evaluation's score is the similarity
    records = _get(phoenix_url, f"/v1/experiments/{experiment_id}/json")
    names = {(r["input"]["case_id"], a["name"]): a for r in records for a in r["annotations"]}
    h1_name = names[("h1", "field:hotel.name")]
    assert h1_name["label"] == "matching"
    assert 0.8 <= h1_name["score"] < 1.0
    assert summary.metrics is not None
    name = summary.metrics.fields["hotel.name"]
    assert name.mean_score == pytest.approx((h1_name["score"] + 1.0 + 1.0) / 3)

    # a rescoring stores its own figures on its own experiment
    rescored = asyncio.run(rescore_to_phoenix(suite, journal, target))
    assert rescored.upload is not None
    assert rescored.upload.error is None
    new_id = journal.ack("rescore-1:experiment")["experiment_id"]  # type: ignore[index]
    new_meta = _get(phoenix_url, f"/v1/experiments/{new_id}")["data"]["metadata"]
    assert new_meta["value_f1"] == pytest.approx(0.6)
