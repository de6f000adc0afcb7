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
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeAlias

import typer

from stateval.cli._common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_INFRASTRUCTURE,
    EXIT_PASS,
    EXIT_USAGE,
    ConcurrencyOption,
    DebugOption,
    JunitOption,
    MarkdownOption,
    ReportHtmlOption,
    ReportJsonOption,
    RunInterrupted,
    errors_to_exit,
    interrupted_exit_code,
    plain_console,
    report_console,
    run_interruptible,
)
from stateval.cli._diff import (
    BaselineOption,
    FailOnRegressionOption,
    RepeatOption,
    after_run,
    diff,
    gate_after_run,
    resolve_baseline,
)
from stateval.cli._model import model_app
from stateval.cli._mutate import mutate
from stateval.cli._phoenix import phoenix_app
from stateval.cli._traces import traces_app
from stateval.cli._traces_gold import register as register_traces_gold
from stateval.cli._traces_recall import register as register_traces_recall

if TYPE_CHECKING:
    from rich.console import Console

    from stateval.run import Journal, PhoenixTarget, RunOutcome, RunSummary, UploadStatus
    from stateval.suite import EpisodeMode, FieldsAs, Suite

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


def _home() -> Path:
    from stateval.run import stateval_home

    return stateval_home()


def _stderr() -> Console:
    console = plain_console(stderr=True)
    # in a log, a warning stays one line (its URL and command whole) instead of wrapping at 80
    return console if console.is_terminal else plain_console(stderr=True, soft_wrap=True)


def _write_reports(
    summary: RunSummary,
    report_json: Path | None,
    junit: Path | None,
    markdown: Path | None,
    report_html: Path | None = None,
) -> None:
    from stateval.reports import (
        write_html_report,
        write_json_report,
        write_junit_report,
        write_markdown_report,
    )

    for path, write in (
        (report_json, write_json_report),
        (junit, write_junit_report),
        (markdown, write_markdown_report),
        (report_html, write_html_report),
    ):
        if path is not None:
            write(summary, path)  # whole or not at all; ReportWriteError (exit 3) when it cannot


FieldsAsOption: TypeAlias = Annotated[
    str | None,
    typer.Option(
        metavar="MODE",
        help="Where field scores go in Phoenix: evaluations (one request each), annotations "
        "(span annotations in bulk, per-field means on the experiment) or both "
        "(default: the suite's phoenix.fields_as).",
    ),
]


def _fields_as(value: str | None) -> FieldsAs | None:
    from stateval.errors import StatevalError

    if value is None:
        return None
    for mode in ("evaluations", "annotations", "both"):
        if value == mode:
            return mode
    raise StatevalError(f"--fields-as {value!r}: expected one of evaluations, annotations, both")


ModeOption: TypeAlias = Annotated[
    str | None,
    typer.Option(
        "--mode",
        metavar="MODE",
        help="How episodes run: teacher_forced (each turn from its gold pre-state), "
        "free_running (from the mutator's own post-state of the turn before) or both (two "
        "runs, summarised side by side); default: the suite's episodes.mode.",
    ),
]


def _episode_modes(value: str | None) -> tuple[EpisodeMode | None, ...]:
    """The runs ``--mode`` asks for, teacher-forced first (None: the suite's own mode)."""
    from stateval.errors import StatevalError

    if value is None:
        return (None,)
    if value == "both":
        return ("teacher_forced", "free_running")
    if value == "teacher_forced":
        return ("teacher_forced",)
    if value == "free_running":
        return ("free_running",)
    raise StatevalError(f"--mode {value!r}: expected one of teacher_forced, free_running, both")


def _resolve_phoenix(
    phoenix_url: str | None, no_phoenix: bool, recorded_url: str | None
) -> PhoenixTarget | None:
    from stateval.run import resolve_phoenix

    return resolve_phoenix(phoenix_url, no_phoenix, recorded_url, announce=_stderr().print)


@app.command(short_help="Run a suite, scored per field, reported to Phoenix.")
def run(
    suite_path: Annotated[Path, typer.Argument(metavar="SUITE", help="Suite file (YAML/JSON).")],
    concurrency: ConcurrencyOption = None,
    limit: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Run only the first N cases.")
    ] = None,
    phoenix_url: Annotated[
        str | None, typer.Option(metavar="URL", help="Report to this Phoenix server (base URL).")
    ] = None,
    no_phoenix: Annotated[
        bool, typer.Option("--no-phoenix", help="Run locally only: no Phoenix.")
    ] = False,
    report_json: ReportJsonOption = None,
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
    report_html: ReportHtmlOption = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Finish the suite's latest run: missing cases and uploads (a failed case "
            "stays failed).",
        ),
    ] = False,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors",
            help="With --resume: run the cases that failed again too (their new results "
            "replace the failures, in the journal and in Phoenix).",
        ),
    ] = False,
    fields_as: FieldsAsOption = None,
    shard: Annotated[
        str | None,
        typer.Option(
            metavar="I/N",
            help="Run only shard I of N (a stable hash of each case id), into the one "
            "experiment all N shards share.",
        ),
    ] = None,
    shard_group: Annotated[
        str | None,
        typer.Option(
            metavar="KEY",
            help="Names the run the shards share (default: from the suite, its cases, the git "
            "commit, --limit and N); give a new one to run the same shards again.",
        ),
    ] = None,
    repeat: RepeatOption = 1,
    baseline: BaselineOption = None,
    fail_on_regression: FailOnRegressionOption = False,
    episode_mode: ModeOption = None,
    debug: DebugOption = False,
) -> None:
    """Run a suite: every case through the mutator, scored per field, reported to Phoenix.

    With --baseline (or the suite's thresholds.regressions.baseline), the run is compared with
    the baseline field by field after the summary; --fail-on-regression, or a
    thresholds.regressions block, makes regressed fields fail the run. With episodes,
    --mode both runs the suite teacher-forced, then free-running, and shows them side by side.
    """
    if phoenix_url and no_phoenix:
        print("error: --phoenix-url and --no-phoenix exclude each other", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE)
    if retry_errors and not resume:
        print("error: --retry-errors needs --resume", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE)
    with errors_to_exit(debug):
        from stateval.run import Shard, find_resumable, start_journal
        from stateval.suite import load_suite

        mode = _fields_as(fields_as)
        *before, episode_run = _episode_modes(episode_mode)
        part = None if shard is None else Shard.parse(shard)
        if shard_group is not None and part is None:
            from stateval.errors import StatevalError

            raise StatevalError("--shard-group needs --shard I/N")
        _check_html(report_html)
        home = _home()
        suite = load_suite(suite_path)
        err = _stderr()
        if suite.drafts:
            err.print(
                f"{len(suite.drafts)} unreviewed drafts left out (no expected_post_state yet; "
                "see docs/traces.md, From traces to a suite)"
            )
        recorded: str | None = None
        if resume:
            journal = find_resumable(home, suite, part, episode_run)
            if limit is not None:
                err.print("--limit is ignored with --resume (the run keeps its planned cases)")
            if mode is not None and mode != journal.header.fields_as:
                err.print(
                    f"--fields-as is ignored with --resume (the run keeps "
                    f"{journal.header.fields_as})"
                )
            if repeat != 1:
                err.print("--repeat is ignored with --resume (the run keeps its repetitions)")
            recorded = journal.header.phoenix_url if not no_phoenix else None
            retried = journal.retry_errors() if retry_errors else []
            err.print(
                f"Resuming run {journal.run_id}: {len(journal.missing)} of "
                f"{len(journal.header.case_ids)} cases left to run"
                + (f" ({len(retried)} failed, run again)" if retry_errors else "")
            )
        target = _resolve_phoenix(phoenix_url, no_phoenix, recorded)
        gate_spec = suite.thresholds.regressions
        baseline = baseline or (gate_spec.baseline if gate_spec is not None else None)
        base_run = None
        if baseline is not None:
            base_run = resolve_baseline(
                baseline, suite.path, home, target, journal.run_id if resume else None
            )
        if not resume:
            journal = start_journal(
                home,
                suite,
                limit=limit,
                phoenix_url=None if target is None else target.url,
                shard=part,
                shared_run=shard_group,
                fields_as=mode,
                repetitions=repeat,
                mode=episode_run,
            )
        compared: RunSummary | None = None
        for other_mode in before:  # --mode both: the teacher-forced run first, shown beside
            if resume:
                other = find_resumable(home, suite, part, other_mode)
            else:
                other = start_journal(
                    home,
                    suite,
                    limit=limit,
                    phoenix_url=None if target is None else target.url,
                    shard=part,
                    fields_as=mode,
                    mode=other_mode,
                )
            err.print(f"Run {other.run_id}: {other_mode}")
            first = _run_with_progress(
                suite, other, target, concurrency or suite.model.concurrency, err, lambda _: None
            )
            compared = first.summary
            _warn_undelivered(first.upload, suite_path, err)
            err.print(f"Run {journal.run_id}: {journal.header.mode}")
        if not resume and part is not None:
            err.print(
                f"Shard {part}: {len(journal.header.case_ids)} of "
                f"{len(suite.cases if limit is None else suite.cases[:limit])} cases "
                f"(shared run {journal.header.shared_run})"
            )
        outcome = _run_with_progress(
            suite,
            journal,
            target,
            concurrency or suite.model.concurrency,
            err,
            lambda summary: _finish(
                replace(summary, compared=compared), report_json, junit, markdown, report_html
            ),
        )
        gate_failed = False
        if base_run is not None or journal.header.repetitions > 1:
            # Scores every case again: only for the gate and --repeat's stability table.
            cand = after_run(suite, outcome, report_json)
        if base_run is not None:
            gate_failed = gate_after_run(
                cand,
                base_run,
                gate_spec,
                target,
                err,
                report_json,
                markdown,
                report_html,
                outcome.summary,
            ) and (fail_on_regression or gate_spec is not None)
        elif fail_on_regression:
            err.print(
                "note: --fail-on-regression without a baseline checks nothing", style="yellow"
            )
        upload = outcome.upload
        if upload is not None:
            _print_delivery(upload, len(journal.header.case_ids))
        if upload is not None and (upload.error or upload.pending or upload.spans_kept):
            err.print(
                f"warning: {upload.pending} case(s) not uploaded to Phoenix"
                f"{f' and {upload.spans_kept} span(s) kept' if upload.spans_kept else ''}"
                f"{': ' + upload.error if upload.error else ''}; "
                f"`stateval run {suite_path} --resume` uploads them",
                style="yellow",
            )
            raise typer.Exit(EXIT_INFRASTRUCTURE)
    passed = outcome.summary.passed and not gate_failed
    passed = passed and (compared is None or compared.passed)
    raise typer.Exit(EXIT_PASS if passed else EXIT_BELOW_THRESHOLD)


def _warn_undelivered(upload: UploadStatus | None, suite_path: Path, err: Console) -> None:
    """Say what of a run did not reach Phoenix (the run goes on)."""
    if upload is not None and (upload.error or upload.pending or upload.spans_kept):
        err.print(
            f"warning: {upload.pending} case(s) not uploaded to Phoenix"
            f"{': ' + upload.error if upload.error else ''}; "
            f"`stateval run {suite_path} --resume` uploads them",
            style="yellow",
        )


def _run_with_progress(
    suite: Suite,
    journal: Journal,
    target: PhoenixTarget | None,
    concurrency: int,
    err: Console,
    finish: Callable[[RunSummary], None],
) -> RunOutcome:
    """Run with a progress bar of the cases; ``finish`` (summary and reports) runs as soon as
    scoring ends, then the upload to Phoenix shows its own progress until it is done."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from stateval.cli._progress import UploadWatch
    from stateval.run import CaseScore, UploadProgress, run_suite

    total = len(journal.header.case_ids) * journal.header.repetitions
    done = total - len(journal.missing) - len(journal.missing_repetitions)
    progress = Progress(
        TextColumn("{task.description}", markup=False),  # the suite name is text
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[errors]} errors"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    task = progress.add_task(suite.name, total=total, completed=done, errors=0)
    errors = [0]

    def on_case(score: CaseScore) -> None:
        errors[0] += not score.ok
        progress.update(task, advance=1, errors=errors[0])

    watch = UploadWatch(err)
    upload: list[Callable[[], UploadProgress]] = []

    def on_scored(summary: RunSummary, uploading: Callable[[], UploadProgress] | None) -> None:
        progress.stop()
        finish(summary)
        if uploading is not None and uploading().sent < uploading().total:
            upload.append(uploading)
            watch.watch(uploading)

    async def run() -> RunOutcome:
        try:
            return await run_suite(
                suite,
                journal,
                concurrency=concurrency,
                phoenix=target,
                on_case=on_case,
                on_scored=on_scored,
            )
        finally:
            await watch.stop()

    try:
        with progress:
            outcome = run_interruptible(run())
    except RunInterrupted as stop:
        name = signal.Signals(stop.signum).name
        if upload:
            p = upload[0]()
            err.print(
                f"interrupted ({name}): {p.sent:,} of {p.total:,} scores are in Phoenix; "
                f"`stateval run {suite.path} --resume` uploads the rest"
            )
        else:
            left = len(journal.missing)
            err.print(
                f"interrupted: {total - left} of {total} cases are journaled in run "
                f"{journal.run_id} ({name}); `stateval run {suite.path} --resume` finishes it"
            )
        raise typer.Exit(interrupted_exit_code(stop.signum)) from None
    return outcome


def _check_html(report_html: Path | None) -> None:
    """Fail before any work when an HTML report is asked for but cannot be drawn."""
    if report_html is not None:
        from stateval.reports import require_charts

        require_charts()


def _print_delivery(upload: UploadStatus, planned: int) -> None:
    """One line saying what reached Phoenix: cases, evaluations, spans."""
    uploaded = planned - upload.pending
    spans = f"; {upload.spans} span(s) delivered"
    if upload.spans_kept:
        spans += f", {upload.spans_kept} kept in the journal for --resume"
    if upload.episodes:
        spans += (
            f"; {upload.episodes} episode(s) scored on their sessions "
            f"({upload.session_annotations} session annotation(s))"
        )
    plain_console().print(
        f"Phoenix: {uploaded} of {planned} cases delivered ({upload.runs} run(s) and "
        f"{upload.evaluations} evaluation(s) sent now, {upload.skipped} sent before){spans}",
        soft_wrap=True,
    )


def _finish(
    summary: RunSummary,
    report_json: Path | None,
    junit: Path | None,
    markdown: Path | None,
    report_html: Path | None = None,
) -> None:
    from stateval.reports import print_summary

    print_summary(summary, report_console())
    _write_reports(summary, report_json, junit, markdown, report_html)


@app.command(short_help="Score a journaled run again under the current suite.")
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
    report_json: ReportJsonOption = None,
    junit: JunitOption = None,
    markdown: MarkdownOption = None,
    report_html: ReportHtmlOption = None,
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
        from stateval.run import Journal, UploadProgress, find_latest, rescore_to_phoenix
        from stateval.run import rescore as rescore_run
        from stateval.suite import load_suite

        _check_html(report_html)
        home = _home()
        err = _stderr()
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
            _finish(summary, report_json, junit, markdown, report_html)

        if target is None:
            summary = rescore_run(suite, journal)
            show(summary)
        else:
            mode = _fields_as(fields_as)
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
