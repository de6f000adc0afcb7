"""PHOENIX_API_KEY against a Phoenix server with authentication on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.phoenix

SECRET = "stateval0test0phoenix0secret0abcdef12"
ADMIN_KEY = "stateval0test0admin0key0abcdefgh1234"  # accepted as a bearer token by Phoenix

MUTATOR = """
from stateval import ValueConfidence


def fill(state, input):
    out = state.copy()
    out.add_value("greeting", ValueConfidence(input.prompt, 1.0))
    return out
"""


@pytest.fixture(scope="module")
def auth_phoenix(
    start_phoenix: Callable[[dict[str, str]], AbstractContextManager[str]],
) -> Iterator[str]:
    env = {
        "PHOENIX_ENABLE_AUTH": "true",
        "PHOENIX_SECRET": SECRET,
        "PHOENIX_ADMIN_SECRET": ADMIN_KEY,
    }
    with start_phoenix(env) as url:
        yield url


def _project(tmp_path: Path, dataset: str) -> Path:
    (tmp_path / "mutator.py").write_text(MUTATOR)
    cases = [
        {
            "id": f"c{i}",
            "input": {"prompt": f"hello {i}", "message_id": f"m{i}"},
            "expected_post_state": {"greeting": f"hello {i}"},
        }
        for i in range(3)
    ]
    suite = {
        "mutator": {"type": "python", "callable": "mutator:fill", "path": "."},
        "cases": {"inline": cases},
        "phoenix": {"dataset": dataset},
    }
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    return tmp_path


def _run(project: Path, url: str, api_key: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PHOENIX_API_KEY", "CI")}
    env["STATEVAL_HOME"] = str(project / ".stateval")
    if api_key is not None:
        env["PHOENIX_API_KEY"] = api_key
    command = [str(Path(sys.executable).with_name("stateval")), "run", "suite.json"]
    return subprocess.run(
        [*command, "--phoenix-url", url],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_api_key_is_sent_and_never_written_anywhere(auth_phoenix: str, tmp_path: Path) -> None:
    project = _project(tmp_path, "auth-with-key")
    done = _run(project, auth_phoenix, ADMIN_KEY)
    assert done.returncode == 0, done.stderr
    assert "Phoenix experiment:" in done.stdout

    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    assert httpx.get(f"{auth_phoenix}/v1/datasets", timeout=10).status_code == 401
    datasets = httpx.get(f"{auth_phoenix}/v1/datasets", headers=headers, timeout=10).json()
    (dataset,) = [d for d in datasets["data"] if d["name"] == "auth-with-key"]
    experiments = httpx.get(
        f"{auth_phoenix}/v1/datasets/{dataset['id']}/experiments", headers=headers, timeout=10
    ).json()["data"]
    assert len(experiments) == 1
    runs = httpx.get(
        f"{auth_phoenix}/v1/experiments/{experiments[0]['id']}/json", headers=headers, timeout=10
    ).json()
    assert len(runs) == 3
    assert all(
        {"state_accuracy", "field:greeting"} <= {a["name"] for a in r["annotations"]} for r in runs
    )

    written = "".join(p.read_text() for p in (project / ".stateval").rglob("*.jsonl"))
    assert ADMIN_KEY not in written + done.stdout + done.stderr


def test_without_the_key_the_run_stays_local_and_says_how_to_finish(
    auth_phoenix: str, tmp_path: Path
) -> None:
    project = _project(tmp_path, "auth-without-key")
    done = _run(project, auth_phoenix, None)
    assert "Traceback" not in done.stderr
    assert "--resume" in done.stderr
    journal = next((project / ".stateval").rglob("journal.jsonl")).read_text()
    assert journal.count('"case_id"') >= 3  # every case was computed and kept
