"""The upload's own progress, shown after the run's summary: scores stored / total, rate, ETA.

On a terminal it is a live rich bar; otherwise (CI logs, pipes) one line every ``interval``
seconds, and a last line when the upload ends, so a long upload is never a silent, frozen bar.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)

from stateval.run import UploadProgress

__all__ = ["UploadWatch", "describe"]


def describe(p: UploadProgress, now: float | None = None, rate: float | None = None) -> str:
    """One line: ``upload: 1,200/4,600 scores stored (130/s, about 26 s left)``.

    ``rate`` (scores per second, e.g. over the last interval) defaults to the average since the
    upload began.
    """
    elapsed = max((now if now is not None else time.monotonic()) - p.started, 1e-9)
    line = f"upload to Phoenix: {p.sent:,}/{p.total:,} scores stored"
    if p.sent >= p.total:
        return f"{line} in {elapsed:.0f} s"
    rate = p.sent / elapsed if rate is None else rate
    if rate > 0:
        left = (p.total - p.sent) / rate
        line += f" ({rate:,.0f}/s, about {left:,.0f} s left)"
    return line


class UploadWatch:
    """Shows the progress of an upload that goes on after scoring (see `stateval.run.OnScored`).

    Args:
        console: Where to show it (stderr).
        interval: Seconds between lines when ``console`` is not a terminal.
    """

    def __init__(self, console: Console, interval: float = 10.0) -> None:
        self._console = console
        self._interval = interval
        self._task: asyncio.Task[None] | None = None
        self._progress: Callable[[], UploadProgress] | None = None

    def watch(self, progress: Callable[[], UploadProgress]) -> None:
        """Start showing ``progress`` (called inside the running event loop)."""
        self._progress = progress
        show = self._live if self._console.is_terminal else self._lines
        self._task = asyncio.get_running_loop().create_task(show(progress))

    async def stop(self) -> None:
        """Stop showing, with a last line saying where the upload ended."""
        if self._task is None or self._progress is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
        if not self._console.is_terminal:
            self._console.print(describe(self._progress()))

    async def _lines(self, progress: Callable[[], UploadProgress]) -> None:
        before, then = progress().sent, time.monotonic()
        while True:
            await asyncio.sleep(self._interval)
            p, now = progress(), time.monotonic()
            rate = (p.sent - before) / max(now - then, 1e-9) if p.sent > before else None
            self._console.print(describe(p, now, rate))
            before, then = p.sent, now

    async def _live(self, progress: Callable[[], UploadProgress]) -> None:
        bar = Progress(
            TextColumn("upload to Phoenix"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("scores"),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            console=self._console,
            transient=False,
        )
        first = progress()
        task = bar.add_task("upload", total=max(first.total, 1), completed=first.sent, rate="")
        with bar:
            try:
                while True:
                    p = progress()
                    elapsed = max(time.monotonic() - p.started, 1e-9)
                    bar.update(
                        task,
                        total=max(p.total, 1),
                        completed=p.sent,
                        rate=f"{p.sent / elapsed:,.0f}/s",
                    )
                    await asyncio.sleep(0.25)
            finally:
                p = progress()
                bar.update(task, total=max(p.total, 1), completed=p.sent)
