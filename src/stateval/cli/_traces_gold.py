"""``stateval traces export`` and ``stateval traces import``: from production spans to gold.

`register` adds both commands to the ``traces`` command group.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stateval.cli._common import DebugOption, errors_to_exit
from stateval.cli._traces import _window

if TYPE_CHECKING:
    from stateval.traces import ExportResult, ImportResult

__all__ = ["register", "traces_export", "traces_import"]

_PhoenixUrl = Annotated[
    str | None, typer.Option(metavar="URL", help="The Phoenix server (base URL).")
]


def _target(phoenix_url: str | None) -> tuple[str, str | None]:
    from rich.console import Console

    from stateval.upload import resolve_phoenix

    target = resolve_phoenix(phoenix_url, False, None, announce=Console(stderr=True).print)
    assert target is not None
    return target.url, target.api_key


def traces_export(
    monitor_path: Annotated[Path, typer.Argument(metavar="MONITOR", help="Monitor file.")],
    cases: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="Case file to write (default: <monitor name>-gold.jsonl)."
        ),
    ] = None,
    suite: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Also write a replay suite over the case file."),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Phoenix dataset (default: <monitor name>-review)."),
    ] = None,
    no_dataset: Annotated[
        bool, typer.Option("--no-dataset", help="Write the case file only.")
    ] = False,
    flagged: Annotated[
        bool, typer.Option("--flagged", help="Only spans `stateval traces score` flagged.")
    ] = False,
    sample: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="A seeded sample of N spans.")
    ] = None,
    seed: Annotated[int, typer.Option(metavar="S", help="The sample's seed.")] = 0,
    stratify_by: Annotated[
        str | None,
        typer.Option(metavar="ATTRIBUTE", help="Sample each value of this span attribute."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(metavar="WHEN", help="Spans started at or after WHEN (ISO time, or 7d ago)."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(metavar="WHEN", help="Spans started before WHEN (ISO time, or 2h ago)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite the case file.")] = False,
    append: Annotated[
        bool,
        typer.Option("--append", help="Add the spans the case file does not hold yet."),
    ] = False,
    phoenix_url: _PhoenixUrl = None,
    debug: DebugOption = False,
) -> None:
    """Export production spans as drafts to review: a case file and a Phoenix dataset, in
    review-queue order (flagged first, then lowest confidence)."""
    with errors_to_exit(debug):
        import yaml

        from stateval.errors import StatevalError
        from stateval.suite import load_monitor
        from stateval.traces import ExportOptions, export_drafts, gold_suite
        from stateval.upload import PhoenixUploader

        if stratify_by is not None and sample is None:
            raise StatevalError("--stratify-by needs --sample N")
        window, _ = _window(since, until)
        monitor = load_monitor(monitor_path, build_judge=False)
        options = ExportOptions(
            cases=cases or Path(f"{monitor.name}-gold.jsonl"),
            dataset=None if no_dataset else (dataset or f"{monitor.name}-review"),
            window=window,
            flagged=flagged,
            sample=sample,
            seed=seed,
            stratify_by=stratify_by,
            force=force,
            append=append,
        )
        keep_suite = suite is not None and suite.exists() and append
        if suite is not None and suite.exists() and not (force or append):
            raise StatevalError(f"{suite} exists (--force overwrites it)")
        url, api_key = _target(phoenix_url)

        async def export() -> ExportResult:
            async with PhoenixUploader(url, api_key=api_key) as phoenix:
                return await export_drafts(phoenix, monitor, options)

        result = asyncio.run(export())
        if suite is not None and not keep_suite:
            relative = Path(options.cases).resolve()
            try:
                written = str(relative.relative_to(suite.resolve().parent))
            except ValueError:
                written = str(relative)
            suite.write_text(yaml.safe_dump(gold_suite(monitor, written), sort_keys=False))
        for rank, draft in enumerate(result.drafts[:10], start=1):
            print(f"{rank:>4}  {draft.span.span_id}  {draft.reason}")
        if len(result.drafts) > 10:
            print(f"      ... {len(result.drafts) - 10} more in {options.cases}")
        print(
            f"exported {len(result.drafts)} drafts of {result.read} spans read "
            f"({result.flagged} flagged, {result.unmapped} not mutator calls) to {options.cases}"
            + (f"; dataset {result.dataset_url}" if result.dataset_url else "")
        )


def traces_import(
    cases: Annotated[Path, typer.Argument(metavar="CASES", help="The exported case file.")],
    monitor_path: Annotated[
        Path | None,
        typer.Option(
            "--monitor",
            metavar="MONITOR",
            help="The monitor exported from: human verdicts only on fields its LLM judges.",
        ),
    ] = None,
    phoenix_url: _PhoenixUrl = None,
    debug: DebugOption = False,
) -> None:
    """Read the corrections (span notes) of exported drafts into their case file.

    Exit code 0; 1 when some notes or spans could not be read (their cases are left as they
    were, the others are imported).
    """
    with errors_to_exit(debug):
        from stateval.suite import load_monitor
        from stateval.traces import import_corrections
        from stateval.upload import PhoenixUploader

        monitor = None
        if monitor_path is not None:
            monitor = load_monitor(monitor_path, build_judge=False)
        url, api_key = _target(phoenix_url)

        async def read() -> ImportResult:
            async with PhoenixUploader(url, api_key=api_key) as phoenix:
                return await import_corrections(phoenix, cases, monitor)

        result = asyncio.run(read())
        for problem in result.problems:
            print(f"problem: {problem}")
        print(result.summary())
        if result.problems:
            raise typer.Exit(1)


def register(group: typer.Typer) -> None:
    """Add ``export`` and ``import`` to the ``traces`` command group."""
    group.command("export", short_help="Export spans as drafts to review (a queue).")(traces_export)
    group.command("import", short_help="Import the corrections of exported drafts.")(traces_import)
