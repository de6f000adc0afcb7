"""``stateval run --shard I/N``: which cases a shard runs, and N shards in one experiment."""

from __future__ import annotations

import os
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
from stateval.errors import StatevalError
from stateval.run import Journal, Shard
from stateval.upload import SHARED_KEY


def test_shards_partition_the_cases_by_a_stable_hash_of_their_ids() -> None:
    ids = [f"case-{i}" for i in range(1000)]
    parts = [Shard(i, 3).select(ids) for i in (1, 2, 3)]
    assert sorted(c for part in parts for c in part) == sorted(ids)
    assert all(250 < len(part) < 420 for part in parts)
    # Fixed by the id alone: the same split in every process, release and case order.
    assert parts[0][:8] == [f"case-{i}" for i in (1, 11, 12, 13, 17, 19, 21, 23)]
    assert Shard(1, 3).select(reversed(ids)) == list(reversed(parts[0]))
    assert Shard(1, 1).select(ids) == ids


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_one_clear_error(text: str) -> None:
    with pytest.raises(StatevalError, match="shard"):
        Shard.parse(text)


def test_a_bad_shard_on_the_command_line_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(tmp_path / "none.yaml"), "--shard", "3/2"])
    assert result.exit_code == 2
    assert "error: shard 3/2: the shard number must be between 1 and 2" in result.output


MUTATOR = """
from stateval.state import ValueConfidence


def track(state, input):
    out = state.copy()
    out.set_value("n", ValueConfidence(input.prompt, 1.0))
    out.set_value("odd", ValueConfidence(int(input.prompt) % 2 == 1, 1.0))
    return out
"""


def _project(tmp_path: Path, dataset: str, n: int) -> Path:
    module = f"shard_mut_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(MUTATOR)
    cases = [
        {"id": f"k{i}", "input": {"prompt": str(i)}, "expected_post_state": {"n": str(i)}}
        for i in range(n)
    ]
    suite = {
        "mutator": {"type": "python", "callable": f"{module}:track", "path": "."},
        "cases": {"inline": cases},
        "phoenix": {"dataset": dataset},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    return tmp_path


def _start(project: Path, home: str, *args: str) -> subprocess.Popen[str]:
    command = [str(Path(sys.executable).with_name("stateval")), "run", "suite.yaml", *args]
    env = {**os.environ, "STATEVAL_HOME": str(project / home)}
    return subprocess.Popen(
        command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _get(url: str, path: str, **params: Any) -> Any:
    response = httpx.get(f"{url}{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


@pytest.mark.phoenix
def test_two_shard_processes_fill_one_experiment(tmp_path: Path, phoenix_url: str) -> None:
    n = 14
    dataset = f"shards-{uuid.uuid4().hex[:8]}"
    project = _project(tmp_path, dataset, n)
    # Two processes, as two CI jobs would run them: own homes, started together.
    procs = [
        _start(project, f"home-{i}", "--shard", f"{i}/2", "--phoenix-url", phoenix_url)
        for i in (1, 2)
    ]
    outputs = [proc.communicate() for proc in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode in (0, 1), err
        assert "not uploaded" not in err, err
    journals = [Journal.open(project / f"home-{i}") for i in (1, 2)]
    planned = [set(j.header.case_ids) for j in journals]
    assert planned[0].isdisjoint(planned[1])
    assert planned[0] | planned[1] == {f"k{i}" for i in range(n)}
    assert planned[0] == set(Shard(1, 2).select(f"k{i}" for i in range(n)))
    assert journals[0].header.shared_run == journals[1].header.shared_run
    experiment_ids = {j.ack("experiment")["experiment_id"] for j in journals}  # type: ignore[index]
    assert len(experiment_ids) == 1
    (experiment_id,) = experiment_ids

    (found,) = _get(phoenix_url, "/v1/datasets", name=dataset)["data"]
    experiments = _get(phoenix_url, f"/v1/datasets/{found['id']}/experiments")["data"]
    assert [e["id"] for e in experiments] == [experiment_id]
    assert experiments[0]["metadata"][SHARED_KEY] == journals[0].header.shared_run
    assert experiments[0]["metadata"]["shards"] == 2
    runs = _get(phoenix_url, f"/v1/experiments/{experiment_id}/runs")["data"]
    assert len(runs) == n
    assert len({r["dataset_example_id"] for r in runs}) == n
    exported = _get(phoenix_url, f"/v1/experiments/{experiment_id}/json")
    names = [a["name"] for record in exported for a in record["annotations"]]
    # state_accuracy, overall_match, changed_fields_accuracy, field:n, field:odd and the case's
    # edit operation (op:add: its pre-state is empty) per case
    assert len(names) == 6 * n
    assert names.count("op:add") == n

    # Each shard's figures are kept apart (both survive their concurrent writes); the shared
    # experiment's top level holds no shard's partial figures.
    meta = _get(phoenix_url, f"/v1/experiments/{experiment_id}")["data"]["metadata"]
    figures = meta["shard_figures"]
    assert sorted(figures) == ["1/2", "2/2"]
    assert figures["1/2"]["n_cases"] + figures["2/2"]["n_cases"] == n
    # "n" always right, "odd" never expected: every other predicted value is extra
    assert (figures["1/2"]["value_precision"], figures["1/2"]["value_recall"]) == (0.5, 1.0)
    assert figures["1/2"]["fields"]["odd"]["extra"] == len(planned[0])
    assert "value_f1" not in meta

    # A shard run again later (a retried CI job) joins the same experiment; nothing doubles.
    again = _start(project, "home-3", "--shard", "2/2", "--phoenix-url", phoenix_url)
    _, err = again.communicate()
    assert again.returncode in (0, 1), err
    assert Journal.open(project / "home-3").ack("experiment")["experiment_id"] == experiment_id  # type: ignore[index]
    assert len(_get(phoenix_url, f"/v1/experiments/{experiment_id}/runs")["data"]) == n
