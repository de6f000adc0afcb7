"""Span annotations handed to the server's bulk inserter, then confirmed by reading them back.

``POST /v1/span_annotations?sync=true`` (`post_span_annotations`) inserts one row per statement
and fails on spans not ingested yet. Without ``sync`` (Phoenix 20.26's default) the server
queues the annotations and answers at once; its bulk inserter then stores the whole queue in
one ``INSERT ... ON CONFLICT`` per pass (upserted on span, name and identifier, like the
synchronous path), and keeps an annotation whose span is not ingested yet, retrying it every
10 s for 10 minutes. So a queued annotation does not wait for its span, and many are stored
per statement. The answer says nothing about what was stored, so `queue_span_annotations`
reads the annotations back until each holds what was posted (score, label, explanation): the
count it returns is what the server holds, not what it accepted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TypeAlias

from stateval.errors import PhoenixUnavailableError
from stateval.upload._annotation_reads import read_annotations
from stateval.upload._rest import SpanAnnotationRecord
from stateval.upload._transport import Transport

__all__ = ["queue_span_annotations"]

_Key: TypeAlias = tuple[str, str, str]
_Content: TypeAlias = tuple[float | None, str | None, str | None]


async def queue_span_annotations(
    http: Transport,
    project: str,
    records: Sequence[SpanAnnotationRecord],
    *,
    batch_size: int = 1000,
    parallel: int = 2,
    ingest_timeout: float = 120.0,
) -> int:
    """Queue ``records`` on the server (``batch_size`` per request, ``parallel`` at once) and
    wait until reading ``project``'s annotations back shows every one stored.

    Returns:
        How many annotations were stored (all of ``records``, the last of each span, name
        and identifier when one is posted twice).

    Raises:
        PhoenixUnavailableError: The server refused a batch or stayed unreachable, or for
            ``ingest_timeout`` seconds none of the annotations still missing was stored (the
            message says how many and names a span).
    """
    wanted: dict[_Key, _Content] = {
        (r.span_id, r.name, r.identifier): (r.score, r.label, r.explanation) for r in records
    }
    if not wanted:
        return 0
    batches = [records[i : i + batch_size] for i in range(0, len(records), batch_size)]
    slots = asyncio.Semaphore(max(1, parallel))

    async def post(batch: Sequence[SpanAnnotationRecord]) -> None:
        async with slots:
            await http.send(
                "POST",
                "/v1/span_annotations",
                json={"data": [r.body() for r in batch]},
                params={"sync": "false"},
            )

    await asyncio.gather(*(post(batch) for batch in batches))
    await _confirm(http, project, wanted, ingest_timeout)
    return len(wanted)


async def _confirm(
    http: Transport, project: str, wanted: dict[_Key, _Content], ingest_timeout: float
) -> None:
    """Read back until every key of ``wanted`` holds its content; the pause between reads
    doubles from 0.05 s to 2 s while nothing new is stored."""
    names = sorted({name for _, name, _ in wanted})
    missing = dict(wanted)
    pause = 0.05
    last_progress = time.monotonic()
    while True:
        await asyncio.sleep(pause)
        span_ids = sorted({span_id for span_id, _, _ in missing})
        listed = await read_annotations(http, project, "span", span_ids, names=names)
        before = len(missing)
        for a in listed:
            key = (a.span_id, a.name, a.identifier)
            result = a.result
            held = (
                (None, None, None)
                if result is None
                else (result.score, result.label, result.explanation)
            )
            if missing.get(key) == held:
                del missing[key]
        if not missing:
            return
        if len(missing) < before:
            last_progress = time.monotonic()
            pause = 0.05
        elif time.monotonic() - last_progress > ingest_timeout:
            span_id = min(missing)[0]
            raise PhoenixUnavailableError(
                f"Phoenix at {http.base_url} has not stored {len(missing)} queued span "
                f"annotation(s) (e.g. on span {span_id}) after {ingest_timeout:.0f} s"
            )
        else:
            pause = min(pause * 2, 2.0)
