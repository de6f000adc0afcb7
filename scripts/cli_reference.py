"""Write docs/cli.md, the reference of every ``stateval`` command, from the CLI itself.

Each command's help, exactly as ``stateval COMMAND --help`` prints it at 100 columns, under a
heading of its own, commands of a group after the group. ``tests/test_docs.py`` fails when
docs/cli.md is not what this prints::

    python scripts/cli_reference.py > docs/cli.md
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import typer

from stateval.cli import app

WIDTH = 100

HEADER = """# Command-line reference

Generated from the CLI by `python scripts/cli_reference.py > docs/cli.md` (a test fails when
this page is stale): every command's `--help`, as printed at {width} columns.
"""


def _commands(
    command: typer.core.TyperCommand | typer.core.TyperGroup,
    path: tuple[str, ...],
    parent: typer.Context | None,
) -> Iterator[tuple[tuple[str, ...], str]]:
    ctx = typer.Context(
        command,
        info_name=path[-1],
        parent=parent,
        terminal_width=WIDTH,
        max_content_width=WIDTH,
    )
    yield path, command.get_help(ctx)
    if isinstance(command, typer.core.TyperGroup):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _commands(sub, (*path, name), ctx)


def reference() -> str:
    """docs/cli.md's text."""
    parts = [HEADER.format(width=WIDTH)]
    for path, text in _commands(typer.main.get_command(app), ("stateval",), None):
        parts.append(f"## `{' '.join(path)}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(reference())
