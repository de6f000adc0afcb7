"""``phoenix.fields_as``: field scores as span annotations in bulk (or both), against a real
Phoenix, read back over REST: the run, resuming it, rescoring it, and the upload's progress."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from rich.console import Console

from stateval.cli._progress import UploadWatch, describe
from stateval.mutators import PythonMutator, StructuredInput
from stateval.run import (
    Journal,
    PhoenixTarget,
    RunOutcome,
    RunSummary,
    UploadProgress,
    start_journal,
)
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import FieldsAs, Suite, load_suite
from stateval.upload import PhoenixUploader, StoredSpanAnnotation, rescore_to_phoenix, run_suite

N, FIELDS = 8, 4


def _track(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    out = state.copy()
    case = int(input.prompt)
    for j in range(FIELDS):
        value = "wrong" if (case + j) % 3 == 0 else f"{case}.{j}"
        out.set_value(f"f{j}", ValueConfidence(value, 1.0))
    return out


def _suite(tmp_path: Path, fields_as: FieldsAs, strict: bool = False) -> Suite:
    cases = [
        {
            "id": f"c{i}",
            "input": {"prompt": str(i)},
            "expected_post_state": {f"f{j}": f"{i}.{j}" for j in range(FIELDS)},
        }
        for i in range(N)
    ]
    data: dict[str, Any] = {
        "name": "fields",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": cases},
        "checks": {"f0": [{"type": "regex", "pattern": "^[0-9]"}]},
        "phoenix": {"dataset": f"fields-{uuid.uuid4().hex[:8]}", "fields_as": fields_as},
    }
    if strict:  # a rescoring under another policy: f1 compared case-insensitively
        data["policies"] = {"f1": {"normalize": ["case"]}}
    path = tmp_path / ("strict.yaml" if strict else "suite.yaml")
    path.write_text(yaml.safe_dump(data))
    suite = load_suite(path, load_mutator=False)
    return dataclasses.replace(suite, mutator=PythonMutator(_track))


def _run(suite: Suite, root: Path, url: str, **kwargs: Any) -> RunOutcome:
    journal = start_journal(root, suite, phoenix_url=url)
    return asyncio.run(
        run_suite(suite, journal, concurrency=4, phoenix=PhoenixTarget(url), **kwargs)
    )


def _get(url: str, path: str, **params: Any) -> Any:
    response = httpx.get(f"{url}{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


def _evaluations(url: str, experiment_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for record in _get(url, f"/v1/experiments/{experiment_id}/json"):
        for annotation in record["annotations"]:
            key = (record["example_id"], annotation["name"])
            assert key not in out, f"evaluation {key} recorded twice"
            out[key] = annotation
    return out


def _span_annotations(url: str, journal: Journal) -> list[StoredSpanAnnotation]:
    project = journal.header.project
    assert project is not None
    span_ids = [r["span_id"] for r in journal.results.values()]
    assert all(span_ids)

    async def read() -> list[StoredSpanAnnotation]:
        async with PhoenixUploader(url) as phoenix:
            return await phoenix.list_span_annotations(project, span_ids)

    return asyncio.run(read())


@pytest.mark.phoenix
def test_annotations_mode_posts_field_scores_on_the_mutator_call_spans(
    tmp_path: Path, phoenix_url: str
) -> None:
    scored: list[tuple[RunSummary, UploadProgress | None]] = []
    outcome = _run(
        _suite(tmp_path, "annotations"),
        tmp_path / ".stateval",
        phoenix_url,
        on_scored=lambda summary, progress: scored.append(
            (summary, None if progress is None else progress())
        ),
    )
    assert outcome.upload is not None
    assert outcome.upload.error is None
    assert outcome.upload.pending == 0
    journal = outcome.journal
    experiment_id = journal.ack("experiment")["experiment_id"]  # type: ignore[index]

    # The summary came as soon as scoring ended, with the upload's size already known.
    ((summary, at_scoring),) = scored
    assert summary == outcome.summary
    assert at_scoring is not None
    case_level = {e.name for s in summary.cases for e in s.evaluations} - {
        f"field:f{j}" for j in range(FIELDS)
    }
    assert at_scoring.total == N * (len(case_level) + FIELDS)

    # Experiment evaluations: the case-level ones and the checks, no field:<path>.
    stored = _evaluations(phoenix_url, experiment_id)
    assert {name for _, name in stored} == case_level
    assert "check:f0" in case_level
    assert len(stored) == N * len(case_level)

    # Span annotations: one per field per case on its stateval.mutate span, as scored locally.
    annotations = _span_annotations(phoenix_url, journal)
    assert len(annotations) == N * FIELDS
    by_span = {(a.span_id, a.name): a for a in annotations}
    for score in outcome.summary.cases:
        span_id = journal.results[score.case_id]["span_id"]
        for e in score.evaluations:
            if e.name.startswith("field:"):
                got = by_span[(span_id, e.name)]
                assert (got.score, got.label, got.explanation) == (
                    e.score,
                    e.label,
                    e.explanation,
                )
                assert got.annotator_kind == "CODE"
                assert got.identifier == experiment_id
    # (case + j) % 3 == 0 is wrong: c0's f0 and f3 are mismatched.
    c0 = journal.results["c0"]["span_id"]
    assert by_span[(c0, "field:f0")].label == "mismatched"
    assert by_span[(c0, "field:f1")].label == "matching"

    # The per-field means are on the experiment, so the experiment list shows them.
    metadata = _get(phoenix_url, f"/v1/experiments/{experiment_id}")["data"]["metadata"]
    means = metadata["field_scores"]
    assert set(means) == {f"field:f{j}" for j in range(FIELDS)}
    for j in range(FIELDS):
        wrong = sum((i + j) % 3 == 0 for i in range(N))
        assert means[f"field:f{j}"] == {"mean": pytest.approx(1 - wrong / N), "count": N}
    acks = [json.loads(line) for line in journal.path.read_text().splitlines()]
    assert sum(1 for a in acks if a.get("what") == "annotations") == N


@pytest.mark.phoenix
def test_both_mode_posts_field_scores_as_evaluations_and_annotations(
    tmp_path: Path, phoenix_url: str
) -> None:
    outcome = _run(_suite(tmp_path, "both"), tmp_path / ".stateval", phoenix_url)
    assert outcome.upload is not None
    assert outcome.upload.error is None
    experiment_id = outcome.journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    stored = _evaluations(phoenix_url, experiment_id)
    names = {e.name for s in outcome.summary.cases for e in s.evaluations}
    assert {name for _, name in stored} == names
    assert len(_span_annotations(phoenix_url, outcome.journal)) == N * FIELDS


@pytest.mark.phoenix
def test_failing_mode_posts_only_the_fields_that_did_not_pass_and_every_mean(
    tmp_path: Path, phoenix_url: str
) -> None:
    outcome = _run(_suite(tmp_path, "failing"), tmp_path / ".stateval", phoenix_url)
    assert outcome.upload is not None
    assert outcome.upload.error is None
    assert outcome.upload.pending == 0
    journal = outcome.journal
    experiment_id = journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    fields = {f"field:f{j}" for j in range(FIELDS)}
    case_level = {e.name for s in outcome.summary.cases for e in s.evaluations} - fields
    stored = _evaluations(phoenix_url, experiment_id)
    assert {name for _, name in stored} == case_level
    assert len(stored) == N * len(case_level)

    # Span annotations: exactly the field scores below 1, as scored locally, read back.
    failing = {
        (journal.results[s.case_id]["span_id"], e.name): e
        for s in outcome.summary.cases
        for e in s.evaluations
        if e.name in fields and e.score is not None and e.score < 1
    }
    wrong = sum((i + j) % 3 == 0 for i in range(N) for j in range(FIELDS))
    assert len(failing) == wrong
    annotations = _span_annotations(phoenix_url, journal)
    assert {(a.span_id, a.name) for a in annotations} == set(failing)
    for a in annotations:
        e = failing[(a.span_id, a.name)]
        assert (a.score, a.label, a.explanation) == (e.score, e.label, e.explanation)
        assert a.identifier == experiment_id

    # Every field's mean (passing fields included) is on the experiment.
    metadata = _get(phoenix_url, f"/v1/experiments/{experiment_id}")["data"]["metadata"]
    for j in range(FIELDS):
        bad = sum((i + j) % 3 == 0 for i in range(N))
        assert metadata["field_scores"][f"field:f{j}"] == {
            "mean": pytest.approx(1 - bad / N),
            "count": N,
        }
    # a case is acknowledged as annotated only when it had annotations to store
    with_failures = {
        s.case_id
        for s in outcome.summary.cases
        for e in s.evaluations
        if (journal.results[s.case_id]["span_id"], e.name) in failing
    }
    assert set(journal.acked("annotations")) == with_failures


@pytest.mark.phoenix
def test_a_resumed_annotations_upload_stores_each_annotation_once(
    tmp_path: Path, phoenix_url: str
) -> None:
    suite = _suite(tmp_path, "annotations")
    root = tmp_path / ".stateval"
    first = _run(suite, root, phoenix_url)
    assert first.upload is not None
    assert first.upload.error is None
    # A crash after the runs and evaluations of three cases but before their annotations were
    # acknowledged: their annotation acknowledgements never reached the journal.
    lost = {"c1", "c4", "c6"}
    path = first.journal.path
    kept = [
        line
        for line in path.read_text().splitlines()
        if not (
            json.loads(line).get("what") == "annotations"
            and json.loads(line).get("case_id") in lost
        )
    ]
    path.write_text("\n".join(kept) + "\n")

    journal = Journal.open(root, first.journal.run_id)
    resumed = asyncio.run(
        run_suite(suite, journal, concurrency=4, phoenix=PhoenixTarget(phoenix_url))
    )
    assert resumed.upload is not None
    assert resumed.upload.error is None
    assert resumed.upload.pending == 0
    assert resumed.upload.runs == 0
    assert resumed.upload.evaluations == 0
    assert resumed.upload.skipped == N - len(lost)
    experiment_id = journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    annotations = _span_annotations(phoenix_url, journal)
    assert len(annotations) == N * FIELDS  # upserted, not doubled
    # 3 case-level + check:f0 + the edit operation op:add (an empty pre-state)
    assert len(_evaluations(phoenix_url, experiment_id)) == N * 5
    final = Journal.open(root, journal.run_id)
    assert set(final.acked("annotations")) == {f"c{i}" for i in range(N)}


@pytest.mark.phoenix
def test_a_rescoring_annotates_the_original_spans_beside_the_original_scores(
    tmp_path: Path, phoenix_url: str
) -> None:
    suite = _suite(tmp_path, "annotations")
    first = _run(suite, tmp_path / ".stateval", phoenix_url)
    original = first.journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    strict = dataclasses.replace(
        _suite(tmp_path, "annotations", strict=True), phoenix=suite.phoenix
    )
    outcome = asyncio.run(rescore_to_phoenix(strict, first.journal, PhoenixTarget(phoenix_url)))
    assert outcome.upload is not None
    assert outcome.upload.error is None
    rescored = first.journal.ack("rescore-1:experiment")["experiment_id"]  # type: ignore[index]
    assert rescored != original

    annotations = _span_annotations(phoenix_url, first.journal)
    assert len(annotations) == 2 * N * FIELDS
    assert {a.identifier for a in annotations} == {original, rescored}
    metadata = _get(phoenix_url, f"/v1/experiments/{rescored}")["data"]["metadata"]
    assert set(metadata["field_scores"]) == {f"field:f{j}" for j in range(FIELDS)}
    stored = _evaluations(phoenix_url, rescored)
    assert not any(name.startswith("field:") for _, name in stored)


def test_an_upload_off_a_terminal_reports_progress_in_lines() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=120)
    state = {"sent": 0}

    def progress() -> UploadProgress:
        return UploadProgress(sent=state["sent"], total=400, started=0.0)

    async def upload() -> None:
        watch = UploadWatch(console, interval=0.01)
        watch.watch(progress)
        for _ in range(4):
            state["sent"] += 100
            await asyncio.sleep(0.02)
        await watch.stop()

    asyncio.run(upload())
    lines = buffer.getvalue().splitlines()
    assert lines[-1].startswith("upload to Phoenix: 400/400 scores stored in ")
    assert len(lines) >= 2


def test_progress_lines_give_the_rate_and_what_is_left() -> None:
    p = UploadProgress(sent=1200, total=4600, started=100.0)
    assert describe(p, now=110.0) == (
        "upload to Phoenix: 1,200/4,600 scores stored (120/s, about 28 s left)"
    )
    # Over the last interval the rate was 300/s: the time left follows it.
    assert describe(p, now=110.0, rate=300.0).endswith("(300/s, about 11 s left)")
    done = UploadProgress(sent=4600, total=4600, started=100.0)
    assert describe(done, now=135.0) == "upload to Phoenix: 4,600/4,600 scores stored in 35 s"


def test_an_unknown_fields_as_on_the_command_line_exits_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from stateval.cli import app

    result = CliRunner().invoke(
        app, ["run", str(tmp_path / "s.yaml"), "--no-phoenix", "--fields-as", "spans"]
    )
    assert result.exit_code == 2
    assert (
        "error: --fields-as 'spans': expected one of evaluations, annotations, both"
        in result.output
    )


@pytest.mark.phoenix
def test_the_shards_of_a_run_merge_their_field_means_on_the_shared_experiment(
    tmp_path: Path, phoenix_url: str
) -> None:
    from stateval.run import Shard

    suite = _suite(tmp_path, "annotations")
    group = f"merge-{uuid.uuid4().hex[:6]}"
    outcomes = []
    for i in (1, 2):
        journal = start_journal(
            tmp_path / f"home-{i}",
            suite,
            phoenix_url=phoenix_url,
            shard=Shard(i, 2),
            shared_run=group,
        )
        outcomes.append(
            asyncio.run(
                run_suite(suite, journal, concurrency=4, phoenix=PhoenixTarget(phoenix_url))
            )
        )
    ids = {o.journal.ack("experiment")["experiment_id"] for o in outcomes}  # type: ignore[index]
    assert len(ids) == 1
    metadata = _get(phoenix_url, f"/v1/experiments/{ids.pop()}")["data"]["metadata"]
    assert set(metadata["field_scores_by_shard"]) == {"1/2", "2/2"}
    for j in range(FIELDS):
        wrong = sum((i + j) % 3 == 0 for i in range(N))
        assert metadata["field_scores"][f"field:f{j}"] == {
            "mean": pytest.approx(1 - wrong / N),
            "count": N,
        }
