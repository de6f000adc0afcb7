"""Monitor throughput: ``stateval traces score`` end to end against the raw read of the same spans.

    python bench/bench_traces.py --url http://127.0.0.1:6006 --spans 10000

Sends N calls of the instrumented CRM app (examples/traces/crm_app.py) over OTLP, a quarter of
them with a clobbered field, then times against the same Phoenix in the same process:

    (a) the raw REST read of the project's spans (every page of 1,000, nothing else): the baseline;
    (b) `score_traces` as a dry run: read, map, check, build the annotations, store nothing;
    (c) `score_traces` end to end: (b), then store every annotation and journal each page;
    (d) the raw bulk write of the same annotations as (c) writes them (`post_span_annotations`
        queued on the server's bulk inserter, then read back until stored; nothing else);
    (e) the same write with ``sync=true`` (one row per statement: what (c) did before).

and prints spans per second of each, (b)/(a) and (c)/(a) (target: at least 0.8), (c) against
(a) and (d) back to back (what reading the spans and storing the verdicts costs the server),
and (a)/(d): the best (c)/(a) could be if nothing but the write took time.
Memory: the peak Python allocation (tracemalloc) while scoring N/4 spans and N spans of the same
monitor; flat means the ratio stays near 1 while the spans grow 4x. It checks what it measured:
N spans scored, every clobbered call flagged ("!!" marks a mismatch).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import yaml

from stateval.suite import load_monitor
from stateval.traces import (
    FLAG_PREFIX,
    SUMMARY_NAME,
    TracesRequest,
    TracesSummary,
    score_traces,
)
from stateval.upload import PhoenixUploader, SpanAnnotationRecord

APP = Path(__file__).resolve().parents[1] / "examples" / "traces" / "crm_app.py"


def _app() -> Any:
    spec = importlib.util.spec_from_file_location("crm_app", APP)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _send(url: str, project: str, n: int, chunk: int = 1000) -> int:
    """N calls; every fourth one clobbers the company. Returns how many were clobbered.

    Sent a chunk at a time, each waited for until Phoenix has stored it: a server at capacity
    answers 503 and an exporter whose retries run out drops its batch.
    """
    app = _app()
    clobbered = 0
    for start in range(0, n, chunk):
        provider = app.instrument(url, project)
        tracer = provider.get_tracer("crm_app")
        for i in range(start, min(start + chunk, n)):
            profile = {"name": f"P{i}", "phone": f"555-{i % 10000:04d}", "company": "Acme"}
            email = f"My new number is 212-555-{(i + 17) % 10000:04d}, thanks."
            updated = app.update_profile(profile, email)
            if i % 4 == 0:
                updated["company"] = "Initech"
                clobbered += 1
            app.record_call(tracer, profile, email, updated, session_id=f"{project}-{i // 8}")
        provider.shutdown()
        asyncio.run(_stored(url, project, min(start + chunk, n)))
    return clobbered


async def _stored(url: str, project: str, n: int) -> None:
    async with PhoenixUploader(url) as phoenix:
        await _wait_stored(phoenix, project, n)


async def _wait_stored(phoenix: PhoenixUploader, project: str, n: int) -> None:
    """Poll until Phoenix has ingested ``n`` spans of ``project``."""
    stored = await _raw_read(phoenix, project)
    while stored < n:
        await asyncio.sleep(1.0)
        stored = await _raw_read(phoenix, project)


async def _raw_read(phoenix: PhoenixUploader, project: str) -> int:
    count = 0
    async for page in phoenix.span_pages(project, page_size=1000):
        count += len(page)
    return count


def _monitor(folder: Path, project: str) -> Path:
    path = folder / f"{project}.yaml"
    traces = {
        "project": project,
        "span_name": "update_profile",
        "pre_state": "input.value#/profile",
        "input": "input.value#/email",
        "post_state": "output.value",
        "page_size": 1000,
    }
    monitor = {
        "name": project,
        "traces": traces,
        "grounded": ["phone"],
        "unexplained_changes": True,
        "checks": {"phone": [{"type": "regex", "pattern": r"^\d{3}-555-\d{4}$"}]},
    }
    path.write_text(yaml.safe_dump(monitor), encoding="utf-8")
    return path


async def _score(url: str, monitor: Path, home: Path, *, write: bool = True) -> TracesSummary:
    request = TracesRequest(monitor=load_monitor(monitor), url=url, home=home, write=write)
    return await score_traces(request)


async def _raw_write(url: str, project: str, *, queued: bool) -> tuple[int, float]:
    """Store the annotations the monitor stored, again under other names: (count, seconds).

    ``queued``: through the server's bulk inserter, read back until stored (what the monitor
    does); otherwise ``sync=true``, one row per statement.
    """
    async with PhoenixUploader(url) as phoenix:
        ids = [
            s.span_id async for page in phoenix.span_pages(project, page_size=1000) for s in page
        ]
        stored = [  # the monitor's own (not an earlier raw write's)
            a
            for a in await phoenix.list_span_annotations(project, ids)
            if a.name == SUMMARY_NAME or a.name.startswith(FLAG_PREFIX)
        ]
        records = [
            SpanAnnotationRecord(
                span_id=a.span_id,
                name=("queued:" if queued else "sync:") + a.name,
                score=a.score,
                label=a.label,
                explanation=a.explanation,
                identifier=a.identifier,
            )
            for a in stored
        ]
        start = time.perf_counter()
        count = await phoenix.post_span_annotations(records, queued_in=project if queued else None)
        return count, time.perf_counter() - start


def _peak(url: str, monitor: Path, home: Path) -> int:
    tracemalloc.start()
    try:
        asyncio.run(_score(url, monitor, home))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench(url: str, n: int, reuse: tuple[str, str] | None = None) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-traces-"))
    if reuse:  # projects an earlier run of this bench sent (their annotations are replaced)
        big, small = reuse
        clobbered = len(range(0, n, 4))
    else:
        big = f"bench-traces-{uuid.uuid4().hex[:8]}"
        small = f"bench-traces-{uuid.uuid4().hex[:8]}"
        clobbered = _send(url, big, n)
        _send(url, small, max(n // 4, 1))
    print(f"projects: {big} ({n:,} spans), {small} ({max(n // 4, 1):,} spans)")
    load = os.getloadavg()[0]

    async def raw() -> tuple[int, float]:
        async with PhoenixUploader(url) as phoenix:
            start = time.perf_counter()
            count = await _raw_read(phoenix, big)
            return count, time.perf_counter() - start

    read, raw_s = asyncio.run(raw())
    monitor = _monitor(folder, big)
    start = time.perf_counter()
    asyncio.run(_score(url, monitor, folder / "home-dry", write=False))
    dry_s = time.perf_counter() - start
    start = time.perf_counter()
    summary = asyncio.run(_score(url, monitor, folder / "home-a"))
    score_s = time.perf_counter() - start
    read_again, raw_again_s = asyncio.run(raw())  # the read after the writes, for the spread
    written, write_s = asyncio.run(_raw_write(url, big, queued=True))
    written_sync, sync_s = asyncio.run(_raw_write(url, big, queued=False))
    raw_rate = n / min(raw_s, raw_again_s)
    score_rate = n / score_s
    t = summary.tally
    flagged = next((f.flagged for f in summary.fields if f.path == "company"), 0)
    ok = read == read_again == n and t.scored == n and flagged == clobbered
    print(f"load average at start: {load:.1f}  spans: {n:,}  annotations stored: {t.annotations:,}")
    print(f"(a) raw REST read         {raw_rate:9,.0f} spans/s  ({min(raw_s, raw_again_s):.2f} s)")
    print(f"(b) traces score, dry run {n / dry_s:9,.0f} spans/s  ({dry_s:.2f} s)")
    print(f"(c) traces score, e2e     {score_rate:9,.0f} spans/s  ({score_s:.2f} s)")
    print(f"(d) raw queued write      {n / write_s:9,.0f} spans/s  ({write_s:.2f} s, {written:,})")
    print(
        f"(e) raw sync=true write   {n / sync_s:9,.0f} spans/s  ({sync_s:.2f} s, {written_sync:,})"
    )
    print(f"annotations/s: queued {written / write_s:,.0f}, sync=true {written_sync / sync_s:,.0f}")
    print(f"(b)/(a)                   {n / dry_s / raw_rate:9.2f}x (target >= 0.8)")
    print(f"(c)/(a)                   {score_rate / raw_rate:9.2f}x (target >= 0.8)")
    both = min(raw_s, raw_again_s) + write_s
    print(f"(c) vs (a)+(d)            {both / score_s:9.2f}x (reading and writing the same work)")
    ceiling = min(raw_s, raw_again_s) / write_s
    print(f"(a)/(d)                   {ceiling:9.2f}x (the ceiling of (c)/(a): the write alone)")
    small_peak = _peak(url, _monitor(folder, small), folder / "home-b")
    big_peak = _peak(url, _monitor(folder, big), folder / "home-c")
    print(
        f"peak Python memory: {small_peak / 2**20:.1f} MiB at {max(n // 4, 1):,} spans, "
        f"{big_peak / 2**20:.1f} MiB at {n:,} spans ({big_peak / small_peak:.2f}x for 4x spans)"
    )
    print(
        "checks: "
        + (
            "ok"
            if ok
            else f"!! read {read}/{read_again}, scored {t.scored}, "
            f"company flagged {flagged} of {clobbered}"
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="A running Phoenix server.")
    parser.add_argument("--spans", type=int, default=10_000)
    parser.add_argument(
        "--reuse",
        nargs=2,
        metavar=("PROJECT", "SMALL_PROJECT"),
        help="score the spans an earlier run sent to these projects instead of sending new ones",
    )
    args = parser.parse_args()
    bench(args.url, args.spans, tuple(args.reuse) if args.reuse else None)


if __name__ == "__main__":
    main()
