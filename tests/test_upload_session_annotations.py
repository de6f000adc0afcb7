"""Bulk session annotations against a real Phoenix, read back over REST."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from stateval.errors import PhoenixUnavailableError
from stateval.tracing import configure_tracing, mutator_call_span
from stateval.upload import PhoenixUploader, SessionAnnotationRecord

pytestmark = pytest.mark.phoenix


def _records(session_ids: list[str]) -> list[SessionAnnotationRecord]:
    return [
        SessionAnnotationRecord(
            session_id=session,
            name=name,
            score=score,
            label=label,
            explanation=f"{name} of {session}",
            metadata={"episode": i},
            identifier="exp-1",
        )
        for i, session in enumerate(session_ids)
        for name, score, label in (
            ("episode_success", float(i % 2), "success" if i % 2 else "failure"),
            ("episode_accuracy", i / 10, None),
        )
    ]


async def test_session_annotations_posted_before_any_span_arrives_are_all_stored(
    phoenix_url: str,
) -> None:
    project = f"sessions-{uuid.uuid4().hex[:8]}"
    sessions = [f"dlg-{i}@{uuid.uuid4().hex[:8]}" for i in range(5)]
    tracing = configure_tracing(project, phoenix_url)
    # Two turns per session, each the root of a trace of its own, held open until the
    # annotations are posted: no session can exist on the server yet, so the uploader has to
    # wait for them.
    release = asyncio.Event()
    trace_ids: list[str | None] = []

    async def turn(session: str, index: int) -> None:
        with mutator_call_span(
            tracing.tracer, case_id=f"{session}-t{index}", input="hi", session_id=session
        ) as span:
            trace_ids.append(span.trace_id)
            await release.wait()

    turns = [asyncio.create_task(turn(s, i)) for s in sessions for i in range(2)]
    records = _records(sessions)
    stored_counts: list[int] = []
    async with PhoenixUploader(phoenix_url) as phoenix:
        posting = asyncio.create_task(
            phoenix.post_session_annotations(records, batch_size=4, on_stored=stored_counts.append)
        )
        await asyncio.sleep(0.5)
        assert not posting.done()
        release.set()
        await asyncio.gather(*turns)
        await asyncio.to_thread(tracing.shutdown)
        assert await posting == len(records)
        # Posting again replaces: still one annotation per session, name and identifier.
        assert await phoenix.post_session_annotations(records[:3]) == 3
        stored = await phoenix.list_session_annotations(project, sessions)
        listed = await phoenix.list_sessions(project)

    assert sum(stored_counts) == len(records)
    got = {(a.session_id, a.name): a for a in stored}
    assert len(stored) == len(got) == len(records)
    first = got[(sessions[0], "episode_success")]
    assert (first.score, first.label, first.annotator_kind) == (0.0, "failure", "CODE")
    assert (first.explanation, first.identifier) == (f"episode_success of {sessions[0]}", "exp-1")
    assert first.metadata == {"episode": 0}
    assert got[(sessions[3], "episode_accuracy")].score == pytest.approx(0.3)
    assert got[(sessions[3], "episode_accuracy")].label is None
    # Each session holds its two turns, each turn a trace of its own.
    assert sorted(s.session_id for s in listed) == sorted(sessions)
    assert all(len(s.trace_ids) == 2 for s in listed)
    assert {t for s in listed for t in s.trace_ids} == set(trace_ids)


async def test_annotations_of_a_session_that_never_arrives_fail_naming_it(
    phoenix_url: str,
) -> None:
    project = f"sessions-lost-{uuid.uuid4().hex[:8]}"
    present = f"here@{uuid.uuid4().hex[:8]}"
    lost = f"never@{uuid.uuid4().hex[:8]}"
    tracing = configure_tracing(project, phoenix_url)
    with mutator_call_span(tracing.tracer, case_id="t0", input="hi", session_id=present):
        pass
    await asyncio.to_thread(tracing.shutdown)
    async with PhoenixUploader(phoenix_url) as phoenix:
        with pytest.raises(PhoenixUnavailableError, match=f"not ingested 1 session.*{lost}"):
            await phoenix.post_session_annotations(_records([present, lost]), ingest_timeout=1.0)
        # The annotations of the session the server has were stored all the same.
        stored = await phoenix.list_session_annotations(project, [present, lost])
    assert {(a.session_id, a.name) for a in stored} == {
        (present, "episode_success"),
        (present, "episode_accuracy"),
    }
