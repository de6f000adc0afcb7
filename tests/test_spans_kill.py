"""Spans a `stateval run` still held when it was SIGKILLed reach Phoenix on ``--resume``: the
resumed run re-creates them from the journal (issue 11). A real Phoenix, a real child process,
a real SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from stateval.cli._common import EXIT_PASS
from stateval.errors import JournalError
from stateval.run import Journal

pytestmark = pytest.mark.phoenix

_STATEVAL = str(Path(sys.executable).with_name("stateval"))

# The exporter is held (while the file "hold" exists) so that the child certainly dies with its
# spans unexported, whatever the machine's speed.
_MUTATOR = """
import time
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from stateval import ValueConfidence

HERE = Path(__file__).parent
_export = OTLPSpanExporter.export


def _held_export(self, spans):
    while (HERE / "hold").exists():
        time.sleep(0.05)
    return _export(self, spans)


OTLPSpanExporter.export = _held_export


async def echo(state, input):
    out = state.copy()
    out.set_value("said", ValueConfidence(input.prompt, 1.0))
    return out
"""

CASES = 6


def _project(tmp_path: Path) -> Path:
    (tmp_path / "held_mutator.py").write_text(_MUTATOR)
    lines = [
        f"    - {{id: c{i}, input: {{prompt: p{i}, message_id: m{i}}}, "
        f"expected_post_state: {{said: p{i}}}}}"
        for i in range(CASES)
    ]
    project = f"killed-{uuid.uuid4().hex[:8]}"
    (tmp_path / "suite.yaml").write_text(
        f'name: killed\nmutator: {{type: python, callable: "held_mutator:echo"}}\n'
        f"phoenix: {{dataset: {project}, project: {project}}}\n"
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


def _journaled(home: Path) -> int:
    """How many case results the run under ``home`` has journaled (0 before its journal
    exists: the run folder is made before the journal's header is written)."""
    try:
        return len(Journal.open(home).results)
    except JournalError:
        return 0


def _mutator_call_spans(url: str, project: str, want: set[str]) -> dict[str, dict[str, Any]]:
    """Span id -> span, for the project's mutator-call spans (waits for ``want`` to arrive)."""
    found: dict[str, dict[str, Any]] = {}
    for _ in range(240):  # span ingestion is asynchronous on the server
        response = httpx.get(f"{url}/v1/projects/{project}/spans", params={"limit": 1000})
        if response.status_code != 404:  # 404 until the project's first span is ingested
            response.raise_for_status()
            found = {
                s["context"]["span_id"]: s
                for s in response.json()["data"]
                if s["name"] == "stateval.mutate"
            }
            if want <= set(found):
                break
        time.sleep(0.5)
    return found


def test_spans_held_by_a_killed_run_are_recreated_on_resume(
    tmp_path: Path, phoenix_url: str
) -> None:
    project = _project(tmp_path)
    (project / "hold").touch()
    child = _stateval(project, "--phoenix-url", phoenix_url)
    home = project / "home"
    try:
        while _journaled(home) < CASES:  # the condition, not a clock
            assert child.poll() is None, child.communicate()
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    assert child.returncode == -signal.SIGKILL

    journal = Journal.open(home)
    spans = {r["span_id"]: r["trace_id"] for r in journal.results.values()}
    assert len(spans) == CASES
    assert all(spans)
    assert not journal.delivered_spans  # the exporter was held: nothing reached Phoenix
    assert not journal.kept_spans()

    (project / "hold").unlink()
    resumed = _stateval(project, "--resume")
    out, err = resumed.communicate()
    assert resumed.returncode == EXIT_PASS, err
    assert f"{CASES} span(s) delivered" in out
    assert Journal.open(home).delivered_spans == set(spans)

    name = journal.header.project
    assert name is not None
    found = _mutator_call_spans(phoenix_url, name, set(spans))
    assert set(spans) <= set(found), f"{len(set(spans) - set(found))} of {CASES} spans missing"
    for span_id, trace_id in spans.items():
        span = found[span_id]
        assert span["context"]["trace_id"] == trace_id  # the experiment's runs link to it
        assert span["attributes"]["stateval.recreated"] is True
        assert "said" in span["attributes"]["output.value"]

    # Every span is accounted for now: a further resume re-creates none.
    again = _stateval(project, "--resume")
    out, err = again.communicate()
    assert again.returncode == EXIT_PASS, err
    assert "; 0 span(s) delivered" in out
