"""A mutation test logged to a real Phoenix server, read back through its REST API.

Needs a Phoenix server: ``STATEVAL_TEST_PHOENIX_URL``, or ``STATEVAL_TEST_PHOENIX_BIN`` to start one
(see tests/conftest.py).
"""

from __future__ import annotations

import json
import socket
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
from typer.testing import CliRunner

from stateval.cli import mutate
from stateval.mutation import MutationConfig, log_mutation, run_mutation
from stateval.run import PhoenixTarget
from stateval.suite import load_suite

MODULE = """
from stateval import ValueConfidence


def fill(state, input):
    for part in input.prompt.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            vc = ValueConfidence(value.strip(), 1.0, "stated", input.message_id)
            state.set_value(key.strip(), vc)
    return state
"""

SUITE = """
name: tiny
mutator: {type: python, callable: "phxfill_mod:fill", path: .}
cases:
  inline:
    - id: one
      input: {prompt: "a.x=1; a.y=2"}
      expected_post_state: {a.x: "1", a.y: "2"}
    - id: two
      pre_state: {a.x: "1"}
      input: {prompt: "a.y=5"}
      expected_post_state: {a.x: "1", a.y: "5"}
    - id: three
      input: {prompt: "a.x=1"}
      expected_post_state: {a.x: "1"}
thresholds:
  fields: {a.x: 1.0}
phoenix: {dataset: "%s", experiment_prefix: tiny}
mutation: {operators: [drop_field, strip_provenance]}
"""


def _write(folder: Path) -> tuple[Path, str]:
    dataset = f"tiny-{uuid.uuid4().hex[:8]}"
    (folder / "phxfill_mod.py").write_text(MODULE, encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(SUITE % dataset, encoding="utf-8")
    return path, dataset


def _get(url: str, path: str, **params: Any) -> Any:
    response = httpx.get(f"{url}{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


def _experiments(url: str, dataset: str) -> dict[str, dict[str, Any]]:
    (found,) = _get(url, "/v1/datasets", name=dataset)["data"]
    listed = _get(url, f"/v1/datasets/{found['id']}/experiments")["data"]
    return {e["name"]: e for e in listed}


def _annotations(url: str, experiment_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(case id, evaluation name) -> annotation, from ``GET /v1/experiments/{id}/json``."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for record in _get(url, f"/v1/experiments/{experiment_id}/json"):
        case_id = record["input"]["case_id"]
        for annotation in record["annotations"]:
            key = (case_id, annotation["name"])
            assert key not in out, f"evaluation {key} recorded twice"
            out[key] = annotation
    return out


@pytest.mark.phoenix
async def test_baseline_and_survivors_become_experiments_with_every_evaluation(
    tmp_path: Path, phoenix_url: str
) -> None:
    path, dataset = _write(tmp_path)
    suite = load_suite(path)
    config = MutationConfig(operators="drop_field,strip_provenance", keep_cases=True)
    report = await run_mutation(suite, config)
    by_status = {r.id: r.status for r in report.results}
    # no comparison reads provenance, so stripping it is equivalent, not a survivor
    assert by_status == {"M001": "killed", "M002": "survived", "M003": "equivalent"}

    logged = await log_mutation(suite, report, PhoenixTarget(phoenix_url))
    assert logged.error is None
    assert list(logged.mutants) == ["M002"]  # survivors only, by default

    # mutation experiments have a dataset of their own; the team's dataset stays clean
    assert _get(phoenix_url, "/v1/datasets", name=dataset)["data"] == []
    experiments = _experiments(phoenix_url, dataset + "-mutation")
    assert set(experiments) == {"tiny-mutation-baseline", "tiny-mutant-drop_field-2"}
    base = experiments["tiny-mutation-baseline"]
    assert base["metadata"]["role"] == "baseline"
    assert base["metadata"]["survivors"] == ["M002"]
    assert base["metadata"]["counts"]["equivalent"] == 1
    assert base["metadata"]["mutation_score"] == pytest.approx(1 / 3)

    survivor = next(r for r in report.results if r.id == "M002")
    drop = experiments["tiny-mutant-drop_field-2"]
    meta = drop["metadata"]
    assert meta["operator"] == "drop_field"
    assert meta["description"] == survivor.mutant.description
    assert meta["description"].startswith("drops the update to a.y")
    assert meta["status"] == "survived"
    assert meta["killed"] is False
    assert meta["severity"] == survivor.severity == "high"
    assert meta["suggestion"] == survivor.suggestion
    assert meta["baseline_experiment_id"] == base["id"]
    assert meta["stateval_mutation_id"] == base["metadata"]["stateval_mutation_id"]
    assert drop["description"].startswith("M002 (survived): drops the update to a.y")
    assert meta["wrote"] == survivor.wrote == "case one: a.y nothing (baseline '2')"
    assert drop["description"].endswith("; e.g. case one: a.y nothing (baseline '2')")

    # the mutant's runs are the cases it changed, each with the runner's evaluations of it
    assert sorted(survivor.changed_cases) == ["one", "two"]
    stored = _annotations(phoenix_url, drop["id"])
    assert survivor.summary is not None
    expected = {
        (score.case_id, e.name): e
        for score in survivor.summary.cases
        if score.case_id in survivor.changed_cases
        for e in score.evaluations
    }
    assert set(stored) == set(expected)
    for key, evaluation in expected.items():
        assert stored[key]["score"] == pytest.approx(evaluation.score), key
        assert stored[key]["label"] == evaluation.label, key
        assert stored[key]["explanation"] == evaluation.explanation, key
    assert stored[("one", "field:a.y")]["label"] == "missing"
    assert stored[("one", "field:a.x")]["label"] == "matching"

    # the baseline has every case, every evaluation
    base_stored = _annotations(phoenix_url, base["id"])
    assert {case for case, _ in base_stored} == {"one", "two", "three"}
    assert base_stored[("two", "field:a.y")]["label"] == "matching"
    assert len(base_stored) == sum(len(s.evaluations) for s in report.baseline.cases)

    # a survivor's link opens Phoenix's compare view on the mutant, beside the baseline; the
    # mutant's experiment covers only the cases it changed (its split), so the view lists those
    url = logged.url_of("M002")
    assert url == (
        f"{phoenix_url}/datasets/{base['dataset_id']}/compare"
        f"?experimentId={drop['id']}&experimentId={base['id']}"
    )
    assert logged.url_of("M001") is None
    assert _get(phoenix_url, f"/v1/experiments/{drop['id']}")["data"]["example_count"] == 2
    assert _get(phoenix_url, f"/v1/experiments/{base['id']}")["data"]["example_count"] == 3


def _app() -> typer.Typer:
    cli = typer.Typer()
    cli.command()(mutate)

    @cli.command()
    def version() -> None:  # a second command, so "mutate" is a sub-command as in stateval
        """Print nothing."""

    return cli


@pytest.mark.phoenix
def test_the_command_logs_to_phoenix_and_prints_survivor_links(
    tmp_path: Path, phoenix_url: str
) -> None:
    path, dataset = _write(tmp_path)
    report = tmp_path / "r.json"
    args = ["mutate", str(path), "--phoenix-url", phoenix_url, "--report-json", str(report)]
    result = CliRunner().invoke(_app(), [*args, "--phoenix-all"])
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    urls = {m["id"]: m["experiment_url"] for m in data["mutants"]}
    assert all(urls.values())  # --phoenix-all: the killed and equivalent mutants too
    out = " ".join(result.stdout.split())
    assert f"in Phoenix: {urls['M002']}" in out
    assert f"in Phoenix: {urls['M001']}" not in out  # links are printed for survivors
    baseline_url = data["phoenix"]["baseline_experiment_url"]
    assert f"Phoenix baseline experiment: {baseline_url}" in out
    experiments = _experiments(phoenix_url, dataset + "-mutation")
    assert set(experiments) == {
        "tiny-mutation-baseline",
        "tiny-mutant-drop_field-1",
        "tiny-mutant-drop_field-2",
        "tiny-mutant-strip_provenance-3",
    }
    equivalent = experiments["tiny-mutant-strip_provenance-3"]["metadata"]
    assert (equivalent["status"], equivalent["killed"]) == ("equivalent", False)
    killed = experiments["tiny-mutant-drop_field-1"]["metadata"]
    assert (killed["status"], killed["killed"]) == ("killed", True)
    assert killed["killed_by"] == ["threshold:fields[a.x]"]
    assert experiments["tiny-mutant-drop_field-2"]["id"] in urls["M002"]


def test_an_unreachable_phoenix_leaves_the_mutation_report_intact(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    path, _ = _write(tmp_path)
    report = tmp_path / "r.json"
    args = ["mutate", str(path), "--phoenix-url", f"http://127.0.0.1:{port}"]
    result = CliRunner().invoke(_app(), [*args, "--report-json", str(report)])
    assert result.exit_code == 0, result.output
    assert "warning: Phoenix logging stopped: Phoenix at http://127.0.0.1:" in result.stdout
    data = json.loads(report.read_text())
    assert (data["counts"]["survived"], data["counts"]["equivalent"]) == (1, 1)
    assert data["phoenix"]["error"].startswith("Phoenix at ")
    assert all(m["experiment_url"] is None for m in data["mutants"])


@pytest.mark.phoenix
def test_phoenix_flag_uses_the_server_stateval_run_would(
    tmp_path: Path, phoenix_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PHOENIX_COLLECTOR_ENDPOINT", f"{phoenix_url}/v1/traces")
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / ".stateval"))
    path, dataset = _write(tmp_path)
    result = CliRunner().invoke(_app(), ["mutate", str(path), "--phoenix"])
    assert result.exit_code == 0, result.output
    assert set(_experiments(phoenix_url, dataset + "-mutation")) == {
        "tiny-mutation-baseline",
        "tiny-mutant-drop_field-2",
    }
    assert not (tmp_path / ".stateval").exists()  # no embedded server was started
