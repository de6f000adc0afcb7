"""``stateval traces``: production spans in Phoenix scored without gold (``score``).

``stateval traces score MONITOR.yaml`` reads the monitor's spans, checks every call, writes the
verdicts onto the spans (and episodes) as annotations, prints the flag rate per field, and exits
0 when the thresholds are met, 1 when not, 2 on a mistake in the file or the options, 3 when
Phoenix cannot be reached.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stateval.cli._common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_PASS,
    DebugOption,
    errors_to_exit,
    report_console,
    report_options,
    run_interruptible,
)

if TYPE_CHECKING:
    from stateval.reports import ReportRequest
    from stateval.traces import SpanWindow, TracesRequest, TracesSummary, TracesTally

__all__ = ["traces_app"]

traces_app = typer.Typer(
    help="Production spans in Phoenix: score them without gold (verdicts go onto the spans), "
    "export drafts to review, import their corrections.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

_RELATIVE = re.compile(r"^(\d+)([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


_WATERMARK = "last"
"""``--since last``: from ``stateval traces score``'s watermark (only that command keeps one)."""


def _moment(value: str, option: str, *, last: bool = False) -> datetime:
    """An ISO-8601 date or time (UTC unless it says otherwise), or ``30m`` / ``2h`` / ``7d``
    ago. ``last``: the command also takes ``--since last`` (its caller reads that itself), so
    an unreadable value's message names it."""
    from stateval.errors import UsageError

    if value.strip() == _WATERMARK and option == "--since" and not last:
        raise UsageError(
            f"--since {_WATERMARK!r}: only stateval traces score keeps a watermark; give an "
            "ISO-8601 time (2026-12-01T09:00) or a duration ago (30m, 2h, 7d)"
        )
    relative = _RELATIVE.match(value.strip())
    if relative:
        amount, unit = relative.groups()
        return datetime.now(UTC) - timedelta(**{_UNITS[unit]: int(amount)})
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(
            f"{option} {value!r}: expected an ISO-8601 time (2026-12-01T09:00), "
            "a duration ago (30m, 2h, 7d)" + (f" or {_WATERMARK!r}" if last else "")
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _window(since: str | None, until: str | None, *, last: bool = False) -> tuple[SpanWindow, bool]:
    """The span window ``--since`` / ``--until`` give, and whether ``--since last`` asked for
    the watermark (``last``: the command keeps one; without it, ``last`` is refused)."""
    from stateval.errors import UsageError
    from stateval.traces import SpanWindow

    since_last = last and since is not None and since.strip() == _WATERMARK
    start = None if since is None or since_last else _moment(since, "--since", last=last)
    end = None if until is None else _moment(until, "--until")
    if start is not None and end is not None and end <= start:
        raise UsageError(f"--until {until!r} is not after --since {since!r}")
    return SpanWindow(start, end), since_last


def _progress_line(tally: TracesTally) -> None:
    print(
        f"traces: {tally.read} spans read, {tally.scored} scored, "
        f"{tally.flagged_spans} flagged, {tally.unmapped} unreadable",
        file=sys.stderr,
        flush=True,
    )


@traces_app.command(short_help="Score a monitor's spans and write the verdicts onto them.")
@report_options("traces")
def score(
    monitor_path: Annotated[
        Path, typer.Argument(metavar="MONITOR", help="Monitor file (YAML/JSON).")
    ],
    phoenix_url: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="The Phoenix server (default: PHOENIX_COLLECTOR_ENDPOINT, else the local one).",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            metavar="WHEN",
            help="Spans that started at or after WHEN (ISO time, or 30m/2h/7d ago); 'last': "
            "only spans stored after this monitor's previous run.",
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(metavar="WHEN", help="Spans that started before WHEN (ISO time or 2h ago)."),
    ] = None,
    follow: Annotated[
        float | None,
        typer.Option(
            min=0.1,
            metavar="SECONDS",
            help="Keep polling for newer spans every SECONDS until stopped (Ctrl-C).",
        ),
    ] = None,
    restart: Annotated[
        bool,
        typer.Option("--restart", help="Drop an interrupted run's journal instead of resuming it."),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Score and report, but write no annotation and keep the watermark."
        ),
    ] = False,
    reports: tuple[ReportRequest, ...] = (),
    debug: DebugOption = False,
) -> None:
    """Score the spans MONITOR names, write verdicts onto them, report the flag rates.

    An interrupted run is resumed by the next one (its journal is in the stateval home).
    """
    with errors_to_exit(debug):
        from stateval.orchestrator import TracesRunRequest, carry_out_traces
        from stateval.run import stateval_home
        from stateval.suite import load_monitor

        monitor = load_monitor(monitor_path)
        window, since_last = _window(since, until, last=True)
        request = TracesRunRequest(
            monitor=monitor,
            home=stateval_home(),
            phoenix_url=phoenix_url,
            window=window,
            since_last=since_last,
            restart=restart,
            follow=follow,
            dry_run=dry_run,
            reports=reports,
        )
        result = carry_out_traces(request, TracesTerminalView())
    raise typer.Exit(EXIT_PASS if result.passed else EXIT_BELOW_THRESHOLD)


class TracesTerminalView:
    """``stateval traces score`` on a terminal or in a log: a line per stored page and the
    notes on stderr, the summary on stdout (see `stateval.orchestrator.TracesView`)."""

    def note(self, text: str, style: str | None = None) -> None:
        """A note on stderr (as plain text)."""
        _stderr_line(text)

    def summary(self, summary: TracesSummary, phoenix_url: str) -> None:
        """The summary on stdout."""
        from stateval.reports import print_traces_summary

        print_traces_summary(summary, report_console(), phoenix_url)

    def drive(self, request: TracesRequest) -> TracesSummary:
        """Score the spans (Ctrl-C, SIGTERM and SIGHUP stop it cleanly), a line per page."""
        from stateval.traces import score_traces

        return run_interruptible(score_traces(request, on_page=_progress_line))


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
