"""Every per-field score lands in Phoenix as its own named evaluation (real Phoenix server)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from phoenix.client import Client

from stateval.phoenix import evaluator_set, field_scores, task_output
from stateval.state import InterpretiveState

pytestmark = pytest.mark.phoenix

PRE = {"hotel.area": "north"}
EXPECTED = {"hotel.area": "centre", "hotel.stars": 4}
OUTPUTS: dict[str, dict[str, Any]] = {
    "perfect": task_output(InterpretiveState.from_flat(EXPECTED)),
    "wrong": task_output(
        InterpretiveState.from_flat({"hotel.area": "north", "hotel.parking": "yes"})
    ),
    "failed": task_output(None, "MutatorOutputError: reply is not JSON"),
}


def _dataset(client: Client) -> Any:
    cases = list(OUTPUTS)
    return client.datasets.create_dataset(
        name=f"stateval-fields-{uuid.uuid4().hex[:8]}",
        inputs=[
            {
                "case_id": case_id,
                "pre_state": InterpretiveState.from_flat(PRE).to_dict(),
                "input": {
                    "prompt": "a 4-star hotel in the centre",
                    "message_id": "m1",
                    "metadata": {},
                },
            }
            for case_id in cases
        ],
        outputs=[{"post_state": InterpretiveState.from_flat(EXPECTED).to_dict()} for _ in cases],
        metadata=[{"suite": "hotels"} for _ in cases],
    )


def _task(input: dict[str, Any]) -> dict[str, Any]:
    return OUTPUTS[input["case_id"]]


def _evaluations(url: str, experiment_id: str) -> dict[str, dict[str, tuple[Any, Any]]]:
    """``{case_id: {evaluation name: (score, label)}}`` read back over Phoenix's REST API."""
    response = httpx.get(f"{url}/v1/experiments/{experiment_id}/json", timeout=30)
    response.raise_for_status()
    out: dict[str, dict[str, tuple[Any, Any]]] = {}
    for run in response.json():
        names = [a["name"] for a in run["annotations"]]
        assert len(names) == len(set(names)), names
        out[run["input"]["case_id"]] = {
            a["name"]: (a["score"], a["label"]) for a in run["annotations"] if a["error"] is None
        }
    return out


FIELDS_PER_CASE = {
    "perfect": {
        "field:hotel.area": (1.0, "matching"),
        "field:hotel.stars": (1.0, "matching"),
    },
    "wrong": {
        "field:hotel.area": (0.0, "mismatched"),
        "field:hotel.stars": (0.0, "missing"),
        "field:hotel.parking": (0.0, "extra"),
    },
    "failed": {
        "field:hotel.area": (0.0, "error"),
        "field:hotel.stars": (0.0, "error"),
    },
}


@pytest.mark.parametrize("every_field", [False, True])
def test_evaluator_set_lands_every_field_score_in_an_experiment(
    phoenix_url: str, every_field: bool
) -> None:
    client = Client(base_url=phoenix_url)
    dataset = _dataset(client)
    evaluators = evaluator_set(
        fields=["hotel.area", "hotel.stars", "hotel.parking"],
        checks={"hotel.area": [{"type": "regex", "pattern": "^(centre|north|south)$"}]},
        every_field=every_field,
    )
    ran = client.experiments.run_experiment(
        dataset=dataset,
        task=_task,
        # phoenix.evals evaluators are accepted at run time; phoenix-client's EvalsEvaluator
        # protocol names the evaluate() parameter differently, so mypy disagrees.
        evaluators=evaluators,  # type: ignore[arg-type]
        print_summary=False,
    )
    got = _evaluations(phoenix_url, ran["experiment_id"])
    # by default a listed field neither state holds gets no evaluation; the strict form posts
    # an "absent" one (and an error one for each listed field when the task failed)
    parking_absent = {"field:hotel.parking": (None, "absent")} if every_field else {}
    parking_error = {"field:hotel.parking": (0.0, "error")} if every_field else {}
    assert got["perfect"] == {
        **FIELDS_PER_CASE["perfect"],
        **parking_absent,
        "state_accuracy": (1.0, None),
        "overall_match": (1.0, "match"),
        "changed_fields_accuracy": (1.0, None),
        "preserved_fields_accuracy": (None, "empty"),
        "check:hotel.area:regex": (1.0, "pass"),
    }
    assert got["wrong"] == {
        **FIELDS_PER_CASE["wrong"],
        "state_accuracy": (0.0, None),
        "overall_match": (0.0, "mismatch"),
        "changed_fields_accuracy": (0.0, None),
        "preserved_fields_accuracy": (None, "empty"),
        "check:hotel.area:regex": (1.0, "pass"),
    }
    case_level = (
        "state_accuracy",
        "overall_match",
        "changed_fields_accuracy",
        "preserved_fields_accuracy",
        "check:hotel.area:regex",
    )
    error = (0.0, "error")
    assert got["failed"] == {
        **FIELDS_PER_CASE["failed"],
        **parking_error,
        **dict.fromkeys(case_level, error),
    }


def test_field_scores_lands_one_evaluation_per_field_without_paths_up_front(
    phoenix_url: str,
) -> None:
    client = Client(base_url=phoenix_url)
    dataset = _dataset(client)
    ran = client.experiments.run_experiment(
        dataset=dataset, task=_task, evaluators=[field_scores()], print_summary=False
    )
    assert _evaluations(phoenix_url, ran["experiment_id"]) == FIELDS_PER_CASE
