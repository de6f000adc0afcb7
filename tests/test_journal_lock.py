"""One writer per run: a run being written refuses a second writer in one clear line, and
reading a journal never changes it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stateval.errors import JournalBusyError
from stateval.run import Journal, RunHeader

_STATEVAL = str(Path(sys.executable).with_name("stateval"))


def _header() -> RunHeader:
    return RunHeader.model_validate(
        {
            "suite_path": "/s.yaml",
            "suite_name": "s",
            "suite_hash": "h",
            "cases_hash": "c",
            "case_ids": ["a", "b", "c"],
        }
    )


def test_a_second_writer_of_a_locked_run_is_refused_naming_the_holder(tmp_path: Path) -> None:
    first = Journal.create(tmp_path, _header())
    first.lock()
    second = Journal.open(tmp_path, first.run_id)
    with pytest.raises(JournalBusyError) as info:
        second.lock()
    message = str(info.value)
    assert "\n" not in message
    assert f"run {first.run_id} is being written by another stateval process" in message
    assert f"(pid {os.getpid()})" in message
    first.unlock()
    second.lock()  # free again
    second.unlock()


def test_a_journal_written_since_it_was_read_is_not_taken(tmp_path: Path) -> None:
    first = Journal.create(tmp_path, _header())
    stale = Journal.open(tmp_path, first.run_id)
    first.append_result("a", {"post_state": None, "time_used": 0})
    with pytest.raises(JournalBusyError, match="was written by another process since"):
        stale.lock()


def test_reading_a_torn_journal_leaves_it_as_it_is_and_a_writer_repairs_it(
    tmp_path: Path,
) -> None:
    journal = Journal.create(tmp_path, _header())
    journal.append_result("a", {"post_state": None, "time_used": 0})
    with journal.path.open("a") as handle:
        handle.write('{"kind": "result", "case_id": "b", "post_st')  # a crash mid-write
    before = journal.path.read_bytes()
    reader = Journal.open(tmp_path)
    assert list(reader.results) == ["a"]
    assert journal.path.read_bytes() == before  # diff and rescore only read
    writer = Journal.open(tmp_path)
    writer.lock()
    writer.append_result("c", {"post_state": None, "time_used": 0})
    writer.unlock()
    assert sorted(Journal.open(tmp_path).results) == ["a", "c"]


_MUTATOR = """
import asyncio
from pathlib import Path
from stateval import InterpretiveState, ValueConfidence

async def gated(state, input):
    here = Path(__file__).parent
    if input.prompt == "wait":
        (here / "waiting").touch()
        while not (here / "go").exists():
            await asyncio.sleep(0.05)
    out = state.copy()
    out.set_value("said", ValueConfidence(input.prompt.upper(), 1.0))
    return out
"""

_SUITE = """
name: locked
mutator: {type: python, callable: "lock_mutator:gated"}
concurrency: 1
cases:
  inline:
    - {id: a, input: {prompt: one}, expected_post_state: {said: ONE}}
    - {id: b, input: {prompt: wait}, expected_post_state: {said: WAIT}}
    - {id: c, input: {prompt: three}, expected_post_state: {said: THREE}}
"""


def test_a_second_resume_of_a_running_run_is_refused_and_nothing_runs_twice(
    tmp_path: Path,
) -> None:
    (tmp_path / "lock_mutator.py").write_text(_MUTATOR)
    (tmp_path / "suite.yaml").write_text(_SUITE)
    env = {**os.environ, "STATEVAL_HOME": str(tmp_path / "home"), "PYTHONPATH": str(tmp_path)}
    # an interrupted run to resume: case a journaled, then stopped while b waits
    first = subprocess.Popen(
        [_STATEVAL, "run", "suite.yaml", "--no-phoenix"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while not (tmp_path / "waiting").exists():  # the condition, not a clock
        assert first.poll() is None, first.communicate()
        time.sleep(0.05)
    first.terminate()
    first.communicate()
    (tmp_path / "waiting").unlink()
    resume = [_STATEVAL, "run", "suite.yaml", "--no-phoenix", "--resume"]
    running = subprocess.Popen(
        resume, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    while not (tmp_path / "waiting").exists():
        assert running.poll() is None, running.communicate()
        time.sleep(0.05)
    second = subprocess.run(resume, cwd=tmp_path, env=env, capture_output=True, text=True)
    (tmp_path / "go").touch()
    _, err = running.communicate()
    assert running.returncode == 0, err
    assert second.returncode == 2, second.stderr
    errors = [line for line in second.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, second.stderr
    assert "is being written by another stateval process" in errors[0]
    assert "Traceback" not in second.stderr
    records = (tmp_path / "home").rglob("journal.jsonl")
    (path,) = list(records)
    lines = path.read_text().splitlines()
    results = [line for line in lines if '"kind":"result"' in line.replace(" ", "")]
    ends = [line for line in lines if '"kind":"end"' in line.replace(" ", "")]
    assert len(results) == 3  # a, b, c once each
    assert len(ends) == 1
