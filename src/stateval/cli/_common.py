"""What the ``stateval`` commands share: exit codes, common options, and the error boundary.

Used by every ``stateval`` command, ``stateval mutate`` (``_mutate.py``) included.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, TypeAlias

import typer

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
]

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
