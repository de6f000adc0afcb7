"""``stateval run``: parse the options into a `RunRequest`, carry it out, show it, exit.

The run itself (journal, modes, reports, baseline gate) is `stateval.orchestrator.carry_out`,
the same one the pytest plugin uses; this module is the terminal's side of it: progress bars,
notes on stderr, the summary on stdout, the delivery line and the exit code.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
    RunInterrupted,
    check_reports,
    errors_to_exit,
    interrupted_exit_code,
    plain_console,
    report_console,
    report_options,
    run_interruptible,
    stateval_home,
    stderr_console,
)
from stateval.cli._diff import BaselineOption, FailOnRegressionOption, RepeatOption

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from stateval.reports import ReportRequest
    from stateval.run import (
        Journal,
        PhoenixTarget,
        RunHeader,
        RunOutcome,
        RunSummary,
        UploadStatus,
    )
    from stateval.suite import EpisodeMode, FieldsAs, Suite

__all__ = ["FieldsAsOption", "fields_as_mode", "run"]


FieldsAsOption: TypeAlias = Annotated[
    str | None,
    typer.Option(
        metavar="MODE",
        help="Where field scores go in Phoenix: evaluations (one request each), annotations "
        "(span annotations in bulk, per-field means on the experiment), both, or failing "
        "(only the fields that did not pass, as queued span annotations; means on the "
        "experiment) (default: the suite's phoenix.fields_as).",
    ),
]


def fields_as_mode(value: str | None) -> FieldsAs | None:
    """``--fields-as`` checked: None or a name of `stateval.upload.UPLOAD_MODES`."""
    from stateval.errors import StatevalError
    from stateval.upload import UPLOAD_MODES

    if value is None:
        return None
    for mode in UPLOAD_MODES:
        if value == mode:
            return mode
    raise StatevalError(f"--fields-as {value!r}: expected one of {', '.join(UPLOAD_MODES)}")


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


@report_options("run")
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
    reports: tuple[ReportRequest, ...] = (),
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
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            metavar="N",
            help="Split the run into N shards run at once (N processes, or N Ray tasks with "
            "--backend ray), then merged: one summary, one report set, one experiment.",
        ),
    ] = 1,
    backend: Annotated[
        str,
        typer.Option(
            metavar="NAME",
            help="Where the --workers shards run: local (processes on this machine) or ray "
            "(tasks on a Ray cluster; pip install 'stateval[ray]').",
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            metavar="ADDRESS",
            help="The Ray cluster of --backend ray (default: RAY_ADDRESS; a local Ray when unset).",
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
        from stateval.orchestrator import RunRequest, carry_out, forked_parts, undelivered
        from stateval.run import Shard
        from stateval.suite import load_suite

        mode = fields_as_mode(fields_as)
        modes = _episode_modes(episode_mode)
        part = None if shard is None else Shard.parse(shard)
        if shard_group is not None and part is None:
            from stateval.errors import StatevalError

            raise StatevalError("--shard-group needs --shard I/N")
        check_reports(reports)
        home = stateval_home()
        request = RunRequest(
            # the local workers validate the case file side by side (one byte range each)
            suite=load_suite(
                suite_path,
                parts=workers if backend == "local" else 1,
                run_parts=forked_parts,
            ),
            home=home,
            modes=modes,
            limit=limit,
            shard=part,
            shard_group=shard_group,
            repetitions=repeat,
            fields_as=mode,
            baseline=baseline,
            fail_on_regression=fail_on_regression,
            phoenix_url=phoenix_url,
            no_phoenix=no_phoenix,
            concurrency=concurrency,
            resume=resume,
            retry_errors=retry_errors,
            reports=reports,
            workers=workers,
            backend=backend,
            ray_address=ray_address,
        )
        view = TerminalView()
        result = carry_out(request, view)
        upload = result.outcome.upload
        if upload is not None:
            _print_delivery(upload, result.outcome.journal.header)
        if undelivered(upload):
            assert upload is not None
            hint = f"`stateval run {suite_path} --resume`"
            if request.workers > 1 or request.backend != "local":
                hint = f"`stateval run {suite_path} --shard I/N --resume` of each shard"
            view.note(
                f"warning: {upload.pending} case(s) not uploaded to Phoenix"
                f"{f' and {upload.spans_kept} span(s) kept' if upload.spans_kept else ''}"
                f"{': ' + upload.error if upload.error else ''}; {hint} uploads them",
                style="yellow",
            )
            raise typer.Exit(EXIT_INFRASTRUCTURE)
    raise typer.Exit(EXIT_PASS if result.passed else EXIT_BELOW_THRESHOLD)


class TerminalView:
    """`stateval run` on a terminal or in a log: progress bars and notes on stderr, the
    summary on stdout (see `stateval.orchestrator.RunView`)."""

    phoenix_hint = "drop --no-phoenix or give --phoenix-url"

    def __init__(self) -> None:
        self.err = stderr_console()
        self.console = plain_console()

    def note(self, text: str, style: str | None = None) -> None:
        """A note on stderr."""
        self.err.print(text, style=style)

    def summary(self, summary: RunSummary) -> None:
        """The summary on stdout."""
        from stateval.reports import print_summary

        print_summary(summary, report_console())

    def drive(
        self,
        suite: Suite,
        journal: Journal,
        target: PhoenixTarget | None,
        concurrency: int,
        finish: Callable[[RunSummary], None],
    ) -> RunOutcome:
        """Run with a progress bar of the cases; ``finish`` (summary and reports) runs as soon
        as scoring ends, then the upload to Phoenix shows its own progress until it is done."""
        return _run_with_progress(suite, journal, target, concurrency, self.err, finish)

    @contextmanager
    def shards(self, name: str, total: int) -> Iterator[Callable[[int, int], None]]:
        """A progress bar of the cases the ``--workers`` workers have scored, as a single
        run's. It starts (with its refresh thread) at the first count, once the workers are
        forked: a process forked while it has threads may deadlock (Python 3.12 warns)."""
        progress, task = _case_bar(self.err, name, total, 0)

        def shown(scored: int, failed: int) -> None:
            if not progress.live.is_started:
                progress.start()
            progress.update(task, completed=scored, errors=failed)

        try:
            yield shown
        finally:
            if progress.live.is_started:
                progress.stop()


def _run_with_progress(
    suite: Suite,
    journal: Journal,
    target: PhoenixTarget | None,
    concurrency: int,
    err: Console,
    finish: Callable[[RunSummary], None],
) -> RunOutcome:
    from stateval.cli._progress import UploadWatch
    from stateval.run import CaseScore, UploadProgress
    from stateval.upload import run_suite

    total = len(journal.header.case_ids) * journal.header.repetitions
    done = total - len(journal.missing) - len(journal.missing_repetitions)
    progress, task = _case_bar(err, suite.name, total, done)
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


def _case_bar(err: Console, name: str, total: int, done: int) -> tuple[Progress, TaskID]:
    """A progress bar of ``total`` cases (``done`` already) and their errors, on ``err``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description}", markup=False),  # the suite name is text
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[errors]} errors"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    return progress, progress.add_task(name, total=total, completed=done, errors=0)


def _print_delivery(upload: UploadStatus, header: RunHeader) -> None:
    """One line saying what reached Phoenix: cases, evaluations, spans, episodes (with the
    Sessions tab's filter that keeps this run's sessions)."""
    from stateval.upload import session_run

    planned = len(header.case_ids)
    uploaded = planned - upload.pending
    spans = f"; {upload.spans} span(s) delivered"
    if upload.spans_kept:
        spans += f", {upload.spans_kept} kept in the journal for --resume"
    if upload.episodes:
        spans += (
            f"; {upload.episodes} episode(s) scored on their sessions "
            f"({upload.session_annotations} session annotation(s); Sessions tab filter "
            f'for this run: metadata["run"] == "{session_run(header)}")'
        )
    plain_console().print(
        f"Phoenix: {uploaded} of {planned} cases delivered ({upload.runs} run(s) and "
        f"{upload.evaluations} evaluation(s) sent now, {upload.skipped} sent before){spans}",
        soft_wrap=True,
    )
