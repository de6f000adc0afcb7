"""Traces and uploads survive a Phoenix that dies mid-run (issue 11): a real Phoenix server is
killed and restarted on the same data; nothing is lost, nothing is recorded twice."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stateval.cli._common import EXIT_INFRASTRUCTURE, EXIT_PASS
from stateval.errors import JournalError
from stateval.run import Journal

pytestmark = pytest.mark.phoenix

_STATEVAL = str(Path(sys.executable).with_name("stateval"))

_MUTATOR = """
import asyncio
from pathlib import Path
from stateval import InterpretiveState, ValueConfidence

HERE = Path(__file__).parent

async def echo(state, input):
    if int(input.message_id[1:]) >= 4:
        while not (HERE / "go").exists():
            await asyncio.sleep(0.05)
    out = state.copy()
    out.set_value("said", ValueConfidence(input.prompt, 1.0))
    return out
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _phoenix_binary() -> str:
    from stateval.server import phoenix_executable

    return os.environ.get("STATEVAL_TEST_PHOENIX_BIN") or str(phoenix_executable())


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    while True:  # until it answers or exits: a loaded machine starts it late, not never
        if proc.poll() is not None:
            raise RuntimeError(f"phoenix exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)


class RestartablePhoenix:
    """A Phoenix server on fixed ports and data, that a test can kill and start again."""

    def __init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="stateval-phoenix-restart-"))
        self.port, self.grpc_port = _free_port(), _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(self.workdir),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(self.grpc_port),
        }
        with (self.workdir / "server.log").open("ab") as log:
            self.proc = subprocess.Popen(
                [_phoenix_binary(), "serve"], env=env, stdout=log, stderr=log
            )
        _wait_healthy(self.url, self.proc, self.workdir / "server.log")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)


@pytest.fixture
def phoenix() -> Iterator[RestartablePhoenix]:
    server = RestartablePhoenix()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _project(tmp_path: Path, cases: int) -> Path:
    (tmp_path / "echo_mutator.py").write_text(_MUTATOR)
    lines = [
        f"    - {{id: c{i}, input: {{prompt: p{i}, message_id: m{i}}}, "
        f"expected_post_state: {{said: p{i}}}}}"
        for i in range(cases)
    ]
    (tmp_path / "suite.yaml").write_text(
        f'name: restart\nmutator: {{type: python, callable: "echo_mutator:echo"}}\n'
        f"concurrency: 4\nphoenix: {{dataset: restart-{uuid.uuid4().hex[:8]}}}\n"
        "cases:\n  inline:\n" + "\n".join(lines) + "\n"
    )
    return tmp_path


def _stateval(project: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "STATEVAL_HOME": str(project / "home"), "PYTHONPATH": str(project)}
    return subprocess.Popen(
        [_STATEVAL, "run", "suite.yaml", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _get(url: str, path: str, **params: Any) -> Any:
    response = httpx.get(f"{url}{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


def _trace_ids_in_phoenix(url: str, project: str, want: set[str]) -> set[str]:
    while True:  # span ingestion is asynchronous on the server: wait until they are all in
        spans = _get(url, f"/v1/projects/{project}/spans", limit=1000)["data"]
        found = {s["context"]["trace_id"] for s in spans if s["name"] == "stateval.mutate"}
        if want <= found:
            return found
        time.sleep(0.5)


def test_spans_and_uploads_survive_phoenix_dying_mid_run(
    tmp_path: Path, phoenix: RestartablePhoenix
) -> None:
    project = _project(tmp_path, 12)
    proc = _stateval(project, "--phoenix-url", phoenix.url)
    journal_root = project / "home"
    while _journaled(journal_root) < 4 or not _uploading(journal_root):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    phoenix.kill()
    (project / "go").touch()
    out, err = proc.communicate()
    assert proc.returncode == EXIT_INFRASTRUCTURE, err
    assert "Traceback" not in err
    assert "kept in the journal for --resume" in out
    assert "--resume" in err
    journal = Journal.open(journal_root)
    assert len(journal.results) == 12
    assert journal.unsent_spans(), "the spans Phoenix missed were not kept"

    phoenix.start()
    resumed = _stateval(project, "--resume")
    out, err = resumed.communicate()
    assert resumed.returncode == EXIT_PASS, err
    assert "Phoenix: 12 of 12 cases delivered" in out
    journal = Journal.open(journal_root)
    assert not journal.unsent_spans()

    experiment = journal.ack("experiment")
    assert experiment is not None
    runs = _get(phoenix.url, f"/v1/experiments/{experiment['experiment_id']}/runs")["data"]
    assert len(runs) == 12  # every case once, none twice
    want = {rec["trace_id"] for rec in journal.results.values()}
    assert len(want) == 12
    assert want <= {r["trace_id"] for r in runs}
    found = _trace_ids_in_phoenix(phoenix.url, journal.header.project or "restart", want)
    assert want <= found, f"{len(want - found)} of 12 traces missing"


def test_resume_finds_the_experiment_whose_acknowledgement_was_lost(
    tmp_path: Path, phoenix: RestartablePhoenix
) -> None:
    project = _project(tmp_path, 6)
    (project / "go").touch()
    first = _stateval(project, "--phoenix-url", phoenix.url)
    _, err = first.communicate()
    assert first.returncode == EXIT_PASS, err
    journal = Journal.open(project / "home")
    experiment = journal.ack("experiment")
    assert experiment is not None
    dataset_id = journal.ack("dataset")["dataset_id"]  # type: ignore[index]
    # The process died between Phoenix creating the experiment and the journal recording it:
    # drop that acknowledgement and everything after it.
    lines = journal.path.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"what":"experiment"' in line)
    journal.path.write_text("".join(lines[:cut]))

    resumed = _stateval(project, "--resume")
    _, err = resumed.communicate()
    assert resumed.returncode == EXIT_PASS, err
    again = Journal.open(project / "home").ack("experiment")
    assert again is not None
    assert again["experiment_id"] == experiment["experiment_id"]
    experiments = _get(phoenix.url, f"/v1/datasets/{dataset_id}/experiments")["data"]
    assert [e["id"] for e in experiments] == [experiment["experiment_id"]]
    runs = _get(phoenix.url, f"/v1/experiments/{experiment['experiment_id']}/runs")["data"]
    assert len(runs) == 6


def _uploading(home: Path) -> bool:
    """True once the run's experiment exists in Phoenix (its acknowledgement is journaled), so
    uploads are under way when Phoenix is killed."""
    try:
        return Journal.open(home).ack("experiment") is not None
    except JournalError:
        return False


def _journaled(home: Path) -> int:
    """How many case results the run under ``home`` has journaled (0 before its journal
    exists: the run folder is made before the journal's header is written)."""
    try:
        return len(Journal.open(home).results)
    except JournalError:
        return 0
