"""``stateval traces score`` against a real Phoenix: spans exported over OTLP by the example's
instrumented app (a foreign shape) and by stateval's own tracing (``stateval.mutate``), verdicts
read back over REST."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from child_signals import sigint_as_at_a_terminal
from stateval.state import InterpretiveState
from stateval.traces import SUMMARY_NAME
from stateval.tracing import configure_tracing, mutator_call_span
from stateval.upload import PhoenixUploader, StoredSpanAnnotation
from traces_app import MONITOR, crm_fixture, send_fixture, stored_spans

pytestmark = pytest.mark.phoenix

CHECK_OF = {
    "ungrounded": "grounded",
    "clobber": "unexplained_change",
    "format": "rule",
    "signature": "unexplained_change",
}


def _project(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _stateval(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "STATEVAL_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-c", "from stateval.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def _annotations(url: str, project: str, span_ids: list[str]) -> list[StoredSpanAnnotation]:
    async def read() -> list[StoredSpanAnnotation]:
        async with PhoenixUploader(url) as phoenix:
            return await phoenix.list_span_annotations(project, span_ids)

    return asyncio.run(read())


def _monitor(tmp_path: Path, project: str, extra: str = "") -> Path:
    path = tmp_path / "monitor.yaml"
    path.write_text(MONITOR.format(project=project) + extra, encoding="utf-8")
    return path


def test_verdicts_land_on_the_spans_and_a_rerun_adds_none(phoenix_url: str, tmp_path: Path) -> None:
    project = _project("crm")
    calls = crm_fixture(300, seed=1)
    ids = send_fixture(phoenix_url, project, calls, session_size=5)
    asyncio.run(stored_spans(phoenix_url, project, len(ids)))
    monitor = _monitor(tmp_path, project)
    report = tmp_path / "report.json"
    done = _stateval(
        tmp_path / "home",
        "traces",
        "score",
        str(monitor),
        "--phoenix-url",
        phoenix_url,
        "--report-json",
        str(report),
        "--markdown",
        str(tmp_path / "report.md"),
    )
    assert done.returncode == 1, done.stderr  # 30% injected errors: below overall_match_rate 0.9
    assert "flag rate per field" in done.stdout
    assert "threshold not met: overall_match_rate" in done.stdout
    assert "traces: 300 spans read" in done.stderr
    data = json.loads(report.read_text())
    assert data["spans"]["scored"] == 300
    assert data["spans"]["unmapped"] == 0
    assert data["fields"][0]["example_links"][0].startswith(f"{phoenix_url}/redirects/spans/")
    rates = [row["flag_rate"] for row in data["fields"]]
    assert rates == sorted(rates, reverse=True)

    stored = _annotations(phoenix_url, project, ids)
    summaries = {a.span_id: a for a in stored if a.name == SUMMARY_NAME}
    assert set(summaries) == set(ids)
    flags = {(a.span_id, a.name): a for a in stored if a.name.startswith("flag:")}
    assert all(a.identifier == "stateval:crm-monitor" for a in stored)

    # recall of each injected error by its check, and false flags per check on clean spans
    found = Counter()
    injected = Counter(call.injected for call in calls if call.injected)
    for span_id, call in zip(ids, calls, strict=True):
        if call.injected is None:
            continue
        flag = flags.get((span_id, f"flag:{call.field}"))
        if flag is not None and CHECK_OF[call.injected] in flag.metadata["checks"]:
            found[call.injected] += 1
    clean = [span_id for span_id, call in zip(ids, calls, strict=True) if call.injected is None]
    false_flags = Counter(
        check
        for span_id in clean
        for (sid, _), a in flags.items()
        if sid == span_id
        for check in set(a.metadata["checks"])
    )
    recall = {kind: found[kind] / injected[kind] for kind in injected}
    false_rate = {check: false_flags[check] / len(clean) for check in CHECK_OF.values()}
    print(f"\nrecall {recall}\nfalse flags per clean span {false_rate} ({len(clean)} clean)")
    assert min(recall.values()) >= 0.9, recall
    # grounded's false flags are the fixture's dates in forms it does not read (31/1/27,
    # "January 31" without a year): about 8% of clean calls (docs/traces.md)
    assert false_rate["grounded"] <= 0.15, false_rate
    assert false_rate["unexplained_change"] <= 0.02, false_rate
    assert false_rate["rule"] == 0.0, false_rate
    flagged = summaries[next(s for s, c in zip(ids, calls, strict=True) if c.injected)]
    assert flagged.label == "flagged"
    assert flagged.score is not None
    assert flagged.score < 1

    # sessions: one summary annotation per episode of five turns
    async def sessions() -> list:
        async with PhoenixUploader(phoenix_url) as phoenix:
            return await phoenix.list_session_annotations(
                project, [f"{project}-thread-{i}" for i in range(60)], names=[SUMMARY_NAME]
            )

    episodes = asyncio.run(sessions())
    assert len(episodes) == 60
    assert all(len(e.metadata["turns"]) == 5 for e in episodes)

    again = _stateval(
        tmp_path / "home", "traces", "score", str(monitor), "--phoenix-url", phoenix_url
    )
    assert again.returncode == 1, again.stderr
    assert len(_annotations(phoenix_url, project, ids)) == len(stored)
    assert len(asyncio.run(sessions())) == 60


def test_since_last_scores_only_spans_stored_since(phoenix_url: str, tmp_path: Path) -> None:
    project = _project("since")
    first = send_fixture(phoenix_url, project, crm_fixture(40, seed=2, error_share=0))
    asyncio.run(stored_spans(phoenix_url, project, 40))
    monitor = _monitor(tmp_path, project)
    home = tmp_path / "home"
    report = tmp_path / "r.json"
    args = ("traces", "score", str(monitor), "--phoenix-url", phoenix_url, "--since", "last")
    done = _stateval(home, *args, "--report-json", str(report))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(report.read_text())["spans"]["read"] == 40
    later = send_fixture(phoenix_url, project, crm_fixture(7, seed=3, error_share=0))
    asyncio.run(stored_spans(phoenix_url, project, 47))
    done = _stateval(home, *args, "--report-json", str(report))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(report.read_text())["spans"]["read"] == 7
    names = {a.span_id for a in _annotations(phoenix_url, project, first + later)}
    assert names == set(first + later)
    done = _stateval(home, *args, "--report-json", str(report))
    assert json.loads(report.read_text())["spans"]["read"] == 0


def test_a_killed_run_resumes_without_losing_or_duplicating(
    phoenix_url: str, tmp_path: Path
) -> None:
    project = _project("kill")
    calls = crm_fixture(800, seed=4)
    ids = send_fixture(phoenix_url, project, calls)
    asyncio.run(stored_spans(phoenix_url, project, len(ids)))
    monitor = (
        _monitor(tmp_path, project)
        .read_text()
        .replace("  post_state: output.value\n", "  post_state: output.value\n  page_size: 50\n")
    )
    path = tmp_path / "paged.yaml"
    path.write_text(monitor.replace("name: crm-monitor", "name: paged"), encoding="utf-8")
    home = tmp_path / "home"
    env = {**os.environ, "STATEVAL_HOME": str(home)}
    args = [
        sys.executable,
        "-c",
        "from stateval.cli import main; main()",
        "traces",
        "score",
        str(path),
        "--phoenix-url",
        phoenix_url,
    ]
    proc = subprocess.Popen(
        args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    journal: Path | None = None
    while journal is None:
        found = list((home / "traces").glob("*/journal.json")) if (home / "traces").exists() else []
        if found and json.loads(found[0].read_text())["tally"]["scored"] >= 150:
            journal = found[0]
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()
    scored_before = json.loads(journal.read_text())["tally"]["scored"]
    assert 150 <= scored_before < 800
    report = tmp_path / "r.json"
    done = _stateval(
        home,
        "traces",
        "score",
        str(path),
        "--phoenix-url",
        phoenix_url,
        "--report-json",
        str(report),
    )
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(report.read_text())
    assert data["spans"]["scored"] == 800  # counted once each across the kill
    assert not journal.exists()
    stored = _annotations(phoenix_url, project, ids)
    per_span = Counter(a.span_id for a in stored if a.name == SUMMARY_NAME)
    assert set(per_span) == set(ids)
    assert set(per_span.values()) == {1}
    flagged = sum(row["flagged"] for row in data["fields"])
    assert sum(1 for a in stored if a.name.startswith("flag:")) == flagged


def test_stateval_mutate_spans_are_scored_with_no_mapping(phoenix_url: str, tmp_path: Path) -> None:
    project = _project("mutate")
    tracing = configure_tracing(project, phoenix_url)
    ids = []
    for i, (text, area) in enumerate([("the south please", "south"), ("no change", "west")]):
        with mutator_call_span(
            tracing.tracer,
            case_id=f"c{i}",
            input={"prompt": text, "message_id": f"m{i}", "metadata": {}},
            pre_state=InterpretiveState.from_flat({"hotel.area": "north"}),
        ) as span:
            span.set_output(InterpretiveState.from_flat({"hotel.area": area}))
            ids.append(span.span_id)
    tracing.shutdown()
    asyncio.run(stored_spans(phoenix_url, project, 2))
    monitor = tmp_path / "m.yaml"
    monitor.write_text(
        f"traces: {{project: {project}}}\ngrounded: true\nunexplained_changes: true\n"
    )
    done = _stateval(
        tmp_path / "home", "traces", "score", str(monitor), "--phoenix-url", phoenix_url
    )
    assert done.returncode == 0, done.stdout + done.stderr
    stored = {(a.span_id, a.name): a for a in _annotations(phoenix_url, project, ids)}
    assert stored[(ids[0], SUMMARY_NAME)].label == "ok"
    assert stored[(ids[1], SUMMARY_NAME)].label == "flagged"
    assert stored[(ids[1], "flag:hotel.area")].label == "grounded"


def test_an_unreachable_phoenix_exits_3_and_a_bad_file_exits_2(tmp_path: Path) -> None:
    monitor = _monitor(tmp_path, "p")
    done = _stateval(
        tmp_path, "traces", "score", str(monitor), "--phoenix-url", "http://127.0.0.1:9"
    )
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: Phoenix at")
    monitor.write_text("traces: {project: p, sample: 3}\n")
    done = _stateval(
        tmp_path, "traces", "score", str(monitor), "--phoenix-url", "http://127.0.0.1:9"
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert "traces.sample" in done.stderr
    assert done.stderr.count("\n") == 1
    monitor = _monitor(tmp_path, "p")
    done = _stateval(tmp_path, "traces", "score", str(monitor), "--since", "yesterday-ish")
    assert done.returncode == 2
    assert "--since 'yesterday-ish'" in done.stderr


def test_the_example_app_and_monitor_flag_the_signature_clobber(
    phoenix_url: str, tmp_path: Path
) -> None:
    examples = Path(__file__).resolve().parent.parent / "examples" / "traces"
    project = _project("crm-example")
    sent = subprocess.run(
        [sys.executable, str(examples / "crm_app.py"), phoenix_url, project],
        capture_output=True,
        text=True,
        check=False,
    )
    assert sent.returncode == 0, sent.stderr
    asyncio.run(stored_spans(phoenix_url, project, 3))
    env = {**os.environ, "STATEVAL_HOME": str(tmp_path), "CRM_PROJECT": project}
    report = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from stateval.cli import main; main()",
            "traces",
            "score",
            str(examples / "monitor.yaml"),
            "--phoenix-url",
            phoenix_url,
            "--report-json",
            str(report),
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # 1 of 3 flagged: below 0.9
    data = json.loads(report.read_text())
    assert data["spans"]["scored"] == 3
    assert data["spans"]["flagged"] == 1
    assert data["fields"][0]["path"] == "phone"
    assert data["fields"][0]["by_check"] == {"unexplained_change": 1}


def test_follow_scores_new_spans_as_they_arrive_until_stopped(
    phoenix_url: str, tmp_path: Path
) -> None:
    project = _project("follow")
    first = send_fixture(phoenix_url, project, crm_fixture(5, seed=5, error_share=0))
    asyncio.run(stored_spans(phoenix_url, project, 5))
    monitor = _monitor(tmp_path, project)
    home = tmp_path / "home"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from stateval.cli import main; main()",
            "traces",
            "score",
            str(monitor),
            "--phoenix-url",
            phoenix_url,
            "--follow",
            "0.2",
        ],
        env={**os.environ, "STATEVAL_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as at a terminal even when the tests run in the background (nohup, `&`),
        # where the child would inherit SIGINT ignored and never stop following
        preexec_fn=sigint_as_at_a_terminal,
    )

    def watermark() -> int | None:  # moved by each poll that scored new spans, once stored
        found = list((home / "traces").glob("*/watermark.json"))
        return json.loads(found[0].read_text())["row"] if found else None

    try:
        while len(_annotations(phoenix_url, project, first)) < 5 or watermark() is None:
            assert proc.poll() is None
            time.sleep(0.1)
        scored_first = watermark()
        later = send_fixture(phoenix_url, project, crm_fixture(3, seed=6, error_share=0))
        while {a.span_id for a in _annotations(phoenix_url, project, later)} != set(
            later
        ) or watermark() == scored_first:
            assert proc.poll() is None
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "spans: 8 read, 8 scored, 0 flagged" in out
