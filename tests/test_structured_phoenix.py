"""Lists of records and weights in a real Phoenix: the sub-field and weighted evaluations of a
run, read back over REST."""

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
from stateval.upload import run_suite

pytestmark = pytest.mark.phoenix

GOLD = {
    "invoice": "INV-7",
    "date": "2026-03-01",
    "line_items": [
        {"sku": "A", "quantity": 1},
        {"sku": "B", "quantity": 2},
        {"sku": "C", "quantity": 3},
        {"sku": "D", "quantity": 4},
    ],
}


def _extract(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    items = [dict(item) for item in reversed(GOLD["line_items"])]  # type: ignore[call-overload]
    if input.prompt == "wrong":
        items[0]["quantity"] = 5  # D's quantity
    out = state.copy()
    out.set_value("invoice", ValueConfidence("INV-7", 1.0))
    out.set_value("date", ValueConfidence("March 1, 2026", 1.0))
    out.set_value("line_items", ValueConfidence(items, 1.0))
    return out


def _get(url: str, path: str, **params: Any) -> Any:
    response = httpx.get(f"{url}{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


def test_sub_field_and_weighted_evaluations_reach_phoenix(tmp_path: Path, phoenix_url: str) -> None:
    dataset = f"invoices-{uuid.uuid4().hex[:8]}"
    data = {
        "name": "invoices",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {
            "inline": [
                {"id": "ok", "input": {"prompt": "right"}, "expected_post_state": GOLD},
                {"id": "bad", "input": {"prompt": "wrong"}, "expected_post_state": GOLD},
            ]
        },
        "policies": {
            "line_items": {"list_mode": "align", "score": "similarity", "weight": 2},
            "date": {"comparator": "date"},
        },
        "thresholds": {"critical_fields": ["line_items[].quantity"]},
        "phoenix": {"dataset": dataset, "experiment_prefix": "invoices"},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    suite = dataclasses.replace(
        load_suite(path, load_mutator=False), mutator=PythonMutator(_extract)
    )
    journal = start_journal(tmp_path / ".stateval", suite, phoenix_url=phoenix_url)
    outcome = asyncio.run(
        run_suite(suite, journal, concurrency=2, phoenix=PhoenixTarget(phoenix_url))
    )
    assert outcome.upload is not None
    assert outcome.upload.error is None
    assert not outcome.summary.passed  # the critical sub-field is wrong once
    experiment_id = outcome.journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    examples = {
        e["node_id"]: e["metadata"]["case_id"]
        for e in _get(phoenix_url, f"/v1/datasets/{_dataset_id(phoenix_url, dataset)}/examples")[
            "data"
        ]["examples"]
    }
    stored: dict[tuple[str, str], dict[str, Any]] = {}
    for record in _get(phoenix_url, f"/v1/experiments/{experiment_id}/json"):
        for annotation in record["annotations"]:
            stored[examples[record["example_id"]], annotation["name"]] = annotation
    assert stored["ok", "field:line_items[].quantity"]["score"] == 1.0
    assert stored["bad", "field:line_items[].quantity"]["score"] == 0.75
    assert stored["bad", "field:line_items[].quantity"]["label"] == "wrong"
    assert stored["bad", "field:line_items[].sku"]["score"] == 1.0
    assert stored["bad", "field:line_items"]["score"] == pytest.approx(0.875)
    assert "1 partial (line_items[3].quantity)" in stored["bad", "field:line_items"]["explanation"]
    assert stored["ok", "field:date"]["label"] == "matching"
    assert stored["ok", "weighted_state_accuracy"]["score"] == 1.0
    assert stored["ok", "critical_fields"]["label"] == "ok"
    assert stored["bad", "critical_fields"]["label"] == "failed"
    assert "line_items[].quantity wrong" in stored["bad", "critical_fields"]["explanation"]
    assert stored["bad", "weighted_state_accuracy"]["score"] == pytest.approx((2 + 2 * 0.875) / 4)
    experiment = _get(phoenix_url, f"/v1/experiments/{experiment_id}")["data"]
    quantity = experiment["metadata"]["fields"]["line_items[].quantity"]
    assert (quantity["matching"], quantity["mismatched"]) == (7, 1)


def _dataset_id(url: str, name: str) -> str:
    (dataset,) = _get(url, "/v1/datasets", name=name)["data"]
    return str(dataset["id"])
