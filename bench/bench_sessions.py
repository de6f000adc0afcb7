"""Episode scores as session annotations vs the same number of span annotations, one server.

N episodes of T turns are traced the way ``stateval run`` traces them (each turn a root
``stateval.mutate`` span carrying its episode's ``session.id``), exported, and waited for until
Phoenix lists every session. Then, in one process:

(a) baseline: 3 span annotations per episode (on its first turn's span) with
    ``PhoenixUploader.post_span_annotations``, ``--batch`` per request;
(b) the episodes' scores as 3 session annotations each with
    ``PhoenixUploader.post_session_annotations``, ``--batch`` per request (what
    ``PhoenixSink.submit_episode`` sends).

Prints each rate and (b)/(a); every annotation is read back (a line with ``!!`` if any is
missing).

Usage:
    python bench/bench_sessions.py --url http://127.0.0.1:6006 [--episodes 1000 --turns 7]
    STATEVAL_PHOENIX_BIN=/path/to/phoenix python bench/bench_sessions.py   # its own server
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from phoenix_server import add_server_options, phoenix_server

from stateval.tracing import configure_tracing, mutator_call_span
from stateval.upload import PhoenixUploader, SessionAnnotationRecord, SpanAnnotationRecord

NAMES = ("episode_success", "first_divergence_turn", "episode_accuracy")


async def _trace(url: str, project: str, sessions: list[str], turns: int) -> list[str]:
    """Trace every turn; the span id of each session's first turn."""
    from opentelemetry import context as otel_context

    tracing = configure_tracing(project, url)
    first: list[str] = []
    for session in sessions:
        for turn in range(turns):
            token = otel_context.attach(otel_context.Context())  # each turn a trace of its own
            try:
                with mutator_call_span(
                    tracing.tracer, case_id=f"{session}#{turn}", input="hi", session_id=session
                ) as span:
                    span.set_output({"turn": turn})
                    if turn == 0:
                        assert span.span_id is not None
                        first.append(span.span_id)
            finally:
                otel_context.detach(token)
    await asyncio.to_thread(tracing.shutdown)
    return first


async def run(url: str, episodes: int, turns: int, batch: int) -> None:
    project = f"bench-sessions-{uuid.uuid4().hex[:8]}"
    sessions = [f"dialogue-{i}@{project}" for i in range(episodes)]
    started = time.perf_counter()
    span_ids = await _trace(url, project, sessions, turns)
    async with PhoenixUploader(url) as phoenix:
        for _ in range(1200):  # ingestion is asynchronous on the server
            if len(await phoenix.list_sessions(project)) >= episodes:
                break
            await asyncio.sleep(0.5)
        print(
            f"{episodes} episodes x {turns} turns traced and ingested in "
            f"{time.perf_counter() - started:.1f} s; {len(NAMES) * episodes} annotations each way"
        )
        spans = [
            SpanAnnotationRecord(span_id=s, name=n, score=1.0, label="x", identifier="bench")
            for s in span_ids
            for n in NAMES
        ]
        notes = [
            SessionAnnotationRecord(session_id=s, name=n, score=1.0, label="x", identifier="bench")
            for s in sessions
            for n in NAMES
        ]
        t0, c0 = time.perf_counter(), time.process_time()
        await phoenix.post_span_annotations(spans, batch_size=batch)
        span_wall = time.perf_counter() - t0
        span_cpu = time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        await phoenix.post_session_annotations(notes, batch_size=batch)
        session_wall = time.perf_counter() - t0
        session_cpu = time.process_time() - c0
        stored_spans = await phoenix.list_span_annotations(project, span_ids)
        stored_notes = await phoenix.list_session_annotations(project, sessions)
    for title, want, got in (
        ("span", len(spans), len(stored_spans)),
        ("session", len(notes), len(stored_notes)),
    ):
        if got != want:
            print(f"!! {title} annotations stored: {got} of {want}")
    a = len(spans) / span_wall
    b = len(notes) / session_wall
    print(f"(a) span annotations:    {a:8.0f}/s  ({span_wall:.2f} s wall, {span_cpu:.2f} s CPU)")
    print(
        f"(b) session annotations: {b:8.0f}/s  ({session_wall:.2f} s wall, {session_cpu:.2f} s CPU)"
    )
    print(f"(b)/(a) = {b / a:.2f}   (batch {batch}; load {os.getloadavg()[0]:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_server_options(parser)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=7)
    parser.add_argument("--batch", type=int, default=300)
    args = parser.parse_args()
    if args.url:
        asyncio.run(run(args.url.rstrip("/"), args.episodes, args.turns, args.batch))
        return
    with phoenix_server(database_url=args.database_url) as url:
        asyncio.run(run(url, args.episodes, args.turns, args.batch))


if __name__ == "__main__":
    main()
