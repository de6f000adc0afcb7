"""The orchestrator's recipe for a monitor run: `carry_out_traces` runs a `TracesRunRequest`.

The steps are those of `carry_out` for a suite: the Phoenix server resolved the same way
(`stateval.upload.resolve_phoenix`, announced through the view), the run driven by the entry
point's view (progress, Ctrl-C), the summary shown, then every report of the request written by
its format's writer in `stateval.reports.REPORT_FORMATS` (its ``traces`` writer), and a result
whose ``passed`` the entry point turns into the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from stateval.orchestrator._request import TracesRunRequest
from stateval.traces import TracesRequest, TracesSummary
from stateval.upload import resolve_phoenix

__all__ = ["TracesResult", "TracesView", "carry_out_traces"]


class TracesView(Protocol):
    """How an entry point shows a monitor run (the CLI: a line per page on stderr)."""

    def note(self, text: str, style: str | None = None) -> None:
        """A line for the user beside the run (``style``: a rich style)."""

    def summary(self, summary: TracesSummary, phoenix_url: str) -> None:
        """Show the summary of the run (before its reports are written)."""

    def drive(self, request: TracesRequest) -> TracesSummary:
        """Score the request's spans to the end (showing progress) and return the summary."""
        ...


@dataclass(frozen=True, slots=True)
class TracesResult:
    """What a monitor run gave.

    Attributes:
        summary: The run's flag rates, verdict counts and thresholds.
        phoenix_url: The Phoenix server the spans were read from.
    """

    summary: TracesSummary
    phoenix_url: str

    @property
    def passed(self) -> bool:
        """The monitor's thresholds were met."""
        return self.summary.passed


def carry_out_traces(request: TracesRunRequest, view: TracesView) -> TracesResult:
    """Run ``request``: score the monitor's spans, store the verdicts, show and write reports.

    Raises:
        StatevalError: Invalid options or a report that cannot be written (before or after the
            run); `PhoenixUnavailableError` when Phoenix cannot be reached.
    """
    target = resolve_phoenix(request.phoenix_url, False, None, view.note)
    assert target is not None  # only None with no_phoenix, which a monitor run never asks
    summary = view.drive(
        TracesRequest(
            monitor=request.monitor,
            url=target.url,
            home=request.home,
            api_key=target.api_key,
            window=request.window,
            since_last=request.since_last,
            restart=request.restart,
            follow=request.follow,
            write=not request.dry_run,
        )
    )
    view.summary(summary, target.url)
    for report in request.reports:
        write = report.writer.traces
        assert write is not None  # the CLI offers only formats with a traces writer
        write(summary, report.path, target.url)  # whole or not at all (ReportWriteError)
    return TracesResult(summary, target.url)
