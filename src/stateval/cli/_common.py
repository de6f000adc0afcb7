"""What the ``stateval`` commands share: exit codes, common options, the error boundary, and the
console reports are printed on.

Used by every ``stateval`` command, ``stateval mutate`` (``_mutate.py``) included.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeAlias

import typer

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EXIT_BELOW_THRESHOLD",
    "EXIT_PASS",
    "EXIT_USAGE",
    "ConcurrencyOption",
    "DebugOption",
    "JunitOption",
    "MarkdownOption",
    "ReportHtmlOption",
    "ReportJsonOption",
    "errors_to_exit",
    "report_console",
]

UNBOUNDED_WIDTH = 100_000
"""The width reports are laid out at when stdout is not a terminal: no line is cut or wrapped."""

EXIT_PASS, EXIT_BELOW_THRESHOLD, EXIT_USAGE = 0, 1, 2

ReportJsonOption: TypeAlias = Annotated[
    Path | None, typer.Option(metavar="FILE", help="Write a JSON report here.")
]
JunitOption: TypeAlias = Annotated[
    Path | None, typer.Option(metavar="FILE", help="Write a JUnit XML report here.")
]
MarkdownOption: TypeAlias = Annotated[
    Path | None, typer.Option(metavar="FILE", help="Write a Markdown report here.")
]
ReportHtmlOption: TypeAlias = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        help="Write a self-contained HTML report here (charts need the 'report' extra).",
    ),
]
ConcurrencyOption: TypeAlias = Annotated[
    int | None,
    typer.Option(min=1, metavar="N", help="Mutator calls at once (default: the suite's)."),
]
DebugOption: TypeAlias = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]


@contextmanager
def errors_to_exit(debug: bool) -> Iterator[None]:
    """Turn a `StatevalError` into one line per problem on stderr and exit code 2."""
    from stateval.errors import StatevalError

    try:
        yield
    except StatevalError as exc:
        if debug:
            traceback.print_exc()
        for line in str(exc).splitlines() or [type(exc).__name__]:
            print(f"error: {line}", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE) from None


def report_console() -> Console:
    """The console reports go to (stdout).

    On a terminal, rich fits them to its width. Elsewhere (a CI log, a pipe, a file) rich would
    assume 80 columns and cut long field names in tables; there every table takes its natural
    width and no line is wrapped, so each field name stays whole on one line.
    """
    from rich.console import Console

    console = Console(highlight=False)
    if console.is_terminal:
        return console
    return Console(highlight=False, width=UNBOUNDED_WIDTH, soft_wrap=True)
