"""Span and session annotations in bulk, for spans the server may not have ingested yet.

Phoenix 20.26 stores many span annotations per ``POST /v1/span_annotations?sync=true`` (one
transaction, upserted on span, name and identifier), which is 4-5x the rate of experiment
evaluations (one per request). Spans, though, are ingested in the background after their OTLP
export returns, and a synchronous annotation of a span the server does not hold yet fails the
whole request with 404 naming the missing span ids. So each batch whose spans are partly missing
is split: the annotations of the spans that exist are stored at once, the others are posted again
after a pause (0.25 s, doubling up to 4 s) until their spans arrive, or until no missing span has
arrived for ``ingest_timeout`` seconds.

Session annotations (``POST /v1/session_annotations?sync=true``, upserted on session, name and
identifier) lag the same way: a session exists once the first span carrying its ``session.id``
is ingested, and a batch naming a session that does not exist yet fails with 404 naming the
missing sessions. They are stored the same way.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from stateval.errors import PhoenixUnavailableError
from stateval.upload._rest import SessionAnnotationRecord, SpanAnnotationRecord
from stateval.upload._transport import Transport

__all__ = ["post_session_annotations", "post_span_annotations"]

_Record = TypeVar("_Record", SpanAnnotationRecord, SessionAnnotationRecord)


@dataclass(frozen=True, slots=True)
class _Subject(Generic[_Record]):
    """What one kind of annotation is attached to, as its bulk endpoint names it."""

    noun: str
    path: str
    missing: re.Pattern[str]
    key: Callable[[_Record], str]


_SPANS: _Subject[SpanAnnotationRecord] = _Subject(
    "span",
    "/v1/span_annotations",
    re.compile(r"Spans with IDs (.+) do not exist"),
    lambda record: record.span_id,
)
_SESSIONS: _Subject[SessionAnnotationRecord] = _Subject(
    "session",
    "/v1/session_annotations",
    re.compile(r"Sessions with IDs (.+) do not exist"),
    lambda record: record.session_id,
)


class _Ingestion:
    """How long the server has gone without ingesting a span stateval is waiting for."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.last_progress = time.monotonic()

    def progressed(self) -> None:
        self.last_progress = time.monotonic()

    @property
    def stalled(self) -> bool:
        return time.monotonic() - self.last_progress > self.timeout


async def post_span_annotations(
    http: Transport,
    records: Sequence[SpanAnnotationRecord],
    *,
    batch_size: int = 200,
    parallel: int = 2,
    ingest_timeout: float = 120.0,
    on_stored: Callable[[int], None] | None = None,
) -> int:
    """Store ``records``, ``batch_size`` per request, ``parallel`` requests at once.

    Args:
        http: The server's transport.
        records: The annotations (posting one again replaces it).
        batch_size: Annotations per request.
        parallel: Requests in flight.
        ingest_timeout: Give up when, for this many seconds, none of the spans still missing
            has been ingested.
        on_stored: Called with the number of annotations each successful request stored.

    Returns:
        How many annotations were stored.

    Raises:
        PhoenixUnavailableError: The server refused a batch, stayed unreachable, or did not
            ingest some spans in time (the message says how many and names one).
    """
    return await _post(http, _SPANS, records, batch_size, parallel, ingest_timeout, on_stored)


async def post_session_annotations(
    http: Transport,
    records: Sequence[SessionAnnotationRecord],
    *,
    batch_size: int = 200,
    parallel: int = 2,
    ingest_timeout: float = 120.0,
    on_stored: Callable[[int], None] | None = None,
) -> int:
    """Store session annotations as `post_span_annotations` stores span annotations (same
    arguments), waiting for sessions none of whose spans the server has ingested yet.

    Returns:
        How many annotations were stored.

    Raises:
        PhoenixUnavailableError: The server refused a batch, stayed unreachable, or no span
            of some sessions arrived in time (the message says how many and names one).
    """
    return await _post(http, _SESSIONS, records, batch_size, parallel, ingest_timeout, on_stored)


async def _post(
    http: Transport,
    subject: _Subject[_Record],
    records: Sequence[_Record],
    batch_size: int,
    parallel: int,
    ingest_timeout: float,
    on_stored: Callable[[int], None] | None,
) -> int:
    batches = [list(records[i : i + batch_size]) for i in range(0, len(records), batch_size)]
    ingestion = _Ingestion(ingest_timeout)
    queue: asyncio.Queue[list[_Record]] = asyncio.Queue()
    for item in batches:
        queue.put_nowait(item)
    stored = 0
    noun = subject.noun

    async def store(items: list[_Record]) -> None:
        nonlocal stored
        pause = 0.25
        while items:
            response = await http.send(
                "POST",
                subject.path,
                json={"data": [r.body() for r in items]},
                params={"sync": "true"},
                accept=(404,),
            )
            if response.status_code != 404:
                stored += len(items)
                ingestion.progressed()
                if on_stored is not None:
                    on_stored(len(items))
                return
            missing = _missing(subject, response.text, http.base_url)
            waiting = [r for r in items if _named(subject.key(r), missing, response.text)]
            present = [r for r in items if not _named(subject.key(r), missing, response.text)]
            if not waiting:  # the 404 named ids that are not in this batch: a server change
                raise PhoenixUnavailableError(
                    f"Phoenix at {http.base_url} refused {noun} annotations: {response.text[:300]}"
                )
            if present:
                await store(present)
            if ingestion.stalled:
                raise PhoenixUnavailableError(
                    f"Phoenix at {http.base_url} has not ingested {len(missing)} {noun}(s) "
                    f"(e.g. {sorted(missing)[0]}) after {ingestion.timeout:.0f} s; "
                    f"{len(waiting)} {noun} annotation(s) not stored"
                )
            await asyncio.sleep(pause)
            pause = min(pause * 2, 4.0)
            items = waiting

    async def worker() -> None:
        while True:
            try:
                items = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await store(items)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(parallel, len(batches)))):
                group.create_task(worker())
    except* PhoenixUnavailableError as failed:
        raise failed.exceptions[0] from None
    return stored


def _missing(subject: _Subject[_Record], detail: str, base_url: str) -> set[str]:
    match = subject.missing.search(detail)
    if match is None:
        raise PhoenixUnavailableError(
            f"Phoenix at {base_url} refused {subject.noun} annotations: HTTP 404 {detail[:300]}"
        )
    return {item.strip() for item in match.group(1).split(",")}


def _named(key: str, missing: set[str], detail: str) -> bool:
    """True when the 404 names ``key`` (the server joins ids with ", ", so an id holding a
    comma is looked for in the message's text)."""
    return key in missing or ("," in key and key in detail)
