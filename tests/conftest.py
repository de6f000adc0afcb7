"""Shared fixtures: a real Phoenix server for the tests that talk to one.

`.ci/run` starts a Phoenix server from an environment of its own and exports
``STATEVAL_TEST_PHOENIX_URL``. Without it, the session starts one itself from the ``phoenix``
executable named by ``STATEVAL_TEST_PHOENIX_BIN``, else from the server environment stateval's
embedded default uses (``STATEVAL_PHOENIX_BIN``, or provisioned once under the user cache), so
the README's test command works on a fresh machine.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, settings

# The local Phoenix is one per user, under the user's data directory: tests keep theirs in a
# folder of their own (subprocesses inherit it), never touching the user's server.
os.environ["STATEVAL_PHOENIX_HOME"] = tempfile.mkdtemp(prefix="stateval-test-phoenix-home-")
# and on any free port: 6006 may be taken, or raced for, by a server the tests did not start
os.environ["STATEVAL_PHOENIX_PORT"] = "0"

# The machine is small and shared: no wall-clock bounds in tests, Hypothesis' included.
settings.register_profile(
    "stateval", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("stateval")

# tests/fixtures/*/ hold the scripts that made each fixture from an official scorer: records of
# how the numbers were produced, needing the scorers' own dependencies, never run as tests (and
# --doctest-modules would import them, two of them under one basename).
collect_ignore_glob = ["fixtures/*"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_healthy(url: str, proc: subprocess.Popen[bytes] | None, log: Path | None) -> None:
    for _ in range(240):
        if proc is not None and proc.poll() is not None:
            tail = log.read_text()[-2000:] if log else ""
            raise RuntimeError(f"phoenix exited with {proc.returncode}:\n{tail}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"phoenix at {url} did not become healthy")


def phoenix_binary() -> str:
    """The ``phoenix`` executable the tests start servers from."""
    binary = os.environ.get("STATEVAL_TEST_PHOENIX_BIN")
    if binary:
        return binary
    # The same server environment `stateval run` uses: STATEVAL_PHOENIX_BIN, or one
    # provisioned once under the user cache (minutes the first time).
    from stateval.server import phoenix_executable

    return str(phoenix_executable())


@contextmanager
def started_phoenix(extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """Start a Phoenix server of our own (SQLite in a temp dir, free ports); yield its URL."""
    workdir = Path(tempfile.mkdtemp(prefix="stateval-phoenix-"))
    port, grpc_port = _free_port(), _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        **(extra_env or {}),
    }
    log = workdir / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [phoenix_binary(), "serve"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def phoenix_url() -> Iterator[str]:
    """The base URL of a real, healthy Phoenix server."""
    url = os.environ.get("STATEVAL_TEST_PHOENIX_URL")
    if url:
        _wait_healthy(url.rstrip("/"), None, None)
        yield url.rstrip("/")
        return
    with started_phoenix() as url:
        yield url


@pytest.fixture(scope="session")
def chromium() -> tuple[str, list[str]]:
    """Debian's headless Chromium for Playwright (which never downloads a browser): its path
    and launch flags. Skips without it, fails in CI (``.ci/run`` installs it)."""
    path = Path("/usr/bin/chromium")
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"no {path} (apt-get install chromium)")
    flags = [
        "--no-sandbox",
        "--headless",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
    ]
    return str(path), flags


@pytest.fixture(scope="session")
def start_phoenix() -> Callable[..., AbstractContextManager[str]]:
    """`started_phoenix`, for tests that need a server with settings of their own."""
    return started_phoenix


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A local Ray with 2 CPUs for ``--backend ray`` (skips when Ray is not installed: pip
    install 'stateval[ray]')."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


# -- a judged suite with human verdicts (calibration, judge agreement, HTML report) ------------

JUDGED_CASES = [
    # expected name, the mutator's value and confidence, the human verdict
    ("c1", "Cyrus", "Cy", 0.6, "same"),  # judge: same -> agrees
    ("c2", "Robert", "Bob", 0.5, "same"),  # judge: same -> agrees
    ("c3", "Ann", "Anna", 0.7, "different"),  # judge: same -> disagrees
    ("c4", "Dan", "Dave", 0.4, "different"),  # judge: different -> agrees
    ("c5", "Eve", "Eve", 0.9, "same"),  # the rule matches: the judge is not asked
]


def _judged_mutator(state: Any, input: Any) -> Any:
    from stateval.state import ValueConfidence

    out = state.copy()
    value, confidence = input.metadata["value"], input.metadata["confidence"]
    out.set_value("user.name", ValueConfidence(value, confidence))
    out.set_value("user.city", ValueConfidence("Paris", 0.8))
    return out


def _judge_reply(prompt: str) -> dict[str, str]:
    if "Dave" in prompt:
        return {"label": "different", "explanation": "Dave is not Dan"}
    return {"label": "equivalent", "explanation": "a short form of the name"}


@pytest.fixture
def judged_suite(tmp_path: Path) -> Callable[..., Any]:
    """Build a suite whose ``user.name`` is LLM-judged (scripted) and whose cases carry human
    verdicts; keyword arguments are added to the suite file (e.g. ``thresholds``)."""
    import dataclasses
    import uuid

    import yaml

    from stateval.mutators import PythonMutator
    from stateval.phoenix import FieldJudge, ScriptedJudgeLLM
    from stateval.suite import load_suite

    def build(human: dict[str, Any] | None = None, **extra: Any) -> Any:
        """``human``: case id -> that case's ``human:`` (instead of the plain verdict)."""
        cases = [
            {
                "id": case_id,
                "input": {"prompt": f"I am {value}", "metadata": {"value": value, "confidence": c}},
                "expected_post_state": {"user.name": name, "user.city": "Paris"},
                "human": (human or {}).get(case_id, {"user.name": verdict}),
            }
            for case_id, name, value, c, verdict in JUDGED_CASES
        ]
        data = {
            "name": "judged",
            "mutator": {"type": "python", "callable": "builtins:print"},
            "cases": {"inline": cases},
            "policies": {"user.name": {"judge": "llm", "confidence": "ignore"}},
            "phoenix": {"dataset": f"judged-{uuid.uuid4().hex[:8]}"},
            **extra,
        }
        path = tmp_path / f"suite-{uuid.uuid4().hex[:6]}.yaml"
        path.write_text(yaml.safe_dump(data))
        suite = load_suite(path, load_mutator=False)
        judge = FieldJudge(ScriptedJudgeLLM(_judge_reply))
        return dataclasses.replace(suite, mutator=PythonMutator(_judged_mutator), judge=judge)

    return build
