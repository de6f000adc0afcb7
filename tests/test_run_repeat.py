"""``stateval run --repeat N``: every case N times, journaled per repetition, per-field means
with intervals and flakiness, diffs over all repetitions, one Phoenix experiment with N
repetitions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.run import Journal

# Cases 0-5 get the city wrong on their second call in a process: flaky under --repeat 3.
MUTATOR = """
from collections import Counter
from stateval.state import ValueConfidence

CALLS = Counter()

def track(state, input):
    name, city, index = input.prompt.split()
    CALLS[index] += 1
    out = state.copy()
    out.set_value("user.name", ValueConfidence(name, 1.0))
    wrong = int(index) < 6 and CALLS[index] == 2
    out.set_value("user.city", ValueConfidence("Nowhere" if wrong else city, 1.0))
    return out
"""

N = 24


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    name = "repeat_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    cases = [
        {
            "id": f"case-{i:02d}",
            "input": {"prompt": f"Ada{i} City{i} {i}"},
            "expected_post_state": {"user.name": f"Ada{i}", "user.city": f"City{i}"},
        }
        for i in range(N)
    ]
    suite = {
        "name": "cities",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
        "phoenix": {"dataset": f"repeat-{uuid.uuid4().hex[:8]}"},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    return tmp_path


def test_repeat_journals_every_repetition_and_reports_flakiness(project: Path) -> None:
    result = CliRunner().invoke(
        app, ["run", "suite.yaml", "--no-phoenix", "--repeat", "3", "--report-json", "r.json"]
    )
    assert result.exit_code == 0, result.output
    assert "fields over 3 repetitions, flakiest first" in result.output
    journal = Journal.open(project / ".stateval", "latest")
    assert journal.header.repetitions == 3
    assert journal.complete
    assert len(journal.results) == N
    assert sorted(journal.repeated) == sorted(
        (f"case-{i:02d}", r) for i in range(N) for r in (2, 3)
    )
    report = json.loads((project / "r.json").read_text())
    schema = json.loads(
        (Path(__file__).resolve().parents[1] / "docs" / "report-schema.json").read_text()
    )
    jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
    fields = {f["path"]: f for f in report["repetitions"]["fields"]}
    city, name = fields["user.city"], fields["user.name"]
    assert city["flaky_cases"] == [f"case-{i:02d}" for i in range(6)]
    assert city["flakiness"] == pytest.approx(6 / N)
    assert city["mean"] == pytest.approx((18 + 6 * 2 / 3) / N)
    assert city["low"] < city["mean"] < city["high"]
    assert (name["flaky"], name["mean"], name["low"], name["high"]) == (0, 1.0, 1.0, 1.0)


def test_diff_uses_every_repetition(project: Path) -> None:
    assert CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix"]).exit_code == 0
    repeated = CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix", "--repeat", "3"])
    assert repeated.exit_code == 0
    result = CliRunner().invoke(app, ["diff", "latest~1", "latest", "--json"])
    data = json.loads(result.output)
    assert (data["base_repetitions"], data["cand_repetitions"]) == (1, 3)
    city = next(f for f in data["fields"] if f["path"] == "user.city")
    # the first run made each case's first call: the repeated run's cases 0-5 are wrong once
    assert city["regressed_cases"] == [f"case-{i:02d}" for i in range(6)]
    assert city["cand_accuracy"] == pytest.approx((18 + 6 * 2 / 3) / N)


def test_the_gate_of_a_repeated_run_reads_its_journaled_scores_as_scoring_it_again_does(
    project: Path,
) -> None:
    assert CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix"]).exit_code == 0
    gated = CliRunner().invoke(
        app,
        ["run", "suite.yaml", "--no-phoenix", "--repeat", "3", "--baseline", "latest"],
        catch_exceptions=False,
    )
    assert "regression gate:" in gated.output, gated.output
    from stateval.regressions import (
        RepetitionsBuilder,
        ScoredRun,
        field_stability,
        local_run,
        reliability,
    )
    from stateval.run import Scoring, journaled_repetitions
    from stateval.suite import load_suite

    suite = load_suite(project / "suite.yaml", load_mutator=False)
    journal = Journal.open(project / ".stateval", "latest")
    seen: list[tuple[str, int]] = []
    counted = RepetitionsBuilder()
    columns = local_run(
        journal, suite, each=lambda c, reps: (seen.append((c, len(reps))), counted.add(c, reps))
    )
    assert seen == [(f"case-{i:02d}", 3) for i in range(N)]
    assert columns.repetitions == 3
    # what the run reports: the same as every case scored again and held in memory
    held = ScoredRun.from_scores(
        "held", journaled_repetitions(suite, journal, Scoring.from_suite(suite))
    )
    assert counted.fields() == field_stability(held)
    assert counted.reliability() == reliability(held)
    city = next(f for f in counted.fields() if f.path == "user.city")
    assert city.flaky_cases == tuple(f"case-{i:02d}" for i in range(6))


def test_a_resumed_repeated_run_runs_exactly_its_missing_repetitions(project: Path) -> None:
    assert (
        CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix", "--repeat", "3"]).exit_code
        == 0
    )
    journal = Journal.open(project / ".stateval", "latest")
    dropped = {(f"case-{i:02d}", 3) for i in range(10)} | {("case-05", 2), ("case-20", 2)}
    kept = []
    for line in journal.path.read_bytes().splitlines(keepends=True):
        record = json.loads(line)
        key = (record.get("case_id"), record.get("repetition") or 1)
        if record["kind"] != "end" and key not in dropped:
            kept.append(line)
    journal.path.write_bytes(b"".join(kept))
    cut = Journal.open(project / ".stateval", "latest")
    assert sorted(cut.missing_repetitions) == sorted(dropped)
    resumed = CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix", "--resume"])
    assert resumed.exit_code == 0, resumed.output
    done = Journal.open(project / ".stateval", "latest")
    assert done.complete
    assert done.missing == []
    assert done.missing_repetitions == []
    written = [json.loads(line) for line in done.path.read_bytes().splitlines()[len(kept) :]]
    again = sorted((r["case_id"], r["repetition"]) for r in written if r["kind"] == "result")
    assert again == sorted(dropped)  # each missing repetition once, nothing else


@pytest.mark.phoenix
def test_repeat_is_one_experiment_with_repetitions_in_phoenix(
    project: Path, phoenix_url: str
) -> None:
    command = [str(Path(sys.executable).with_name("stateval")), "run", "suite.yaml"]
    env = {**os.environ, "STATEVAL_HOME": str(project / ".stateval")}
    done = subprocess.run(
        [*command, "--phoenix-url", phoenix_url, "--repeat", "2"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    journal = Journal.open(project / ".stateval", "latest")
    experiment_id = journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    experiment = httpx.get(f"{phoenix_url}/v1/experiments/{experiment_id}", timeout=60).json()
    assert experiment["data"]["repetitions"] == 2
    runs = httpx.get(f"{phoenix_url}/v1/experiments/{experiment_id}/json", timeout=60).json()
    assert len(runs) == 2 * N
    assert sorted({r["repetition_number"] for r in runs}) == [1, 2]
    wrong = sorted(
        (r["repetition_number"], a["score"])
        for r in runs
        for a in r["annotations"]
        if a["name"] == "field:user.city" and a["score"] < 1
    )
    assert wrong == [(2, 0.0)] * 6  # the second call of cases 0-5
    # and the diff reads the repetitions back from Phoenix
    diff = subprocess.run(
        [
            str(Path(sys.executable).with_name("stateval")),
            "diff",
            "latest",
            experiment_id,
            "--phoenix-url",
            phoenix_url,
            "--json",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert diff.returncode == 0, diff.stderr
    data = json.loads(diff.stdout)
    assert (data["base_repetitions"], data["cand_repetitions"]) == (2, 2)
    assert all(f["regressed"] == f["improved"] == 0 for f in data["fields"])
