"""The ``stateval`` command: run suites, rescore runs, manage the embedded Phoenix.

Exit codes (`stateval.cli._common`): 0 the run passed its thresholds, 1 it did not, 2 invalid
input or usage, 3 an infrastructure failure (disk full, Phoenix asked for but not reached, a
crash), 128+n stopped by signal n (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP). Errors print one line
per problem on stderr; ``--debug`` adds the traceback.
Heavy modules (the runner, OpenTelemetry, Phoenix clients) are imported inside the commands so
``stateval --help`` stays fast.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stateval.cli._common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_INFRASTRUCTURE,
    EXIT_PASS,
    EXIT_USAGE,
    DebugOption,
    check_reports,
    errors_to_exit,
    report_console,
    report_options,
    stateval_home,
    stderr_console,
)
from stateval.cli._diff import diff
from stateval.cli._merge import merge
from stateval.cli._model import model_app
from stateval.cli._mutate import mutate
from stateval.cli._phoenix import phoenix_app
from stateval.cli._run import FieldsAsOption, fields_as_mode, run
from stateval.cli._traces import traces_app
from stateval.cli._traces_gold import register as register_traces_gold
from stateval.cli._traces_recall import register as register_traces_recall

if TYPE_CHECKING:
    from rich.console import Console

    from stateval.reports import ReportRequest
    from stateval.run import Journal, PhoenixTarget, RunOutcome, RunSummary

__all__ = ["app", "main"]


app = typer.Typer(
    name="stateval",
    help="Evaluate state mutators per field and report to Arize Phoenix.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: typer 0.29's rich panels print a ``<bool>`` metavar after every flag
    # (``--debug <bool>``, ``--help <bool>``); the plain formatter shows flags bare.
    rich_markup_mode=None,
)
app.add_typer(phoenix_app, name="phoenix")
app.add_typer(model_app, name="model")
register_traces_gold(traces_app)
register_traces_recall(traces_app)
app.add_typer(traces_app, name="traces")


def _resolve_phoenix(
    phoenix_url: str | None, no_phoenix: bool, recorded_url: str | None
) -> PhoenixTarget | None:
    from stateval.upload import resolve_phoenix

    return resolve_phoenix(phoenix_url, no_phoenix, recorded_url, announce=stderr_console().print)


def _finish(summary: RunSummary, reports: tuple[ReportRequest, ...]) -> None:
    """The summary on stdout, then the report files."""
    from stateval.reports import print_summary

    print_summary(summary, report_console())
    for report in reports:
        report.writer.run(summary, report.path)  # whole or not at all (ReportWriteError)


app.command(short_help="Run a suite, scored per field, reported to Phoenix.")(run)
app.command(short_help="Merge the shards of a run into the whole run.")(merge)


@report_options("run")
def rescore(
    run_id: Annotated[
        str,
        typer.Argument(
            metavar="RUN_ID", help="A run id, or 'latest' (of the --suite suite, when given)."
        ),
    ],
    suite_path: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            metavar="SUITE",
            help="Suite whose policies and thresholds to use (default: "
            "the run's own suite file, as it is now); with 'latest', its latest run "
            "(of this file or a suite of the same name).",
        ),
    ] = None,
    reports: tuple[ReportRequest, ...] = (),
    phoenix_url: Annotated[
        str | None,
        typer.Option(metavar="URL", help="Log the rescored run to this Phoenix server."),
    ] = None,
    phoenix: Annotated[
        bool,
        typer.Option(
            "--phoenix",
            help="Log the rescored run to Phoenix even if the run was not (default server).",
        ),
    ] = False,
    no_phoenix: Annotated[
        bool, typer.Option("--no-phoenix", help="Rescore locally only: nothing to Phoenix.")
    ] = False,
    fields_as: FieldsAsOption = None,
    beside: Annotated[
        str | None,
        typer.Option(
            "--with",
            metavar="RUN_ID",
            help="Rescore this run too (the suite's run in the other episode mode) and show "
            "the two side by side.",
        ),
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Score a journaled run again under the suite's current policies and thresholds.

    When the run was logged to Phoenix (or with --phoenix / --phoenix-url), the rescored run
    is logged there too, as a new experiment on the same dataset linked to the same traces.
    """
    if no_phoenix and (phoenix_url or phoenix):
        print("error: --no-phoenix excludes --phoenix and --phoenix-url", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE)
    with errors_to_exit(debug):
        from stateval.cli._progress import UploadWatch
        from stateval.run import Journal, UploadProgress, find_latest
        from stateval.run import rescore as rescore_run
        from stateval.suite import load_suite
        from stateval.upload import rescore_to_phoenix

        check_reports(reports)
        home = stateval_home()
        err = stderr_console()
        if run_id == "latest" and suite_path is not None:
            suite = load_suite(suite_path, load_mutator=False)
            journal = find_latest(home, suite)
        else:
            journal = Journal.open(home, run_id)
            suite = load_suite(suite_path or Path(journal.header.suite_path), load_mutator=False)
            if run_id == "latest":
                _say_which_latest(home, journal, err)
        if suite.cases_hash != journal.header.cases_hash:
            err.print(
                "note: the suite's cases changed since this run; stored post-states "
                "are compared with the current expected states",
                style="yellow",
            )
        recorded = journal.header.phoenix_url
        target = None
        if phoenix_url or phoenix or (recorded and not no_phoenix):
            target = _resolve_phoenix(phoenix_url, no_phoenix, recorded)

        def show(summary: RunSummary) -> None:
            if beside is not None:
                summary = replace(summary, compared=rescore_run(suite, Journal.open(home, beside)))
            _finish(summary, reports)

        if target is None:
            summary = rescore_run(suite, journal)
            show(summary)
        else:
            mode = fields_as_mode(fields_as)
            watch = UploadWatch(err)

            def on_scored(
                summary: RunSummary, uploading: Callable[[], UploadProgress] | None
            ) -> None:
                # the summary at once, then the upload's own progress (as `stateval run`)
                show(summary)
                if uploading is not None and uploading().sent < uploading().total:
                    watch.watch(uploading)

            async def rescored() -> RunOutcome:
                try:
                    return await rescore_to_phoenix(
                        suite, journal, target, fields_as=mode, on_scored=on_scored
                    )
                finally:
                    await watch.stop()

            outcome = asyncio.run(rescored())
            summary = outcome.summary
            upload = outcome.upload
            if upload is not None and (upload.error or upload.pending):
                err.print(
                    f"warning: {upload.pending} case(s) of the rescored run not logged "
                    f"to Phoenix{': ' + upload.error if upload.error else ''}",
                    style="yellow",
                )
                raise typer.Exit(EXIT_INFRASTRUCTURE)
    raise typer.Exit(EXIT_PASS if summary.passed else EXIT_BELOW_THRESHOLD)


app.command(short_help="Score a journaled run again under the current suite.")(rescore)


def _say_which_latest(home: Path, journal: Journal, err: Console) -> None:
    """When runs of several suites are journaled, say which suite ``latest`` picked."""
    from stateval.run import Journal, list_runs

    names = {Journal.open(home, run).header.suite_name for run in list_runs(home)[-50:]}
    if len(names) > 1:
        err.print(
            f"note: rescoring run {journal.run_id} of suite {journal.header.suite_name!r}, the "
            "latest of any suite here; `--suite SUITE` picks the latest run of that suite",
            highlight=False,
        )


@app.command(short_help="Check a suite, its cases and its mutator; run nothing.")
def validate(
    suite_path: Annotated[Path, typer.Argument(metavar="SUITE", help="Suite file (YAML/JSON).")],
    debug: DebugOption = False,
) -> None:
    """Check a suite, its cases and its mutator without running anything.

    It imports the module of mutator.callable and slots.ref to check the names exist (an
    import runs that module's top-level code) and calls nothing: mutator.args is checked as
    data, no mutator or LLM client is built, no server is started, no LLM is called.
    """
    with errors_to_exit(debug):
        from stateval.suite import load_suite

        suite = load_suite(suite_path, check_only=True)
        episodes = "" if suite.episodes is None else f", {len(suite.episodes)} episodes"
        if suite.drafts:
            episodes += f", {len(suite.drafts)} unreviewed drafts left out"
        for line in suite.warnings:
            print(f"warning: {line}", file=sys.stderr)
        print(
            f"{suite.path}: ok ({len(suite.cases)} cases{episodes}, "
            f"mutator {suite.mutator_description})"
        )


@app.command()
def schema(
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write here instead of stdout."),
    ] = None,
) -> None:
    """Print the JSON Schema of suite files (docs/suite-schema.json)."""
    from stateval.suite import suite_json_schema

    text = json.dumps(suite_json_schema(), indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")


app.command("mutate")(mutate)


app.command("diff", short_help="Per-field verdicts of a run against a baseline.")(diff)


def main() -> None:
    """Entry point of the ``stateval`` console script."""
    app()
