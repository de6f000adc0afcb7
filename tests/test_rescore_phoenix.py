"""`stateval rescore` logging the rescored run to a real Phoenix as a new experiment.

Needs a Phoenix server: ``STATEVAL_TEST_PHOENIX_URL``, or ``STATEVAL_TEST_PHOENIX_BIN`` to start one
(see tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.mutators import PythonMutator, StructuredInput
from stateval.run import Journal, PhoenixTarget, start_journal
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import Suite, load_suite
from stateval.upload import run_suite

pytestmark = pytest.mark.phoenix

CASES = [
    {"id": "c1", "input": {"prompt": "I am Ada"}, "expected_post_state": {"user.name": "Ada"}},
    {"id": "c2", "input": {"prompt": "I am Cy"}, "expected_post_state": {"user.name": "Cyrus"}},
    {"id": "c3", "input": {"prompt": "I am Bo"}, "expected_post_state": {"user.name": "Bob"}},
]


def _tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    out = state.copy()
    words = input.prompt.split()
    out.set_value("user.name", ValueConfidence(words[words.index("am") + 1], 1.0))
    return out


def _write_suite(path: Path, dataset: str, policies: dict[str, Any]) -> None:
    data = {
        "name": "names",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": CASES},
        "policies": policies,
        "phoenix": {"dataset": dataset, "experiment_prefix": "names"},
    }
    path.write_text(yaml.safe_dump(data))


def _suite(path: Path) -> Suite:
    suite = load_suite(path, load_mutator=False)
    return dataclasses.replace(suite, mutator=PythonMutator(_tracker))


def _get(url: str, path: str) -> Any:
    response = httpx.get(f"{url}{path}", timeout=30)
    response.raise_for_status()
    return response.json()


def _records(url: str, experiment_id: str) -> dict[str, dict[str, Any]]:
    """Case id -> the experiment's JSON record of that case."""
    records = _get(url, f"/v1/experiments/{experiment_id}/json")
    return {r["input"]["case_id"]: r for r in records}


def _labels(record: dict[str, Any]) -> dict[str, tuple[str, float]]:
    return {a["name"]: (a["label"], a["score"]) for a in record["annotations"]}


def test_rescore_logs_a_new_experiment_with_the_new_scores_on_the_same_traces(
    tmp_path: Path, phoenix_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / ".stateval"
    suite_path = tmp_path / "suite.yaml"
    _write_suite(suite_path, f"names-{uuid.uuid4().hex[:8]}", {})
    suite = _suite(suite_path)
    journal = start_journal(home, suite, phoenix_url=phoenix_url)
    outcome = asyncio.run(
        run_suite(suite, journal, concurrency=2, phoenix=PhoenixTarget(phoenix_url))
    )
    assert outcome.upload is not None
    assert outcome.upload.error is None
    original_id = journal.ack("experiment")["experiment_id"]  # type: ignore[index]

    # the policy of user.name changes: "Cy" now counts as "Cyrus"
    _write_suite(suite_path, suite.phoenix.dataset, {"user.name": {"synonyms": {"Cy": "Cyrus"}}})
    monkeypatch.setenv("STATEVAL_HOME", str(home))
    result = CliRunner().invoke(app, ["rescore", "latest"])
    assert result.exit_code in (0, 1), result.output

    journal = Journal.open(home, journal.run_id)
    ack = journal.ack("rescore-1:experiment")
    assert ack is not None
    new_id = ack["experiment_id"]
    assert new_id != original_id
    assert ack["dataset_id"] == journal.ack("dataset")["dataset_id"]  # type: ignore[index]

    experiment = _get(phoenix_url, f"/v1/experiments/{new_id}")["data"]
    assert experiment["metadata"]["rescored"] is True
    assert experiment["metadata"]["stateval_run_id"] == journal.run_id
    assert experiment["metadata"]["original_experiment_id"] == original_id
    assert (
        experiment["metadata"]["suite_hash"]
        == load_suite(suite_path, load_mutator=False).suite_hash
    )
    assert experiment["metadata"]["suite_hash"] != journal.header.suite_hash

    before, after = _records(phoenix_url, original_id), _records(phoenix_url, new_id)
    assert sorted(after) == ["c1", "c2", "c3"]
    for case_id in after:
        assert after[case_id]["trace_id"] == before[case_id]["trace_id"]
        assert after[case_id]["trace_id"]
        assert after[case_id]["output"] == before[case_id]["output"]
    assert _labels(before["c2"])["field:user.name"] == ("mismatched", 0.0)
    assert _labels(after["c2"])["field:user.name"] == ("matching", 1.0)
    assert _labels(after["c3"])["field:user.name"] == ("mismatched", 0.0)
    assert _labels(after["c1"]) == _labels(before["c1"])
    assert set(_labels(after["c2"])) == set(_labels(before["c2"]))

    # a second rescoring is another experiment; --no-phoenix logs nothing
    again = CliRunner().invoke(app, ["rescore", journal.run_id])
    assert again.exit_code in (0, 1), again.output
    second = Journal.open(home, journal.run_id).ack("rescore-2:experiment")
    assert second is not None
    assert second["experiment_id"] not in (original_id, new_id)
    quiet = CliRunner().invoke(app, ["rescore", journal.run_id, "--no-phoenix"])
    assert quiet.exit_code in (0, 1), quiet.output
    assert Journal.open(home, journal.run_id).ack("rescore-3:experiment") is None
    # and prints no Phoenix URL: the run's experiment holds the old scores, not these
    assert "Phoenix experiment" not in quiet.stdout
    assert phoenix_url not in quiet.stdout
    assert "Phoenix experiment: " in again.stdout  # a logged rescoring prints its own


def test_rescore_of_a_local_run_stays_local_unless_asked(
    tmp_path: Path, phoenix_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / ".stateval"
    suite_path = tmp_path / "suite.yaml"
    _write_suite(suite_path, f"names-{uuid.uuid4().hex[:8]}", {})
    suite = _suite(suite_path)
    journal = start_journal(home, suite)
    asyncio.run(run_suite(suite, journal, concurrency=2))
    monkeypatch.setenv("STATEVAL_HOME", str(home))
    local = CliRunner().invoke(app, ["rescore", "latest"])
    assert local.exit_code in (0, 1), local.output
    assert Journal.open(home, journal.run_id).ack("rescore-1:experiment") is None

    logged = CliRunner().invoke(app, ["rescore", "latest", "--phoenix-url", phoenix_url])
    assert logged.exit_code in (0, 1), logged.output
    ack = Journal.open(home, journal.run_id).ack("rescore-1:experiment")
    assert ack is not None
    records = _get(phoenix_url, f"/v1/experiments/{ack['experiment_id']}/json")
    assert len(records) == 3
    assert all(r["trace_id"] is None for r in records)

    clash = CliRunner().invoke(app, ["rescore", "latest", "--phoenix", "--no-phoenix"])
    assert clash.exit_code == 2


def test_rescore_shows_the_summary_then_the_uploads_own_progress(
    tmp_path: Path, phoenix_url: str
) -> None:
    home = tmp_path / ".stateval"
    suite_path = tmp_path / "suite.yaml"
    _write_suite(suite_path, f"names-{uuid.uuid4().hex[:8]}", {})
    suite = _suite(suite_path)
    journal = start_journal(home, suite, phoenix_url=phoenix_url)
    asyncio.run(run_suite(suite, journal, concurrency=2, phoenix=PhoenixTarget(phoenix_url)))

    done = subprocess.run(
        [str(Path(sys.executable).with_name("stateval")), "rescore", "latest"],
        env={**os.environ, "STATEVAL_HOME": str(home)},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream: the order of summary and upload lines shows
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout
    lines = done.stdout.splitlines()
    summary = next(i for i, line in enumerate(lines) if line.startswith("overall match rate"))
    (last,) = [line for line in lines if line.startswith("upload to Phoenix: ")][-1:]
    assert lines.index(last) > summary  # the summary first, then the upload's progress
    match = re.match(r"upload to Phoenix: (\d+)/(\d+) scores stored in \d+ s$", last)
    assert match is not None, last
    sent, total = int(match[1]), int(match[2])
    ack = Journal.open(home, journal.run_id).ack("rescore-1:experiment")
    assert ack is not None
    stored = _get(phoenix_url, f"/v1/experiments/{ack['experiment_id']}/json")
    assert sent == total == sum(len(r["annotations"]) for r in stored)
