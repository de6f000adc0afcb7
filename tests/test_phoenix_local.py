"""The local Phoenix is one per user: started once, found by every run from any folder.

Starts a real server from ``STATEVAL_TEST_PHOENIX_BIN``, else from the environment stateval
provisions (see tests/conftest.py), with its data in a temporary ``STATEVAL_PHOENIX_HOME``.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from stateval.server import phoenix_executable

MODULE = """
from stateval import InterpretiveState


def track(state, input):
    return {"n": input.prompt}
"""

SUITE = """
name: local-{tag}
mutator: {{type: python, callable: "local_{tag}_mod:track", path: .}}
cases:
  inline:
    - {{id: k1, input: {{prompt: "1"}}, expected_post_state: {{n: "1"}}}}
phoenix: {{dataset: local-{tag}}}
"""


def _project(folder: Path, tag: str) -> Path:
    folder.mkdir()
    (folder / f"local_{tag}_mod.py").write_text(MODULE)
    (folder / "suite.yaml").write_text(SUITE.format(tag=tag))
    return folder


def _stateval(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("stateval")), *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.phoenix
def test_one_local_phoenix_per_user_found_from_any_folder(tmp_path: Path) -> None:
    binary = os.environ.get("STATEVAL_TEST_PHOENIX_BIN") or str(phoenix_executable())
    home = tmp_path / "user-data" / "phoenix"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PHOENIX_COLLECTOR_ENDPOINT", "STATEVAL_HOME", "PHOENIX_API_KEY")
    }
    env |= {"STATEVAL_PHOENIX_HOME": str(home), "STATEVAL_PHOENIX_BIN": binary}
    first, second = _project(tmp_path / "first", "a"), _project(tmp_path / "second", "b")
    port = _free_port()

    started = _stateval(first, env, "phoenix", "start", "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    try:
        assert started.returncode == 0, started.stderr
        assert started.stdout.strip() == url
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200

        # another folder sees the same server, with its version, uptime and data folder
        status = _stateval(second, env, "phoenix", "status")
        assert status.returncode == 0, status.stderr
        lines = status.stdout.splitlines()
        assert lines[0].startswith(f"running at {url} (pid ")
        assert re.fullmatch(r"version: +arize-phoenix \d+\.\d+\.\d+", lines[1])
        assert re.fullmatch(r"uptime: +\d+ (s|min \d\d s)", lines[2])
        assert lines[3] == f"data:     {home}"

        # runs from either folder report to it: no second server, no per-folder data
        for project in (first, second):
            ran = _stateval(project, env, "run", "suite.yaml")
            assert ran.returncode == 0, ran.stderr
            assert f"Phoenix (embedded): {url}" in ran.stderr
            assert not (project / ".stateval" / "phoenix").exists()
        names = {d["name"] for d in httpx.get(f"{url}/v1/datasets", timeout=10).json()["data"]}
        assert {"local-a", "local-b"} <= names
    finally:
        stopped = _stateval(second, env, "phoenix", "stop")
    assert stopped.stdout.strip() == "stopped", stopped.stderr
    after = _stateval(first, env, "phoenix", "status")
    assert after.returncode == 1
    assert after.stdout.startswith("not running")
