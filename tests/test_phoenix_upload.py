from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import httpx
import pytest

from stateval.errors import DatasetError, PhoenixUnavailableError
from stateval.tracing import configure_tracing, mutator_call_span
from stateval.upload import EvaluationRecord, Example, PhoenixUploader, RunRecord

pytestmark = pytest.mark.phoenix


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _examples(n: int = 3) -> list[Example]:
    return [
        Example(
            case_id=f"case-{i}",
            input={"pre_state": {}, "input": f"message {i}"},
            output={"expected_post_state": {"name": f"person {i}"}},
            metadata={"suite": "unit"},
        )
        for i in range(n)
    ]


async def _get(url: str, **params: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.get(url, params=params)


async def _versions(url: str, dataset_id: str) -> int:
    response = await _get(f"{url}/v1/datasets/{dataset_id}/versions")
    response.raise_for_status()
    return len(response.json()["data"])


async def test_dataset_is_created_then_reused_then_versioned(phoenix_url: str) -> None:
    name = _name("ds")
    async with PhoenixUploader(phoenix_url) as phoenix:
        first = await phoenix.ensure_dataset(name, _examples(), description="unit test")
        assert first.uploaded
        assert set(first.example_ids) == {"case-0", "case-1", "case-2"}
        assert await _versions(phoenix_url, first.id) == 1

        same = await phoenix.ensure_dataset(name, list(reversed(_examples())))
        assert not same.uploaded
        assert (same.id, same.version_id) == (first.id, first.version_id)
        assert same.example_ids == first.example_ids
        assert await _versions(phoenix_url, first.id) == 1

        changed = _examples()
        changed[1] = Example("case-1", {"input": "edited"}, changed[1].output)
        changed.append(Example("case-3", {"input": "new"}, {}))
        second = await phoenix.ensure_dataset(name, changed)
        assert second.uploaded
        assert second.id == first.id
        assert second.version_id != first.version_id
        assert await _versions(phoenix_url, first.id) == 2
        # An edited example keeps its Phoenix id; a new one gets its own.
        assert second.example_ids["case-1"] == first.example_ids["case-1"]
        assert set(second.example_ids) == {"case-0", "case-1", "case-2", "case-3"}

    response = await _get(
        f"{phoenix_url}/v1/datasets/{first.id}/examples", version_id=second.version_id
    )
    stored = response.json()["data"]["examples"]
    by_case = {e["metadata"]["case_id"]: e for e in stored}
    assert by_case["case-1"]["input"] == {"input": "edited"}
    assert by_case["case-0"]["metadata"] == {"suite": "unit", "case_id": "case-0"}
    assert by_case["case-0"]["output"] == {"expected_post_state": {"name": "person 0"}}


async def test_empty_or_duplicate_examples_are_rejected_before_upload(phoenix_url: str) -> None:
    async with PhoenixUploader(phoenix_url) as phoenix:
        with pytest.raises(DatasetError, match="duplicate case ids"):
            await phoenix.ensure_dataset(_name("dup"), [Example("a", {}, {}), Example("a", {}, {})])
        with pytest.raises(DatasetError, match="no examples"):
            await phoenix.ensure_dataset(_name("empty"), [])


async def test_experiment_runs_and_evaluations_are_read_back(phoenix_url: str) -> None:
    async with PhoenixUploader(phoenix_url, max_concurrency=4) as phoenix:
        dataset = await phoenix.ensure_dataset(_name("exp"), _examples())
        experiment = await phoenix.create_experiment(
            dataset, name="unit run", description="d", metadata={"suite_hash": "abc"}
        )
        assert experiment.url == (
            f"{phoenix_url}/datasets/{dataset.id}/compare?experimentId={experiment.id}"
        )
        assert experiment.metadata == {"suite_hash": "abc"}
        assert (await phoenix.get_experiment(experiment.id)).name == "unit run"

        now = datetime.now(UTC)
        runs = [
            RunRecord(dataset.example_ids["case-0"], {"name": "person 0"}, now, now),
            RunRecord(dataset.example_ids["case-1"], None, now, now, error="MutatorError: boom"),
        ]
        run_ids = await phoenix.post_runs(experiment.id, runs)
        evaluations = [
            EvaluationRecord(run_ids[0], "field:name", score=1.0, label="matching"),
            EvaluationRecord(run_ids[0], "overall_match", score=1.0, label="pass"),
            EvaluationRecord(
                run_ids[1],
                "field:name",
                annotator_kind="LLM",
                score=0.0,
                label="missing",
                explanation="no value",
                metadata={"expected": "person 1"},
            ),
            EvaluationRecord(run_ids[1], "state_accuracy", error="JudgeError: no verdict"),
        ]
        await phoenix.post_evaluations(evaluations)
        # Re-posting is an upsert: still one evaluation per run and name.
        await phoenix.post_evaluation(
            EvaluationRecord(run_ids[0], "field:name", score=1.0, label="matching")
        )

        stored_runs = {r.id: r for r in await phoenix.list_runs(experiment.id)}
        stored = await phoenix.list_evaluations(experiment.id)

    assert set(stored_runs) == set(run_ids)
    assert stored_runs[run_ids[0]].output == {"name": "person 0"}
    assert stored_runs[run_ids[1]].error == "MutatorError: boom"
    got = {(e.run_id, e.name): e for e in stored}
    assert len(stored) == 4
    assert got[(run_ids[0], "field:name")].score == 1.0
    assert got[(run_ids[0], "field:name")].label == "matching"
    assert got[(run_ids[0], "overall_match")].label == "pass"
    llm = got[(run_ids[1], "field:name")]
    assert (llm.annotator_kind, llm.score, llm.label) == ("LLM", 0.0, "missing")
    assert llm.explanation == "no value"
    assert llm.metadata == {"expected": "person 1"}
    assert got[(run_ids[1], "state_accuracy")].error == "JudgeError: no verdict"


async def test_reposting_a_successful_run_returns_the_same_run(phoenix_url: str) -> None:
    async with PhoenixUploader(phoenix_url) as phoenix:
        dataset = await phoenix.ensure_dataset(_name("resume"), _examples(1))
        experiment = await phoenix.create_experiment(dataset, name="resume")
        now = datetime.now(UTC)
        run = RunRecord(dataset.example_ids["case-0"], {"a": 1}, now, now)
        first = await phoenix.post_run(experiment.id, run)
        again = await phoenix.post_run(experiment.id, run)
        assert again == first
        assert len(await phoenix.list_runs(experiment.id)) == 1


async def test_a_run_links_to_its_trace(phoenix_url: str) -> None:
    async with PhoenixUploader(phoenix_url) as phoenix:
        dataset = await phoenix.ensure_dataset(_name("traced"), _examples(1))
        experiment = await phoenix.create_experiment(dataset, name="traced")
        assert experiment.project_name
        tracing = configure_tracing(experiment.project_name, phoenix_url)
        start = datetime.now(UTC)
        with mutator_call_span(tracing.tracer, case_id="case-0", input="message 0") as span:
            span.set_output({"name": "person 0"})
        assert tracing.force_flush()
        tracing.shutdown()
        run = RunRecord(
            dataset.example_ids["case-0"],
            {"name": "person 0"},
            start,
            datetime.now(UTC),
            trace_id=span.trace_id,
        )
        run_id = await phoenix.post_run(experiment.id, run)
        (stored,) = await phoenix.list_runs(experiment.id)

    assert stored.id == run_id
    assert stored.trace_id == span.trace_id
    # The trace the run points at is on the server, under the experiment's project.
    spans: list[dict[str, object]] = []
    for _ in range(40):
        response = await _get(
            f"{phoenix_url}/v1/projects/{experiment.project_name}/spans",
            trace_id=str(stored.trace_id),
        )
        spans = response.json().get("data", []) if response.status_code == 200 else []
        if spans:
            break
        await asyncio.sleep(0.25)
    assert [s["name"] for s in spans] == ["stateval.mutate"]


async def test_refused_requests_and_unreachable_servers_raise_phoenix_unavailable(
    phoenix_url: str,
) -> None:
    async with PhoenixUploader(phoenix_url, retries=1, backoff=0.01) as phoenix:
        with pytest.raises(PhoenixUnavailableError, match="HTTP 404"):
            await phoenix.get_experiment("RXhwZXJpbWVudDo5OTk5OTk=")
        dataset = await phoenix.ensure_dataset(_name("bad"), _examples(1))
        experiment = await phoenix.create_experiment(dataset, name="bad")
        now = datetime.now(UTC)
        with pytest.raises(PhoenixUnavailableError, match="/runs"):
            await phoenix.post_run(experiment.id, RunRecord("not-an-example-id", {}, now, now))
    async with PhoenixUploader("http://127.0.0.1:9", retries=2, backoff=0.01) as nowhere:
        with pytest.raises(PhoenixUnavailableError, match="failed 3 times"):
            await nowhere.ensure_dataset("x", [Example("a", {}, {})])
