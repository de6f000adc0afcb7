"""Reading a project's mutator spans from a real Phoenix: spans sent over real OTLP by an
instrumented app (and by stateval's own tracing, the ``stateval.mutate`` shape), paged in
storage order, windowed by a watermark, mapped, the unreadable ones counted."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from stateval.state import InterpretiveState
from stateval.suite import TracesSpec
from stateval.traces import MappedCall, SpanWindow, Unmapped, read_calls
from stateval.tracing import configure_tracing, mutator_call_span
from stateval.upload import PhoenixUploader
from traces_app import crm_app, stored_spans

pytestmark = pytest.mark.phoenix

CRM = {
    "span_name": "update_profile",
    "pre_state": "input.value#/profile",
    "input": "input.value#/email",
    "post_state": "output.value",
}


def _project(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _send_crm(url: str, project: str, count: int, *, start: int = 0) -> list[str]:
    app = crm_app()
    provider = app.instrument(url, project)
    tracer = provider.get_tracer("crm_app")
    ids = []
    for i in range(start, start + count):
        profile = {"name": f"user {i}", "phone": "555-0100"}
        email = f"my new number is 555-{i:04d}"
        ids.append(app.record_call(tracer, profile, email, app.update_profile(profile, email)))
    with tracer.start_as_current_span("update_profile", attributes={"output.value": "{}"}):
        pass  # a span of the right name that holds no call
    provider.shutdown()
    return ids


async def _read(url: str, spec: TracesSpec, window: SpanWindow) -> tuple[list, int, int]:
    calls: list = []
    read = 0
    last = -1
    async with PhoenixUploader(url) as phoenix:
        async for page in read_calls(phoenix, spec, window):
            calls.extend(page.calls)
            read += page.read
            last = max(last, page.last_row)
    return calls, read, last


async def test_foreign_spans_are_read_page_by_page_and_mapped(phoenix_url: str) -> None:
    project = _project("crm")
    sent = _send_crm(phoenix_url, project, 23)
    await stored_spans(phoenix_url, project, 24)
    spec = TracesSpec(project=project, page_size=5, **CRM)
    calls, read, last = await _read(phoenix_url, spec, SpanWindow())
    assert read == 24
    mapped = {span.span_id: call for span, call in calls if isinstance(call, MappedCall)}
    assert set(mapped) == set(sent)
    unmapped = [call for _, call in calls if isinstance(call, Unmapped)]
    assert [u.reason for u in unmapped] == ["no attribute 'input.value'"]
    first = mapped[sent[7]]
    assert first.pre_state is not None
    assert first.pre_state.to_flat()["phone"] == "555-0100"
    assert first.post_state.to_flat()["phone"] == "555-0007"
    assert first.input_text == "my new number is 555-0007"

    # the watermark: only spans stored after the last row read come back
    later = _send_crm(phoenix_url, project, 4, start=100)
    await stored_spans(phoenix_url, project, 29)
    again, read_again, _ = await _read(phoenix_url, spec, SpanWindow(after_row=last))
    assert read_again == 5
    assert {s.span_id for s, c in again if isinstance(c, MappedCall)} == set(later)


async def test_a_time_window_bounds_the_spans_read(phoenix_url: str) -> None:
    project = _project("window")
    _send_crm(phoenix_url, project, 3)
    await stored_spans(phoenix_url, project, 4)
    cut = datetime.now(UTC)
    _send_crm(phoenix_url, project, 2, start=10)
    await stored_spans(phoenix_url, project, 7)
    spec = TracesSpec(project=project, **CRM)
    _before, read_before, _ = await _read(phoenix_url, spec, SpanWindow(until=cut))
    _after, read_after, _ = await _read(phoenix_url, spec, SpanWindow(since=cut))
    assert (read_before, read_after) == (4, 3)


async def test_stateval_mutate_spans_need_no_mapping(phoenix_url: str) -> None:
    project = _project("mutate")
    tracing = configure_tracing(project, phoenix_url)
    for i in range(3):
        pre = InterpretiveState.from_flat({"hotel.area": "north"})
        with mutator_call_span(
            tracing.tracer,
            case_id=f"c{i}",
            input={"prompt": f"south please {i}", "message_id": f"m{i}", "metadata": {}},
            pre_state=pre,
            session_id="dialogue-1",
        ) as span:
            span.set_output(InterpretiveState.from_flat({"hotel.area": "south"}))
    tracing.shutdown()
    await stored_spans(phoenix_url, project, 3)
    calls, read, _ = await _read(phoenix_url, TracesSpec(project=project), SpanWindow())
    assert read == 3
    assert all(isinstance(call, MappedCall) for _, call in calls)
    texts = sorted(call.input_text for _, call in calls if isinstance(call, MappedCall))
    assert texts == ["south please 0", "south please 1", "south please 2"]
    call = calls[0][1]
    assert isinstance(call, MappedCall)
    assert call.episode == "dialogue-1"
    assert call.pre_state is not None
    assert call.pre_state.to_flat() == {"hotel.area": "north"}


async def test_an_unknown_project_reads_nothing(phoenix_url: str) -> None:
    calls, read, _ = await _read(phoenix_url, TracesSpec(project=_project("none")), SpanWindow())
    assert (calls, read) == ([], 0)
