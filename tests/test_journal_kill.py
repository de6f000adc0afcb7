"""A run killed with SIGKILL mid-run resumes by re-running exactly the cases whose records did
not reach the journal: nothing lost, nothing run twice (the journal groups records per fsync)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from stateval.run import Journal

N_CASES = 600

MUTATOR = '''
import os
import time

from stateval.state import InterpretiveState


def slow(state, input):
    """Waits a little so the parent can kill the run midway; logs the call."""
    time.sleep(0.002)
    with open(os.environ["CALL_LOG"], "a") as log:
        log.write(input.message_id + "\\n")
    return InterpretiveState.from_flat({"a": input.prompt})
'''


def _suite(folder: Path) -> Path:
    (folder / "mut.py").write_text(MUTATOR)
    with (folder / "cases.jsonl").open("w") as handle:
        for i in range(N_CASES):
            case = {
                "id": f"c{i}",
                "input": {"prompt": str(i)},
                "expected_post_state": {"a": str(i)},
            }
            handle.write(json.dumps(case) + "\n")
    suite = {
        "mutator": {"type": "python", "callable": "mut:slow", "path": "."},
        "cases": {"file": "cases.jsonl"},
        "concurrency": 4,
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def _stateval(folder: Path, calls: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "STATEVAL_HOME": str(folder / ".stateval"), "CALL_LOG": str(calls)}
    command = [sys.executable, "-c", "from stateval.cli import main; main()", *args]
    return subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _result_lines(journal: Path) -> list[str]:
    if not journal.exists():
        return []
    lines = journal.read_bytes().split(b"\n")
    return [json.loads(line)["case_id"] for line in lines if line.startswith(b'{"kind":"result"')]


def test_a_killed_run_resumes_exactly_the_cases_not_on_disk(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    first_calls = tmp_path / "first.log"
    child = _stateval(tmp_path, first_calls, "run", str(suite), "--no-phoenix")
    runs = tmp_path / ".stateval" / "runs"
    for _ in range(6000):  # until some results are on disk (no wall-clock bound on the run)
        journals = list(runs.glob("*/journal.jsonl")) if runs.exists() else []
        if journals and len(_result_lines(journals[0])) >= 40:
            break
        if child.poll() is not None:
            break
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.communicate()
    assert child.returncode == -signal.SIGKILL, "the run ended before it could be killed"

    killed = Journal.open(tmp_path / ".stateval")
    on_disk = set(killed.results)
    assert 40 <= len(on_disk) < N_CASES
    called_before = set(first_calls.read_text().split())
    assert on_disk <= called_before

    second_calls = tmp_path / "second.log"
    resumed = _stateval(tmp_path, second_calls, "run", str(suite), "--no-phoenix", "--resume")
    _, err = resumed.communicate()
    assert resumed.returncode == 0, err.decode()[-2000:]

    rerun = second_calls.read_text().split()
    assert sorted(rerun) == sorted(set(killed.header.case_ids) - on_disk)
    assert len(rerun) == len(set(rerun))
    recorded = _result_lines(killed.path)
    assert sorted(recorded) == sorted(killed.header.case_ids)  # each case exactly once
    final = Journal.open(tmp_path / ".stateval")
    assert final.complete
    assert final.missing == []
