"""``stateval traces score`` through the orchestrator: a `TracesRunRequest` is run by
`carry_out_traces` with the steps of a suite's run (Phoenix resolved, the run driven by the
entry point's view, the summary shown, the reports written from the formats' table), against a
real Phoenix server, read back over REST."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from stateval.orchestrator import TracesRunRequest, carry_out_traces
from stateval.reports import ReportRequest
from stateval.suite import load_monitor
from stateval.traces import TracesRequest, TracesSummary, score_traces
from stateval.upload import PhoenixUploader
from traces_app import MONITOR, crm_fixture, send_fixture, stored_spans

pytestmark = pytest.mark.phoenix


class Recorder:
    """A view that runs the engine and keeps what it was asked and shown."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.requests: list[TracesRequest] = []
        self.shown: list[tuple[TracesSummary, str]] = []

    def note(self, text: str, style: str | None = None) -> None:
        self.notes.append(text)

    def summary(self, summary: TracesSummary, phoenix_url: str) -> None:
        self.shown.append((summary, phoenix_url))

    def drive(self, request: TracesRequest) -> TracesSummary:
        self.requests.append(request)
        return asyncio.run(score_traces(request))


def _request(tmp_path: Path, url: str, project: str, **options: object) -> TracesRunRequest:
    path = tmp_path / "monitor.yaml"
    path.write_text(MONITOR.format(project=project), encoding="utf-8")
    return TracesRunRequest(
        monitor=load_monitor(path),
        home=tmp_path / "home",
        phoenix_url=url,
        **options,  # type: ignore[arg-type]
    )


def _stored(url: str, project: str, span_ids: list[str]) -> int:
    async def read() -> int:
        async with PhoenixUploader(url) as phoenix:
            return len(await phoenix.list_span_annotations(project, span_ids))

    return asyncio.run(read())


def test_a_dry_run_request_scores_reports_and_stores_nothing(
    phoenix_url: str, tmp_path: Path
) -> None:
    project = f"orch-{uuid.uuid4().hex[:8]}"
    ids = send_fixture(phoenix_url, project, crm_fixture(30, seed=11))
    asyncio.run(stored_spans(phoenix_url, project, len(ids)))
    reports = (
        ReportRequest("json", tmp_path / "traces.json"),
        ReportRequest("markdown", tmp_path / "traces.md"),
    )
    view = Recorder()
    request = _request(tmp_path, phoenix_url, project, dry_run=True, reports=reports)
    result = carry_out_traces(request, view)

    [engine] = view.requests
    assert engine.url == phoenix_url.rstrip("/")
    assert engine.write is False  # --dry-run: no annotation, no watermark
    assert engine.home == tmp_path / "home"
    assert [url for _, url in view.shown] == [phoenix_url.rstrip("/")]
    assert result.summary is view.shown[0][0]
    assert result.passed == result.summary.passed
    assert result.summary.tally.scored == 30
    data = json.loads((tmp_path / "traces.json").read_text(encoding="utf-8"))
    assert data["spans"]["scored"] == 30
    assert data["passed"] is result.passed
    assert data["annotations"] == 0
    assert "Monitor:" in (tmp_path / "traces.md").read_text(encoding="utf-8")
    assert _stored(phoenix_url, project, ids) == 0


def test_a_request_stores_its_verdicts_on_the_spans(phoenix_url: str, tmp_path: Path) -> None:
    project = f"orch-{uuid.uuid4().hex[:8]}"
    ids = send_fixture(phoenix_url, project, crm_fixture(12, seed=12))
    asyncio.run(stored_spans(phoenix_url, project, len(ids)))
    result = carry_out_traces(_request(tmp_path, phoenix_url, project), Recorder())
    assert result.summary.tally.scored == 12
    assert result.summary.tally.annotations > 0
    assert _stored(phoenix_url, project, ids) == result.summary.tally.annotations
