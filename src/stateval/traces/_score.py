"""One monitor run: read the spans, check every call, write the verdicts, remember the watermark.

`score_traces` takes one `TracesRequest` (what ``stateval traces score`` parses its options
into) and returns the run's `TracesSummary`. Pages flow through in storage order: while a page's
annotations are being stored, the next page is read. A page's span annotations go to the
server's bulk inserter (many rows per statement) and are read back; the page is journaled once
they all are stored, so a run stopped anywhere resumes after the last stored page (the next
run picks the journal up) and nothing is lost; annotations are upserted, so a page scored twice
stores nothing twice. Each page's episodes (sessions) are stored with it, merged with what
earlier pages and runs stored for them. A finished run moves the monitor's watermark to its last
span and drops the journal. With ``follow`` the run polls for newer spans every ``follow``
seconds until it is cancelled (a poll under way is finished first), then returns what it found.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from stateval.mutators import BaseLLMClient
from stateval.suite import Monitor
from stateval.traces._checks import CallVerdict, NoGoldChecks
from stateval.traces._judge import SupportJudge, judge_calls
from stateval.traces._mapping import MappedCall, Unmapped
from stateval.traces._progress import MonitorProgress
from stateval.traces._reader import SpanPage, SpanWindow, read_calls
from stateval.traces._summary import TracesSummary, TracesTally
from stateval.traces._verdicts import (
    SUMMARY_NAME,
    EpisodeTally,
    identifier,
    session_records,
    span_records,
)
from stateval.upload import PhoenixUploader, StoredSpan

__all__ = ["TracesRequest", "score_traces"]


@dataclass(frozen=True, slots=True)
class TracesRequest:
    """Everything one ``stateval traces score`` run needs.

    Attributes:
        monitor: The monitor file, loaded.
        url: The Phoenix server.
        home: The stateval home folder (watermarks and journals).
        api_key: Phoenix's API key, if it needs one.
        window: The spans to read (``--since`` / ``--until``).
        since_last: Read only the spans stored after the monitor's watermark.
        restart: Drop an interrupted run's journal instead of resuming it.
        follow: Keep polling for newer spans every this many seconds (None: one pass).
        judge_client: The judge's client (default: the monitor's ``judge:``).
        write: Store the verdicts and move the watermark (False: a dry run that only
            reports; no journal either).
    """

    monitor: Monitor
    url: str
    home: Path
    api_key: str | None = None
    window: SpanWindow = field(default_factory=SpanWindow)
    since_last: bool = False
    restart: bool = False
    follow: float | None = None
    judge_client: BaseLLMClient | None = None
    write: bool = True


OnPage = Callable[[TracesTally], None]
_Scored = tuple[StoredSpan, MappedCall, CallVerdict]


async def score_traces(request: TracesRequest, on_page: OnPage | None = None) -> TracesSummary:
    """Score the monitor's spans and write the verdicts onto them (see the module docstring).

    ``on_page`` is called with the counts after each stored page (progress).

    Raises:
        PhoenixUnavailableError: Phoenix cannot be reached or refused a request.
    """
    monitor = request.monitor
    progress = MonitorProgress(request.home, monitor.name, request.url, monitor.traces.project)
    if request.restart:
        progress.discard()
    resumed = progress.resumed() if request.write else None
    if resumed is not None:
        window, tally, episodes = resumed.window, resumed.tally, resumed.episodes
    else:
        window, tally, episodes = request.window, TracesTally(), EpisodeTally()
        if request.since_last:
            window = replace(window, after_row=progress.watermark())
    run = _Run(request, progress, tally, episodes, on_page)
    async with PhoenixUploader(request.url, api_key=request.api_key) as phoenix:
        await run.one_pass(phoenix, window)
        while request.follow is not None:
            try:
                await asyncio.sleep(request.follow)
            except asyncio.CancelledError:
                break  # Ctrl-C between polls: following ends
            after = progress.watermark()
            poll = asyncio.ensure_future(
                run.one_pass(phoenix, SpanWindow(window.since, window.until, after))
            )
            try:
                await asyncio.shield(poll)
            except asyncio.CancelledError:
                # Ctrl-C during a poll ends following once the poll is stored and counted (a
                # second Ctrl-C stops it at once; its stored pages are journaled and resumed)
                await poll
                break
    return tally.summary(monitor.thresholds)


class _Run:
    """The state of one run across its pages (and polls)."""

    def __init__(
        self,
        request: TracesRequest,
        progress: MonitorProgress,
        tally: TracesTally,
        episodes: EpisodeTally,
        on_page: OnPage | None,
    ) -> None:
        monitor = request.monitor
        self.monitor = monitor
        self.progress = progress
        self.tally = tally
        self.episodes = episodes
        self.on_page = on_page
        self.write = request.write
        self.checks = NoGoldChecks.of(monitor)
        client = request.judge_client or monitor.judge_client
        self.judge = (
            SupportJudge(
                client,
                monitor.judged,
                max_calls=monitor.model.max_judge_calls,
                sample=monitor.model.judge_sample,
                seed=monitor.traces.seed,
            )
            if client is not None and monitor.judged
            else None
        )

    async def one_pass(self, phoenix: PhoenixUploader, window: SpanWindow) -> None:
        """Score every page of ``window`` and move the watermark. The next page is read while
        one is scored, and scored while the one before is stored."""
        pages = aiter(read_calls(phoenix, self.monitor.traces, window))
        reading: asyncio.Future[SpanPage] = asyncio.ensure_future(anext(pages))
        storing: asyncio.Task[None] | None = None
        try:
            while True:
                try:
                    page = await reading
                except StopAsyncIteration:
                    break
                reading = asyncio.ensure_future(anext(pages))
                scored = await self._score(page)
                if storing is not None:
                    await storing
                storing = asyncio.create_task(self._store(phoenix, window, page, scored))
            if storing is not None:
                await storing
                storing = None
        finally:
            for pending in (reading, storing):
                if pending is not None and not pending.done():
                    pending.cancel()
        if not self.write:
            return
        if self.tally.last_row >= 0:
            self.progress.set_watermark(self.tally.last_row)
        self.progress.finish()

    async def _score(self, page: SpanPage) -> list[_Scored]:
        scored: list[_Scored] = [
            (span, call, self.checks.check(call))
            for span, call in page.calls
            if isinstance(call, MappedCall)
        ]
        if self.judge is not None:
            scored = await self._judged(scored)
        return scored

    async def _judged(self, scored: list[_Scored]) -> list[_Scored]:
        assert self.judge is not None
        before = self.judge.calls
        verdicts = await judge_calls(self.judge, [(s.span_id, c, v) for s, c, v in scored])
        self.tally.judge_calls += self.judge.calls - before
        return [(s, c, v) for (s, c, _), v in zip(scored, verdicts, strict=True)]

    async def _store(
        self, phoenix: PhoenixUploader, window: SpanWindow, page: SpanPage, scored: list[_Scored]
    ) -> None:
        """Store a page's annotations, then count it and journal it (in page order)."""
        name = self.monitor.name
        records = [
            r for span, _, verdict in scored for r in span_records(span.span_id, verdict, name)
        ]
        if records and self.write:
            self.tally.annotations += await phoenix.post_span_annotations(
                records, queued_in=self.monitor.traces.project
            )
        tally = self.tally
        tally.read += page.read
        tally.last_row = max(tally.last_row, page.last_row)
        for span, call in page.calls:
            if isinstance(call, Unmapped):
                tally.add_unmapped(span.span_id, call.reason)
        for span, call, verdict in scored:
            tally.add(span.span_id, verdict)
            if call.episode is not None:
                self.episodes.add(call.episode, span.span_id, bool(verdict.flags))
        if self.write:
            await self._store_episodes(phoenix)
            self.progress.record(window, tally, self.episodes)
        if self.on_page is not None:
            self.on_page(tally)

    async def _store_episodes(self, phoenix: PhoenixUploader) -> None:
        if not self.episodes.turns:
            return
        project = self.monitor.traces.project
        mine = identifier(self.monitor.name)
        stored = await phoenix.list_session_annotations(
            project, list(self.episodes.turns), names=[SUMMARY_NAME]
        )
        for annotation in stored:
            if annotation.identifier == mine:
                self.episodes.merge_stored(annotation.session_id, annotation.metadata)
        records = session_records(self.episodes, self.monitor.name)
        self.tally.annotations += await phoenix.post_session_annotations(records)
        self.episodes.turns.clear()
