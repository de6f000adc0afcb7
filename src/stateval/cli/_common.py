"""What the ``stateval`` commands share: exit codes, common options, the error boundary, and the
console reports are printed on.

Used by every ``stateval`` command, ``stateval mutate`` (``_mutate.py``) included.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import inspect
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, TypeVar

import typer
from typer.exceptions import TyperException

if TYPE_CHECKING:
    from rich.console import Console

    from stateval.reports import ReportRequest

__all__ = [
    "EXIT_BELOW_THRESHOLD",
    "EXIT_INFRASTRUCTURE",
    "EXIT_PASS",
    "EXIT_USAGE",
    "ConcurrencyOption",
    "DebugOption",
    "ReportJsonOption",
    "RunInterrupted",
    "check_reports",
    "errors_to_exit",
    "interrupted_exit_code",
    "plain_console",
    "report_console",
    "report_options",
    "run_interruptible",
    "stateval_home",
    "stderr_console",
]

UNBOUNDED_WIDTH = 100_000
"""The width reports are laid out at when stdout is not a terminal: no line is cut or wrapped."""

T = TypeVar("T")
_FORWARDED = (signal.SIGTERM, signal.SIGHUP)

EXIT_PASS = 0
"""The run (or mutation score) met its thresholds."""
EXIT_BELOW_THRESHOLD = 1
"""It ran and did not meet them."""
EXIT_USAGE = 2
"""Invalid input or usage: a suite, case file, journal or option problem; nothing (more) ran."""
EXIT_INFRASTRUCTURE = 3
"""The surroundings failed: disk full, Phoenix requested but not reached, or a crash (a bug)."""


def interrupted_exit_code(signum: int) -> int:
    """The exit code of a run stopped by signal ``signum``: 128 + n (130 for Ctrl-C)."""
    return 128 + signum


ReportJsonOption: TypeAlias = Annotated[
    Path | None, typer.Option(metavar="FILE", help="Write a JSON report here.")
]
"""``--report-json FILE`` of a command whose only report is its own JSON (``traces mutate``,
``traces rates``); commands with report formats take `report_options`."""


def report_options(
    kind: Literal["run", "mutation", "traces"],
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command's report options, one per format of `stateval.reports.REPORT_FORMATS`.

    The command takes ``reports: tuple[ReportRequest, ...]``; in its place on the command line
    come the options of every format that can write this ``kind`` of report (``--report-json
    FILE``...), and the files given arrive as `ReportRequest`s, in the table's order. A new
    format in the table is a new option of every command that writes reports.
    """
    from stateval.reports import REPORT_FORMATS, ReportRequest

    formats = [f for f in REPORT_FORMATS.values() if f.writes(kind)]
    names = {f.name: f"{f.name}_report" for f in formats}

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command)  # `reports` is annotated for type checking only
        params: list[inspect.Parameter] = []
        for param in signature.parameters.values():
            if param.name != "reports":
                hint = param.annotation
                if isinstance(hint, str):
                    hint = eval(hint, command.__globals__)
                params.append(param.replace(annotation=hint))
                continue
            params += [
                inspect.Parameter(
                    names[f.name],
                    inspect.Parameter.POSITIONAL_OR_KEYWORD,
                    default=None,
                    annotation=Annotated[
                        Path | None, typer.Option(f.option, metavar="FILE", help=f.help)
                    ],
                )
                for f in formats
            ]

        @functools.wraps(command)
        def with_reports(**options: Any) -> None:
            paths = {f.name: options.pop(names[f.name]) for f in formats}
            reports = tuple(ReportRequest(n, p) for n, p in paths.items() if p is not None)
            command(**options, reports=reports)

        with_reports.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        with_reports.__annotations__ = {p.name: p.annotation for p in params}
        return with_reports

    return decorate


def check_reports(reports: tuple[ReportRequest, ...]) -> None:
    """Fail before any work when a report asked for cannot be written here (a missing extra)."""
    for report in reports:
        report.writer.check()


def stateval_home() -> Path:
    """Where runs are journaled: ``$STATEVAL_HOME``, else ``.stateval``."""
    from stateval.run import stateval_home as home

    return home()


def stderr_console() -> Console:
    """The console notes and progress go to (stderr)."""
    console = plain_console(stderr=True)
    # in a log, a warning stays one line (its URL and command whole) instead of wrapping at 80
    return console if console.is_terminal else plain_console(stderr=True, soft_wrap=True)


ConcurrencyOption: TypeAlias = Annotated[
    int | None,
    typer.Option(min=1, metavar="N", help="Mutator calls at once (default: the suite's)."),
]
DebugOption: TypeAlias = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]


@contextmanager
def errors_to_exit(debug: bool) -> Iterator[None]:
    """The one error boundary of the commands: errors become lines on stderr and an exit code.

    A `StatevalError` prints one line per problem and exits 2, or 3 when it is an
    `InfrastructureError` (disk, network, Phoenix). `RunInterrupted` (a signal a command did
    not report itself) is one line and 128 + the signal's number. Anything else is a crash: one
    line naming the exception, exit 3. Exception groups (from task groups) are unwrapped to
    their first error. ``--debug`` adds the traceback. Typer's own exits pass through.
    """
    from stateval.errors import InfrastructureError, StatevalError

    try:
        yield
    except (typer.Exit, typer.Abort, TyperException):
        raise
    except Exception as raised:
        exc = _first_error(raised)
        if isinstance(exc, typer.Exit | typer.Abort | TyperException):
            raise exc from None
        if debug:
            traceback.print_exception(raised)
        if isinstance(exc, RunInterrupted):  # a command that says nothing more of its own
            print(f"error: {exc}; what was journaled is kept", file=sys.stderr)
            raise typer.Exit(interrupted_exit_code(exc.signum)) from None
        if isinstance(exc, StatevalError):
            for line in str(exc).splitlines() or [type(exc).__name__]:
                print(f"error: {line}", file=sys.stderr)
            code = EXIT_INFRASTRUCTURE if isinstance(exc, InfrastructureError) else EXIT_USAGE
            raise typer.Exit(code) from None
        print(f"error: {_describe_crash(exc)}", file=sys.stderr)
        if not debug:
            print("error: a bug in stateval or a plugin; --debug shows where", file=sys.stderr)
        raise typer.Exit(EXIT_INFRASTRUCTURE) from None


def _first_error(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe_crash(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return f"no space left on device{f' ({exc.filename})' if exc.filename else ''}"
    if isinstance(exc, MemoryError):
        return "out of memory"
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class RunInterrupted(Exception):
    """A command's async work was stopped by a signal (SIGINT, SIGTERM or SIGHUP).

    Attributes:
        signum: The signal's number.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where SIGTERM and SIGHUP stop it the way Ctrl-C does.

    The first signal cancels ``main``, so its ``finally`` blocks run (spans are flushed, uploads
    stopped, the journal left whole); then `RunInterrupted` is raised with the signal's number.
    """
    received: list[int] = []

    async def guarded() -> T:
        on_sigint = signal.getsignal(signal.SIGINT)  # asyncio.Runner's: cancels the main task
        previous: dict[int, Any] = {}

        def forward(signum: int, frame: FrameType | None) -> None:
            received.append(signum)
            if callable(on_sigint):
                on_sigint(signal.SIGINT, frame)
            else:
                raise KeyboardInterrupt

        if threading.current_thread() is threading.main_thread():
            for sig in _FORWARDED:
                previous[sig] = signal.signal(sig, forward)
        try:
            return await main
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    try:
        return asyncio.run(guarded())
    except KeyboardInterrupt:
        raise RunInterrupted(received[0] if received else int(signal.SIGINT)) from None


def plain_console(**options: Any) -> Console:
    """A console that prints what it is given as text: no rich markup (a field path
    ``notes.[/]`` or a model's reply is printed, not parsed), no emoji codes (``:x:`` stays
    ``:x:``), no highlighting. Styles go through ``style=`` or `rich.text.Text`."""
    from rich.console import Console

    return Console(highlight=False, markup=False, emoji=False, **options)


def report_console() -> Console:
    """The console reports go to (stdout).

    On a terminal, rich fits them to its width. Elsewhere (a CI log, a pipe, a file) rich would
    assume 80 columns and cut long field names in tables; there every table takes its natural
    width and no line is wrapped, so each field name stays whole on one line.
    """
    console = plain_console()
    if console.is_terminal:
        return console
    return plain_console(width=UNBOUNDED_WIDTH, soft_wrap=True)
