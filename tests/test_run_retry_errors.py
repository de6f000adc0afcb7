"""``stateval run --resume --retry-errors``: a resumed run leaves a journaled failure alone
unless asked; asked, the failed cases run again, their new results supersede the old records,
and Phoenix holds each case once, with the new result (issue 11)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from stateval.cli._common import EXIT_BELOW_THRESHOLD, EXIT_PASS, EXIT_USAGE
from stateval.run import Journal

_STATEVAL = str(Path(sys.executable).with_name("stateval"))

# Fails case c1 while the file "broken" exists; logs every call to "calls.log".
_MUTATOR = """
from pathlib import Path
from stateval import InterpretiveState, ValueConfidence

HERE = Path(__file__).parent

async def echo(state, input):
    with (HERE / "calls.log").open("a") as log:
        log.write(input.message_id + "\\n")
    if input.message_id == "m1" and (HERE / "broken").exists():
        raise ValueError("the tracker cannot read this turn")
    out = state.copy()
    out.set_value("said", ValueConfidence(input.prompt, 1.0))
    return out
"""


def _project(tmp_path: Path, cases: int = 3) -> Path:
    (tmp_path / "echo_mutator.py").write_text(_MUTATOR)
    lines = [
        f"    - {{id: c{i}, input: {{prompt: p{i}, message_id: m{i}}}, "
        f"expected_post_state: {{said: p{i}}}}}"
        for i in range(cases)
    ]
    (tmp_path / "suite.yaml").write_text(
        f'name: retry\nmutator: {{type: python, callable: "echo_mutator:echo"}}\n'
        f"phoenix: {{dataset: retry-{uuid.uuid4().hex[:8]}}}\n"
        "cases:\n  inline:\n" + "\n".join(lines) + "\n"
    )
    (tmp_path / "broken").touch()
    return tmp_path


def _stateval(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "STATEVAL_HOME": str(project / "home"), "PYTHONPATH": str(project)}
    return subprocess.run(
        [_STATEVAL, "run", "suite.yaml", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _calls(project: Path) -> list[str]:
    log = project / "calls.log"
    return log.read_text().split() if log.exists() else []


def _result_records(journal: Journal) -> list[dict[str, Any]]:
    lines = journal.path.read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] == "result"]


def test_resume_keeps_a_failure_and_retry_errors_runs_it_again(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first = _stateval(project, "--no-phoenix", "--report-json", "first.json")
    assert first.returncode == EXIT_BELOW_THRESHOLD, first.stderr  # error_rate <= 0 by default
    assert json.loads((project / "first.json").read_text())["n_errors"] == 1

    # The failure is deterministic as far as stateval knows: --resume does not run it again.
    (project / "broken").unlink()
    resumed = _stateval(project, "--no-phoenix", "--resume", "--report-json", "again.json")
    assert resumed.returncode == EXIT_BELOW_THRESHOLD, resumed.stderr
    assert "0 of 3 cases left to run" in resumed.stderr
    assert sorted(_calls(project)) == ["m0", "m1", "m2"]
    assert json.loads((project / "again.json").read_text())["n_errors"] == 1

    retried = _stateval(
        project, "--no-phoenix", "--resume", "--retry-errors", "--report-json", "retried.json"
    )
    assert retried.returncode == EXIT_PASS, retried.stderr
    assert "1 of 3 cases left to run (1 failed, run again)" in retried.stderr
    assert sorted(_calls(project)) == ["m0", "m1", "m1", "m2"]  # only the failed case again
    report = json.loads((project / "retried.json").read_text())
    assert report["n_errors"] == 0
    assert report["n_cases"] == 3
    assert report["passed"] is True

    journal = Journal.open(project / "home")
    assert journal.results["c1"]["error"] is None  # the new record supersedes the old one
    assert [r["case_id"] for r in _result_records(journal)].count("c1") == 2
    assert not journal.missing

    # Nothing failed any more: a second retry runs nothing.
    again = _stateval(project, "--no-phoenix", "--resume", "--retry-errors")
    assert again.returncode == EXIT_PASS, again.stderr
    assert "0 of 3 cases left to run (0 failed, run again)" in again.stderr
    assert len(_calls(project)) == 4


def test_retry_errors_without_resume_is_a_usage_error(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = _stateval(project, "--no-phoenix", "--retry-errors")
    assert done.returncode == EXIT_USAGE
    assert "--retry-errors needs --resume" in done.stderr
    assert "Traceback" not in done.stderr
    assert _calls(project) == []


def _get(url: str, path: str) -> Any:
    response = httpx.get(f"{url}{path}", timeout=30)
    response.raise_for_status()
    return response.json()


@pytest.mark.phoenix
def test_a_retried_case_replaces_its_failed_run_in_phoenix(
    tmp_path: Path, phoenix_url: str
) -> None:
    project = _project(tmp_path)
    first = _stateval(project, "--phoenix-url", phoenix_url)
    assert first.returncode == EXIT_BELOW_THRESHOLD, first.stderr
    (project / "broken").unlink()
    retried = _stateval(project, "--resume", "--retry-errors")
    assert retried.returncode == EXIT_PASS, retried.stderr
    assert "Phoenix: 3 of 3 cases delivered (1 run(s)" in retried.stdout

    journal = Journal.open(project / "home")
    experiment = journal.ack("experiment")
    assert experiment is not None
    records = _get(phoenix_url, f"/v1/experiments/{experiment['experiment_id']}/json")
    assert len(records) == 3  # one run per case: the retried one replaced, not added
    by_case = {r["input"]["case_id"]: r for r in records}
    retried_run = by_case["c1"]
    assert retried_run["error"] is None
    assert retried_run["output"]["post_state"] is not None
    names = [a["name"] for a in retried_run["annotations"]]
    assert len(names) == len(set(names))  # each evaluation once: the failure's were replaced
    accuracy = next(a for a in retried_run["annotations"] if a["name"] == "state_accuracy")
    assert accuracy["score"] == 1.0
