"""`stateval run` under signals and a full disk (issue 11): distinct exit codes, one line on
stderr, no traceback, a journal that resumes."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from child_signals import sigint_as_at_a_terminal
from stateval.cli._common import EXIT_INFRASTRUCTURE, EXIT_USAGE
from stateval.run import Journal

_STATEVAL = str(Path(sys.executable).with_name("stateval"))

_MUTATOR = """
import asyncio
from pathlib import Path
from stateval import InterpretiveState, ValueConfidence

async def slow(state, input):
    if input.prompt == "wait":
        Path(__file__).with_name("waiting").touch()
        await asyncio.sleep(120)
    out = state.copy()
    out.set_value("said", ValueConfidence(input.prompt.upper() + "!" * 3000, 1.0))
    return out
"""

_SUITE = """
name: faults
mutator: {type: python, callable: "fault_mutator:slow"}
concurrency: 1
cases:
  inline:
    - {id: a, input: {prompt: one}, expected_post_state: {said: ONE}}
    - {id: b, input: {prompt: wait}, expected_post_state: {said: WAIT}}
    - {id: c, input: {prompt: three}, expected_post_state: {said: THREE}}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "fault_mutator.py").write_text(_MUTATOR)
    (tmp_path / "suite.yaml").write_text(_SUITE)
    return tmp_path


def _env(project: Path) -> dict[str, str]:
    return {
        **os.environ,
        "STATEVAL_HOME": str(project / "home"),
        "PYTHONPATH": str(project),
        "PYTHONFAULTHANDLER": "1",  # SIGABRT prints every thread's stack (see _stderr_or_stacks)
    }


def _stderr_or_stacks(proc: subprocess.Popen[str]) -> str:
    """The stopped child's stderr; if it has not exited long after its signal, its threads'
    stacks (faulthandler on SIGABRT) in the failure, so a hang says where it hangs."""
    try:
        return proc.communicate(timeout=300)[1]
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        stacks = proc.communicate()[1]
        message = f"the run did not stop after its signal; its threads:\n{stacks}"
        raise AssertionError(message) from None


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_stops_the_run_like_ctrl_c(project: Path, signum: signal.Signals) -> None:
    proc = subprocess.Popen(
        [_STATEVAL, "run", "suite.yaml", "--no-phoenix"],
        cwd=project,
        env=_env(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_at_a_terminal,  # tests run in the background inherit it ignored
    )
    while not (project / "waiting").exists() and proc.poll() is None:
        time.sleep(0.05)  # until the mutator waits, however long start-up takes under load
    assert (project / "waiting").exists(), proc.communicate()[1]
    proc.send_signal(signum)
    stderr = _stderr_or_stacks(proc)
    assert proc.returncode == 128 + signum, stderr
    assert "interrupted: 1 of 3 cases are journaled" in stderr
    assert signum.name in stderr
    assert "--resume" in stderr
    assert "Traceback" not in stderr
    journal = Journal.open(project / "home")
    assert sorted(journal.results) == ["a"]
    (project / "fault_mutator.py").write_text(_MUTATOR.replace('"wait"', '"never"'))
    resumed = subprocess.run(
        [_STATEVAL, "run", "suite.yaml", "--no-phoenix", "--resume"],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr  # no thresholds: a finished run passes
    assert sorted(Journal.open(project / "home").results) == ["a", "b", "c"]


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (6_000, 6_000))


def test_a_full_disk_while_journaling_is_an_infrastructure_failure_in_one_line(
    project: Path,
) -> None:
    (project / "fault_mutator.py").write_text(_MUTATOR.replace('"wait"', '"never"'))
    done = subprocess.run(
        [_STATEVAL, "run", "suite.yaml", "--no-phoenix"],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=_limit_file_size,
    )
    assert done.returncode == EXIT_INFRASTRUCTURE, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "cannot write" in errors[0]
    assert "journal.jsonl" in errors[0]
    # What was journaled is whole: it opens, and a resume (with room again) finishes the run.
    journal = Journal.open(project / "home")
    assert len(journal.results) < 3
    resumed = subprocess.run(
        [_STATEVAL, "run", "suite.yaml", "--no-phoenix", "--resume"],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(Journal.open(project / "home").results) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://admin:hunter2@127.0.0.1:9/", "carries credentials"),
        ("localhost:6006", "must be an http:// or https:// URL"),
        ("http://127.0.0.1:99999", "outside 1-65535"),
        ("ftp://127.0.0.1:6006/?token=hunter2", "must be an http:// or https:// URL"),
        ("ws://127.0.0.1:6006/hunter2?k=hunter2", "must be an http:// or https:// URL"),
        ("http://admin:123/hunter2@127.0.0.1:6006", "carries credentials"),
        ("http://admin:hunter2/x@127.0.0.1:6006", "carries credentials"),
    ],
)
def test_a_malformed_or_credentialed_phoenix_url_is_a_usage_error(
    project: Path, url: str, shown: str
) -> None:
    done = subprocess.run(
        [_STATEVAL, "run", "suite.yaml", "--phoenix-url", url],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert shown in done.stderr
    assert "hunter2" not in done.stderr + done.stdout
    assert not (project / "home" / "runs").exists()


def test_an_unreachable_phoenix_runs_locally_and_exits_3(project: Path) -> None:
    (project / "fault_mutator.py").write_text(_MUTATOR.replace('"wait"', '"never"'))
    done = subprocess.run(
        [_STATEVAL, "run", "suite.yaml", "--phoenix-url", "http://127.0.0.1:9"],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == EXIT_INFRASTRUCTURE, done.stderr
    assert "not uploaded to Phoenix" in done.stderr
    assert "--resume" in done.stderr
    assert "Phoenix: 0 of 3 cases delivered" in done.stdout
    assert sorted(Journal.open(project / "home").results) == ["a", "b", "c"]


def test_validate_calls_no_user_code(project: Path) -> None:
    (project / "factory_mutator.py").write_text(
        "from pathlib import Path\n"
        "def make(**args):\n"
        "    Path(__file__).with_name('called').touch()\n"
        "    return lambda state, input: state\n"
    )
    (project / "suite.yaml").write_text(
        _SUITE.replace('"fault_mutator:slow"}', '"factory_mutator:make", args: {x: 1}}')
    )
    done = subprocess.run(
        [_STATEVAL, "validate", "suite.yaml"],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "ok (3 cases" in done.stdout
    assert not (project / "called").exists()
    (project / "suite.yaml").write_text(
        _SUITE.replace('"fault_mutator:slow"}', '"factory_mutator:missing"}')
    )
    bad = subprocess.run(
        [_STATEVAL, "validate", "suite.yaml"],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == EXIT_USAGE
    assert "mutator.callable" in bad.stderr


def _limit_report_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (500, 500))  # each report is larger


def test_a_full_disk_while_writing_reports_exits_3_and_keeps_the_old_reports(
    project: Path,
) -> None:
    (project / "fault_mutator.py").write_text(_MUTATOR.replace('"wait"', '"never"'))
    first = subprocess.run(
        [_STATEVAL, "run", "suite.yaml", "--no-phoenix", "--report-json", "r.json"],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        check=False,
    )
    assert first.returncode == 0, first.stderr
    before = (project / "r.json").read_bytes()
    for option, name in (("--report-json", "r.json"), ("--markdown", "r.md")):
        if name != "r.json":
            (project / name).write_bytes(before)  # any earlier report
        kept = (project / name).read_bytes()
        done = subprocess.run(
            [_STATEVAL, "rescore", "latest", option, name],
            cwd=project,
            env=_env(project),
            capture_output=True,
            text=True,
            check=False,
            preexec_fn=_limit_report_size,
        )
        assert done.returncode == EXIT_INFRASTRUCTURE, done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert errors == [f"error: cannot write report {name}: File too large"], done.stderr
        assert (project / name).read_bytes() == kept  # the old report, whole
        assert sorted(p.name for p in project.iterdir() if name in p.name) == [name]
