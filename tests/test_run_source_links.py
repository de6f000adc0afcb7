"""Cases exported from production spans: their runs link back to the span they came from (the
dataset example's source span, the mutator-call span's attributes and OpenTelemetry link, the
JSON report), and unreviewed drafts without gold are left out of a suite with a count.

The Phoenix tests need a Phoenix server: ``STATEVAL_TEST_PHOENIX_URL``, or
``STATEVAL_TEST_PHOENIX_BIN`` to start one (see tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

from stateval.cli import app
from stateval.errors import SuiteProblemsError
from stateval.suite import load_suite
from stateval.tracing import ATTR_SOURCE_SPAN_ID, configure_tracing, mutator_call_span

SPAN = "a1b2c3d4e5f60718"
TRACE = "0123456789abcdef0123456789abcdef"

LIVE_MUTATOR = """
from stateval.state import ValueConfidence

def track(state, input):
    out = state.copy()
    out.set_value("user.city", ValueConfidence(input.prompt.split()[-1], 1.0))
    return out
"""


def test_a_mutation_span_carries_and_links_its_source_span() -> None:
    exporter = InMemorySpanExporter()
    tracing = configure_tracing("p", exporter=exporter)
    with mutator_call_span(
        tracing.tracer, case_id="c1", input="hi", source_span_id=SPAN, source_trace_id=TRACE
    ):
        pass
    with mutator_call_span(tracing.tracer, case_id="c2", input="hi"):
        pass
    tracing.shutdown()
    linked, plain = exporter.get_finished_spans()
    assert linked.attributes is not None
    assert linked.attributes[ATTR_SOURCE_SPAN_ID] == SPAN
    assert json.loads(str(linked.attributes["metadata"]))["source_span_id"] == SPAN
    [link] = linked.links
    assert (format(link.context.trace_id, "032x"), format(link.context.span_id, "016x")) == (
        TRACE,
        SPAN,
    )
    assert plain.links == ()
    assert plain.attributes is not None
    assert ATTR_SOURCE_SPAN_ID not in plain.attributes


def _write_suite(folder: Path, cases: list[dict[str, Any]], **extra: Any) -> Path:
    with (folder / "cases.jsonl").open("w") as handle:
        for case in cases:
            handle.write(json.dumps(case) + "\n")
    data = {"mutator": {"type": "replay"}, "cases": {"file": "cases.jsonl"}, **extra}
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _draft(case_id: str) -> dict[str, Any]:
    return {
        "id": case_id,
        "input": {"prompt": "to Rome"},
        "actual_post_state": {"user.city": "Rome"},
        "metadata": {"source_span_id": SPAN, "review": {"status": "unreviewed"}},
    }


def test_unreviewed_drafts_are_left_out_of_the_suite_and_counted(tmp_path: Path) -> None:
    gold = {**_draft("gold"), "expected_post_state": {"user.city": "Rome"}}
    gold["metadata"] = {"source_span_id": SPAN, "review": {"status": "corrected"}}
    suite = load_suite(_write_suite(tmp_path, [gold, _draft("d1"), _draft("d2")]))
    assert [c.id for c in suite.cases] == ["gold"]
    assert suite.drafts == ("d1", "d2")
    assert suite.cases[0].source_span_id == SPAN
    shown = CliRunner().invoke(app, ["validate", str(tmp_path / "suite.yaml")])
    assert "(1 cases, 2 unreviewed drafts left out, mutator replay:cases)" in shown.stdout


def test_a_case_without_gold_that_is_not_a_draft_is_still_a_problem(tmp_path: Path) -> None:
    case = _draft("c1")
    case["metadata"] = {}
    with pytest.raises(SuiteProblemsError) as raised:
        load_suite(_write_suite(tmp_path, [case]))
    [problem] = raised.value.problems
    assert problem.endswith("cases.jsonl:1: case 'c1': expected_post_state: required")


def test_a_suite_of_drafts_only_says_so(tmp_path: Path) -> None:
    with pytest.raises(SuiteProblemsError) as raised:
        load_suite(_write_suite(tmp_path, [_draft("d1")]))
    assert raised.value.problems[0].endswith("cases: no cases (1 unreviewed drafts only)")


# -- against a real Phoenix ------------------------------------------------------------------


def _production_spans(url: str, project: str, n: int) -> list[tuple[str, str]]:
    """``n`` spans of a real OTLP-instrumented "production" app; their (span id, trace id)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource({"openinference.project.name": project}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{url}/v1/traces")))
    ids = []
    for i in range(n):
        with provider.get_tracer("app").start_as_current_span("update_profile") as span:
            span.set_attribute("input.value", f"I moved to city{i}")
            context = span.get_span_context()
            ids.append((format(context.span_id, "016x"), format(context.trace_id, "032x")))
    provider.shutdown()
    return ids


def _poll(fetch: Any, ready: Any) -> Any:
    for _ in range(240):  # span ingestion is asynchronous on the server
        got = fetch()
        if ready(got):
            return got
        time.sleep(0.5)
    return got


def _spans(url: str, project: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{url}/v1/projects/{project}/spans", params={"limit": 1000})
    return [] if response.status_code == 404 else list(response.json()["data"])


@pytest.mark.phoenix
@pytest.mark.parametrize("kind", ["replay", "live"])
def test_each_run_links_to_the_production_span_its_case_came_from(
    tmp_path: Path, phoenix_url: str, kind: str, request: pytest.FixtureRequest
) -> None:
    tag = uuid.uuid4().hex[:8]
    sources = _production_spans(phoenix_url, f"prod-{tag}", 3)
    _poll(lambda: _spans(phoenix_url, f"prod-{tag}"), lambda got: len(got) == 3)
    cases = [
        {
            "id": f"c{i}",
            "input": {"prompt": f"I moved to city{i}"},
            "expected_post_state": {"user.city": f"city{i}"},
            "actual_post_state": {"user.city": f"city{i}"},
            "metadata": {"source_span_id": span_id, "source_trace_id": trace_id},
        }
        for i, (span_id, trace_id) in enumerate(sources)
    ]
    cases.append({**cases[0], "id": "plain", "metadata": {}})  # a case of no span
    mutator: dict[str, Any] = {"type": "replay"}
    if kind == "live":
        (tmp_path / f"live_{tag}.py").write_text(LIVE_MUTATOR)
        mutator = {"type": "python", "callable": f"live_{tag}:track", "path": "."}
    suite = _write_suite(
        tmp_path, cases, mutator=mutator, phoenix={"dataset": f"gold-{tag}", "project": tag}
    )
    report = tmp_path / "report.json"
    command = [sys.executable, "-c", "from stateval.cli import main; main()", "run", str(suite)]
    done = subprocess.run(
        [*command, "--phoenix-url", phoenix_url, "--report-json", str(report)],
        cwd=tmp_path,
        env={**os.environ, "STATEVAL_HOME": str(tmp_path / ".stateval")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    want = {f"c{i}": span_id for i, (span_id, _) in enumerate(sources)}
    # the JSON report names each case's source span
    shown = {c["case_id"]: c.get("source_span_id") for c in json.loads(report.read_text())["cases"]}
    assert shown == {**want, "plain": None}
    # the dataset example links to its source span ("View Source Span" in the UI)
    datasets = httpx.get(f"{phoenix_url}/v1/datasets", params={"name": f"gold-{tag}"}).json()
    examples = httpx.get(f"{phoenix_url}/v1/datasets/{datasets['data'][0]['id']}/examples").json()[
        "data"
    ]["examples"]
    linked = {e["metadata"]["case_id"]: (e.get("source") or {}).get("span_id") for e in examples}
    assert linked == {**want, "plain": None}
    # the experiment run's own trace (the mutator-call span) names the source span
    mutations = _poll(lambda: _spans(phoenix_url, tag), lambda got: len(got) >= 4)
    carried = {
        s["attributes"]["stateval.case_id"]: s["attributes"].get(ATTR_SOURCE_SPAN_ID)
        for s in mutations
        if s["name"] == "stateval.mutate"
    }
    assert carried == {**want, "plain": None}
    if kind == "replay":  # a person clicks from the run's example to the production span
        chromium = request.getfixturevalue("chromium")
        example = next(e for e in examples if e["metadata"]["case_id"] == "c0")
        page_url = f"{phoenix_url}/datasets/{datasets['data'][0]['id']}/examples/"
        _click_to_source(page_url + example["node_id"], chromium, sources[0][1])


def _click_to_source(url: str, chromium: tuple[str, list[str]], trace_id: str) -> None:
    from playwright.sync_api import sync_playwright

    executable, flags = chromium
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=flags)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url)
            page.get_by_text("View Source Span").click(timeout=120_000)
            page.wait_for_url(f"**/traces/{trace_id}?**", timeout=120_000)
        finally:
            browser.close()
