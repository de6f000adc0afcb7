"""Span (or session) annotations gathered case by case and stored in bulk in the background."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from stateval.errors import PhoenixUnavailableError
from stateval.upload._rest import SessionAnnotationRecord, SpanAnnotationRecord

if TYPE_CHECKING:
    from stateval.upload._uploader import PhoenixUploader

__all__ = ["AnnotationBatcher"]

_Records: TypeAlias = Sequence[SpanAnnotationRecord] | Sequence[SessionAnnotationRecord]


class AnnotationBatcher:
    """Stores the span annotations of cases (or the session annotations of episodes, with
    ``sessions``) in bulk requests as they accumulate.

    `add` never waits: once ``batch_size`` annotations are pending, a background task stores them
    (at most ``parallel`` at once), after calling ``flush`` (export the finished spans first, so
    fewer annotations wait for their spans). A case's annotations always travel in one request,
    and ``on_cases_stored`` is told which cases are complete. The first failure stops the batcher
    and is kept in `error`; `finish` stores the rest and waits.

    Args:
        uploader: The Phoenix client.
        batch_size: Annotations per request (a case's annotations are never split).
        parallel: Requests in flight.
        flush: Awaited before each request.
        on_cases_stored: Awaited with the ids of the cases whose annotations were all stored.
        on_stored: Called with each number of annotations stored (progress).
        ingest_timeout: See `PhoenixUploader.post_span_annotations`.
        sessions: The records are `SessionAnnotationRecord`s, keyed by episode instead of case
            (`PhoenixUploader.post_session_annotations`).
        queued_in: Span annotations only: queue them on the server's bulk inserter and read
            them back from this project (``PhoenixUploader.post_span_annotations``'s
            ``queued_in``) instead of waiting for their spans' ingestion.
    """

    def __init__(
        self,
        uploader: PhoenixUploader,
        *,
        batch_size: int = 200,
        parallel: int = 2,
        flush: Callable[[], Awaitable[object]] | None = None,
        on_cases_stored: Callable[[list[str]], Awaitable[None]] | None = None,
        on_stored: Callable[[int], None] | None = None,
        ingest_timeout: float = 120.0,
        sessions: bool = False,
        queued_in: str | None = None,
    ) -> None:
        self._post: Callable[..., Awaitable[int]] = (
            uploader.post_session_annotations if sessions else uploader.post_span_annotations
        )
        self._batch_size = batch_size
        self._slots = asyncio.Semaphore(parallel)
        self._flush = flush
        self._on_cases_stored = on_cases_stored
        self._on_stored = on_stored
        self._ingest_timeout = ingest_timeout
        self._queued_in = queued_in
        self._pending: list[tuple[str, _Records]] = []
        self._pending_count = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self.error: str | None = None
        self.stored = 0

    def add(self, case_id: str, records: _Records) -> None:
        """Queue one case's annotations."""
        if self.error is not None:
            return
        self._pending.append((case_id, records))
        self._pending_count += len(records)
        if self._pending_count >= self._batch_size:
            self._launch()

    async def finish(self) -> None:
        """Store what is pending and wait for every request."""
        if self._pending and self.error is None:
            self._launch()
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def cancel(self) -> None:
        """Drop what is pending and stop the requests in flight (none of it is acknowledged)."""
        self._pending, self._pending_count = [], 0
        for task in self._tasks:
            task.cancel()

    def _launch(self) -> None:
        groups, self._pending, self._pending_count = self._pending, [], 0
        task = asyncio.create_task(self._store(groups))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _store(self, groups: list[tuple[str, _Records]]) -> None:
        async with self._slots:
            if self.error is not None:
                return
            records = [record for _, group in groups for record in group]
            try:
                if self._flush is not None:
                    await self._flush()
                if self._queued_in is None:
                    await self._post(
                        records,
                        batch_size=len(records) or 1,
                        parallel=1,
                        ingest_timeout=self._ingest_timeout,
                        on_stored=self._on_stored,
                    )
                else:
                    await self._post(
                        records,
                        parallel=1,
                        ingest_timeout=self._ingest_timeout,
                        queued_in=self._queued_in,
                    )
                    if self._on_stored is not None:
                        self._on_stored(len(records))
                self.stored += len(records)
                if self._on_cases_stored is not None:
                    await self._on_cases_stored([case_id for case_id, _ in groups])
            except PhoenixUnavailableError as exc:
                self.error = str(exc)
