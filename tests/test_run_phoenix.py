"""Runs reported to a real Phoenix server, read back through its REST API.

Needs a Phoenix server: ``STATEVAL_TEST_PHOENIX_URL``, or ``STATEVAL_TEST_PHOENIX_BIN`` to start one
(see tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from stateval.mutators import PythonMutator, StructuredInput
from stateval.phoenix import FieldJudge, ScriptedJudgeLLM
from stateval.run import Journal, PhoenixTarget, RunOutcome, start_journal
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import Suite, load_suite
from stateval.upload import run_suite

pytestmark = pytest.mark.phoenix

CASES = [
    {
        "id": "c1",
        "input": {"prompt": "I am Ada from Paris"},
        "expected_post_state": {"user.name": "Ada", "user.city": "Paris"},
        "metadata": {"split": "dev"},
    },
    {
        "id": "c2",
        "pre_state": {"user.name": "Bob"},
        "input": {"prompt": "I live in Rome"},
        "expected_post_state": {"user.name": "Bob", "user.city": "Rome"},
    },
    {
        "id": "c3",
        "input": {"prompt": "I am Cy"},
        "expected_post_state": {"user.name": "Cyrus"},
    },
    {"id": "c4", "input": {"prompt": "explode"}, "expected_post_state": {"user.name": "Di"}},
]


def _tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    if input.prompt == "explode":
        raise RuntimeError("model timed out")
    out = state.copy()
    words = input.prompt.split()
    if "am" in words:
        out.set_value("user.name", ValueConfidence(words[words.index("am") + 1], 1.0))
    for marker in ("from", "in"):
        if marker in words:
            out.set_value("user.city", ValueConfidence(words[words.index(marker) + 1], 1.0))
    out.set_value("user.seen", ValueConfidence(True, 1.0)) if "Rome" in words else None
    return out


def _suite(
    tmp_path: Path, dataset: str, *, project: str | None = None, name: str = "people"
) -> Suite:
    phoenix: dict[str, str] = {"dataset": dataset, "experiment_prefix": "people"}
    if project is not None:
        phoenix["project"] = project
    data = {
        "name": name,
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": CASES},
        "slots": ["user.name", "user.city"],
        "checks": {"user.name": [{"type": "regex", "pattern": "^[A-Z][a-z]+$"}]},
        "phoenix": phoenix,
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    suite = load_suite(path, load_mutator=False)
    return dataclasses.replace(suite, mutator=PythonMutator(_tracker))


def _run(suite: Suite, root: Path, url: str) -> RunOutcome:
    journal = start_journal(root, suite, phoenix_url=url)
    return asyncio.run(run_suite(suite, journal, concurrency=2, phoenix=PhoenixTarget(url)))


def _get(url: str, path: str, **params: Any) -> Any:
    response = httpx.get(f"{url}{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


def _annotations(url: str, experiment_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(example id, evaluation name) -> annotation; fails on any duplicate."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for record in _get(url, f"/v1/experiments/{experiment_id}/json"):
        for annotation in record["annotations"]:
            key = (record["example_id"], annotation["name"])
            assert key not in out, f"evaluation {key} recorded twice"
            out[key] = annotation
    return out


def _spans(url: str, project: str, want: int) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = []
    for _ in range(240):  # span ingestion is asynchronous on the server
        response = httpx.get(
            f"{url}/v1/projects/{project}/spans", params={"limit": 1000}, timeout=30
        )
        if response.status_code != 404:  # 404 until the project's first span is ingested
            response.raise_for_status()
            spans = response.json()["data"]
            if len(spans) >= want:
                break
        time.sleep(0.5)
    return spans


def test_a_run_becomes_a_dataset_an_experiment_traced_runs_and_every_evaluation(
    tmp_path: Path, phoenix_url: str
) -> None:
    dataset_name = f"people-{uuid.uuid4().hex[:8]}"
    project = f"people-traces-{uuid.uuid4().hex[:8]}"
    suite = _suite(tmp_path, dataset_name, project=project)
    outcome = _run(suite, tmp_path / ".stateval", phoenix_url)
    assert outcome.upload is not None
    assert outcome.upload.error is None
    assert outcome.upload.pending == 0
    assert outcome.upload.runs == 4
    journal = outcome.journal
    experiment_id = journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    assert outcome.summary.experiment_url == journal.ack("experiment")["experiment_url"]  # type: ignore[index]

    (dataset,) = [d for d in _get(phoenix_url, "/v1/datasets", name=dataset_name)["data"]]
    examples = _get(phoenix_url, f"/v1/datasets/{dataset['id']}/examples")["data"]["examples"]
    by_case = {e["metadata"]["case_id"]: e for e in examples}
    assert sorted(by_case) == ["c1", "c2", "c3", "c4"]
    c2 = by_case["c2"]
    assert c2["input"]["case_id"] == "c2"
    assert c2["input"]["input"]["prompt"] == "I live in Rome"
    assert InterpretiveState.from_dict(c2["input"]["pre_state"]).to_flat() == {"user.name": "Bob"}
    assert InterpretiveState.from_dict(c2["output"]["post_state"]).to_flat() == {
        "user.name": "Bob",
        "user.city": "Rome",
    }
    assert by_case["c1"]["metadata"]["split"] == "dev"

    experiment = _get(phoenix_url, f"/v1/experiments/{experiment_id}")["data"]
    assert experiment["metadata"]["suite_hash"] == journal.header.suite_hash
    assert experiment["metadata"]["stateval_run_id"] == journal.run_id
    example_case = {e["node_id"]: e["metadata"]["case_id"] for e in examples}
    runs = _get(phoenix_url, f"/v1/experiments/{experiment_id}/runs")["data"]
    assert sorted(example_case[r["dataset_example_id"]] for r in runs) == ["c1", "c2", "c3", "c4"]
    run_by_case = {example_case[r["dataset_example_id"]]: r for r in runs}
    assert run_by_case["c4"]["error"].startswith("RuntimeError: model timed out")
    assert run_by_case["c4"]["output"]["post_state"] is None
    assert InterpretiveState.from_dict(run_by_case["c3"]["output"]["post_state"]).to_flat() == {
        "user.name": "Cy"
    }

    # every evaluation, with the score and label computed locally
    stored = _annotations(phoenix_url, experiment_id)
    expected = {
        (by_case[score.case_id]["node_id"], e.name): e
        for score in outcome.summary.cases
        for e in score.evaluations
    }
    assert set(stored) == set(expected)
    for key, evaluation in expected.items():
        assert stored[key]["score"] == pytest.approx(evaluation.score), key
        assert stored[key]["label"] == evaluation.label, key
        assert stored[key]["explanation"] == evaluation.explanation, key
    c1, c2_id, c3, c4 = (by_case[c]["node_id"] for c in ("c1", "c2", "c3", "c4"))
    assert stored[(c1, "field:user.name")]["label"] == "matching"
    assert stored[(c3, "field:user.name")]["label"] == "mismatched"
    assert stored[(c3, "field:user.name")]["score"] == 0.0
    assert "expected 'Cyrus'" in stored[(c3, "field:user.name")]["explanation"]
    assert stored[(c2_id, "field:user.seen")]["label"] == "extra"
    assert stored[(c4, "field:user.name")]["label"] == "missing"
    assert stored[(c4, "overall_match")]["label"] == "error"
    assert stored[(c1, "slot_accuracy")]["score"] == 1.0
    assert stored[(c1, "check:user.name")]["score"] == 1.0
    assert stored[(c2_id, "preserved_fields_accuracy")]["score"] == 1.0

    # one CHAIN span per mutator call, in the suite's project (phoenix.project), linked from
    # its run; the experiment's own auto-named project stays empty
    spans = [s for s in _spans(phoenix_url, project, 4) if s["name"] == "stateval.mutate"]
    assert len(spans) == 4
    assert {s["context"]["trace_id"] for s in spans} == {r["trace_id"] for r in runs}
    by_trace = {s["context"]["trace_id"]: s for s in spans}
    c3_span = by_trace[run_by_case["c3"]["trace_id"]]
    assert c3_span["span_kind"] == "CHAIN"
    assert c3_span["attributes"]["stateval.case_id"] == "c3"
    assert json.loads(c3_span["attributes"]["input.value"])["input"]["prompt"] == "I am Cy"
    assert (
        json.loads(c3_span["attributes"]["output.value"])["fields"]["user.name"][0]["value"] == "Cy"
    )


def test_traces_go_to_the_suite_name_project_listed_under_tracing(
    tmp_path: Path, phoenix_url: str
) -> None:
    name = f"people-{uuid.uuid4().hex[:8]}"
    outcome = _run(_suite(tmp_path, name, name=name), tmp_path / ".stateval", phoenix_url)
    assert outcome.upload is not None
    assert outcome.upload.error is None
    spans = [s for s in _spans(phoenix_url, name, 4) if s["name"] == "stateval.mutate"]
    assert len(spans) == 4  # phoenix.project defaults to the suite name
    projects = {p["name"] for p in _get(phoenix_url, "/v1/projects")["data"]}
    assert name in projects  # a project of its own, which Phoenix's Tracing list shows
    auto = outcome.journal.ack("experiment")["project_name"]  # type: ignore[index]
    assert auto != name
    assert _get(phoenix_url, f"/v1/projects/{auto}/spans")["data"] == []


def test_unchanged_cases_reuse_the_dataset_version(tmp_path: Path, phoenix_url: str) -> None:
    suite = _suite(tmp_path, f"people-{uuid.uuid4().hex[:8]}")
    first = _run(suite, tmp_path / ".stateval", phoenix_url).journal.ack("dataset")
    second = _run(suite, tmp_path / ".stateval", phoenix_url).journal.ack("dataset")
    assert first is not None
    assert second is not None
    assert first["uploaded"] is True
    assert second["uploaded"] is False
    assert second["version_id"] == first["version_id"]


SLOW_MUTATOR = """
import time
from pathlib import Path
from stateval.state import ValueConfidence

def track(state, input):
    with open(Path(__file__).with_name("calls.log"), "a") as log:
        log.write(input.message_id + "\\n")
    time.sleep(0.2)
    out = state.copy()
    out.set_value("n", ValueConfidence(input.prompt, 1.0))
    out.set_value("len", ValueConfidence(len(input.prompt), 1.0))
    return out
"""


def _cli_project(tmp_path: Path, dataset: str, n: int) -> Path:
    name = "phx_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(SLOW_MUTATOR)
    cases = [
        {"id": f"k{i}", "input": {"prompt": str(i)}, "expected_post_state": {"n": str(i)}}
        for i in range(n)
    ]
    suite = {
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
        "phoenix": {"dataset": dataset},
        "concurrency": 1,
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    return tmp_path


def _stateval(cwd: Path, *args: str) -> subprocess.Popen[str]:
    command = [str(Path(sys.executable).with_name("stateval")), *args]
    env = {**os.environ, "STATEVAL_HOME": str(cwd / ".stateval")}
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _acks(journal_path: Path) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for line in journal_path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            if record["kind"] == "ack":
                counts[(record["what"], record.get("case_id", ""))] += 1
    return counts


def _check_uploaded_once(url: str, journal: Journal, n: int, names_per_run: int) -> None:
    experiment_id = journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    runs = _get(url, f"/v1/experiments/{experiment_id}/runs")["data"]
    assert len(runs) == n
    assert len({r["dataset_example_id"] for r in runs}) == n
    stored = _annotations(url, experiment_id)  # fails on a duplicate
    assert len(stored) == n * names_per_run
    acks = _acks(journal.path)
    assert all(count == 1 for count in acks.values()), acks
    assert sum(1 for what, _ in acks if what == "run") == n


def test_a_killed_upload_is_finished_by_resume_exactly_once(
    tmp_path: Path, phoenix_url: str
) -> None:
    n = 12
    project = _cli_project(tmp_path, f"kill-{uuid.uuid4().hex[:8]}", n)
    proc = _stateval(project, "run", "suite.yaml", "--phoenix-url", phoenix_url)
    root = project / ".stateval"
    try:
        for _ in range(600):
            runs = list((root / "runs").glob("*/journal.jsonl")) if root.exists() else []
            if runs and sum(1 for w, _ in _acks(runs[0]) if w == "evaluations") >= 3:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.communicate()  # reaps the process and closes its pipes
    journal = Journal.open(root)
    assert 3 <= len(journal.results) < n
    calls_before = (project / "calls.log").read_text().split()

    resumed = _stateval(project, "run", "suite.yaml", "--resume", "--phoenix-url", phoenix_url)
    _, err = resumed.communicate()
    assert resumed.returncode == 0, err
    assert "Resuming run" in err
    calls = (project / "calls.log").read_text().split()
    new_calls = calls[len(calls_before) :]
    assert sorted(new_calls) == sorted(set(journal.header.case_ids) - set(journal.results))
    final = Journal.open(root)
    assert final.complete
    # state_accuracy, overall_match, changed_fields_accuracy, field:n, field:len, op:add
    _check_uploaded_once(phoenix_url, final, n, names_per_run=6)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_phoenix_keeps_results_and_resume_uploads_them(
    tmp_path: Path, phoenix_url: str
) -> None:
    n = 3
    project = _cli_project(tmp_path, f"later-{uuid.uuid4().hex[:8]}", n)
    dead = f"http://127.0.0.1:{_closed_port()}"
    first = _stateval(project, "run", "suite.yaml", "--phoenix-url", dead)
    _, err = first.communicate()
    assert first.returncode == 3, err  # Phoenix asked for but not reached (issue 11)
    assert f"warning: {n} case(s) not uploaded to Phoenix" in err
    assert "--resume" in err
    journal = Journal.open(project / ".stateval")
    assert journal.complete
    assert journal.ack("dataset") is None

    resumed = _stateval(project, "run", "suite.yaml", "--resume", "--phoenix-url", phoenix_url)
    _, err = resumed.communicate()
    assert resumed.returncode == 0, err
    assert "not uploaded" not in err
    assert len((project / "calls.log").read_text().split()) == n  # the mutator did not run again
    _check_uploaded_once(phoenix_url, Journal.open(project / ".stateval"), n, names_per_run=6)


def test_without_a_configured_phoenix_the_cli_starts_and_reuses_an_embedded_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stateval.server import phoenix_executable

    binary = os.environ.get("STATEVAL_TEST_PHOENIX_BIN") or str(phoenix_executable())
    monkeypatch.setenv("STATEVAL_PHOENIX_BIN", binary)
    monkeypatch.delenv("PHOENIX_COLLECTOR_ENDPOINT", raising=False)
    project = _cli_project(tmp_path, f"embedded-{uuid.uuid4().hex[:8]}", 2)

    def stateval(*args: str) -> tuple[int, str, str]:
        proc = _stateval(project, *args)
        out, err = proc.communicate()
        return proc.returncode, out, err

    try:
        code, out, err = stateval("run", "suite.yaml")
        assert code == 0, err
        found = re.search(r"Phoenix \(embedded\): (http://127\.0\.0\.1:\d+)", err)
        assert found is not None, err
        url = found.group(1)
        assert f"Phoenix experiment: {url}/datasets/" in out, err
        _check_uploaded_once(url, Journal.open(project / ".stateval"), 2, names_per_run=6)
        code, out, _ = stateval("phoenix", "status")
        assert code == 0
        assert out.startswith(f"running at {url}")
        code, _, err = stateval("run", "suite.yaml")
        assert code == 0
        assert f"Phoenix (embedded): {url}" in err
        assert "Starting Phoenix" not in err  # reused, not started again
    finally:
        code, out, _ = stateval("phoenix", "stop")
    assert out.strip() == "stopped"
    code, out, _ = stateval("phoenix", "status")
    assert code == 1
    assert out.startswith("not running")


class _ChatHandler(http.server.BaseHTTPRequestHandler):
    """A tiny OpenAI-compatible endpoint: every reply sets user.name to the last word."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        prompt = body["messages"][-1]["content"]
        word = prompt.split("Input message")[1].splitlines()[1].split()[-1]
        updates = [{"path": "user.name", "value": word, "confidence": 1.0}]
        reply = {
            "id": "x",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": json.dumps(updates)},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def test_an_llm_suite_records_an_llm_span_inside_each_mutator_call_span(
    tmp_path: Path, phoenix_url: str
) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    tag = f"llm-{uuid.uuid4().hex[:8]}"
    try:
        data = {
            "mutator": {
                "type": "llm",
                "model": "tiny-model",
                "base_url": f"http://127.0.0.1:{server.server_address[1]}/v1",
                "api_key_env": None,
                "instructions": "Fill in the user's name.",
            },
            "cases": {
                "inline": [
                    {
                        "id": "a",
                        "input": {"prompt": "I am Ada"},
                        "expected_post_state": {"user.name": "Ada"},
                    },
                    {
                        "id": "b",
                        "input": {"prompt": "I am Bo"},
                        "expected_post_state": {"user.name": "Bob"},
                    },
                ]
            },
            "policies": {"*": {"confidence": "ignore"}},
            "phoenix": {"dataset": tag, "project": tag},
        }
        path = tmp_path / "suite.yaml"
        path.write_text(yaml.safe_dump(data))
        suite = load_suite(path)
        outcome = _run(suite, tmp_path / ".stateval", phoenix_url)
    finally:
        server.shutdown()
        server.server_close()
    assert [c.overall_match for c in outcome.summary.cases] == [True, False]
    spans = _spans(phoenix_url, tag, 4)  # in the suite's project
    chains = {s["context"]["trace_id"]: s for s in spans if s["span_kind"] == "CHAIN"}
    llms = [s for s in spans if s["span_kind"] == "LLM"]
    assert len(chains) == 2
    assert len(llms) == 2
    for llm in llms:
        parent = chains[llm["context"]["trace_id"]]
        assert llm["parent_id"] == parent["context"]["span_id"]
        assert llm["attributes"]["llm.model_name"] == "tiny-model"
        assert llm["attributes"]["llm.token_count.total"] == 18
        assert "Fill in the user's name." in llm["attributes"]["input.value"]


def test_judge_verdicts_are_uploaded_as_llm_evaluations(tmp_path: Path, phoenix_url: str) -> None:
    data = {
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": CASES[2:3]},  # "Cy" for "Cyrus"
        "policies": {"user.name": {"judge": "llm", "rubric": "nicknames count"}},
        "phoenix": {"dataset": f"judged-{uuid.uuid4().hex[:8]}"},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    llm = ScriptedJudgeLLM([{"label": "equivalent", "explanation": "Cy is short for Cyrus"}])
    suite = dataclasses.replace(
        load_suite(path, load_mutator=False), mutator=PythonMutator(_tracker), judge=FieldJudge(llm)
    )
    outcome = _run(suite, tmp_path / ".stateval", phoenix_url)
    assert outcome.upload is not None
    assert outcome.upload.error is None
    experiment_id = outcome.journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    annotations = _annotations(phoenix_url, experiment_id)
    (field,) = [a for (_, name), a in annotations.items() if name == "field:user.name"]
    assert (field["score"], field["label"]) == (1.0, "matching")
    assert field["annotator_kind"] == "LLM"
    assert "judge accepts the value (Cy is short for Cyrus)" in field["explanation"]
