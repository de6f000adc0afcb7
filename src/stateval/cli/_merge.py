"""``stateval merge RUN...``: the shards of a run (``stateval run --shard I/N``) reduced to the
whole run: one summary, one set of reports, the regression gate and the exit code of a single
run of the suite."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stateval.cli._common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_PASS,
    DebugOption,
    check_reports,
    errors_to_exit,
    report_options,
    stateval_home,
)
from stateval.cli._diff import BaselineOption, FailOnRegressionOption

if TYPE_CHECKING:
    from stateval.reports import ReportRequest

__all__ = ["merge"]


@report_options("run")
def merge(
    runs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN...",
            help="The shards' runs: run ids under STATEVAL_HOME, or run folders (or their "
            "journal.jsonl) copied from the machines that ran them.",
        ),
    ],
    suite_path: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            metavar="SUITE",
            help="The suite the shards ran (default: the suite file their journals name); it "
            "must be unchanged since.",
        ),
    ] = None,
    reports: tuple[ReportRequest, ...] = (),
    phoenix_url: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="The Phoenix server the shards reported to (default: the one they recorded).",
        ),
    ] = None,
    no_phoenix: Annotated[
        bool,
        typer.Option("--no-phoenix", help="Store nothing in Phoenix (the merged figures)."),
    ] = False,
    baseline: BaselineOption = None,
    fail_on_regression: FailOnRegressionOption = False,
    debug: DebugOption = False,
) -> None:
    """Merge the shards of a run into the whole run: its summary, reports, gate and exit code.

    Every figure, interval, calibration and episode metric is the one a single process would
    report for the same cases; the merged run is journaled like any run (diff it, rescore it,
    use it as a baseline). Shards of different suites, cases, modes or repetitions, missing or
    duplicate shards, and unfinished shards are refused.
    """
    with errors_to_exit(debug):
        from stateval.cli._run import TerminalView
        from stateval.errors import JournalError
        from stateval.orchestrator import RunRequest, merge_runs
        from stateval.run import open_run
        from stateval.suite import load_suite

        check_reports(reports)
        home = stateval_home()
        shards = [open_run(home, ref) for ref in runs]
        path = suite_path or Path(shards[0].header.suite_path)
        suite = load_suite(path, load_mutator=False)
        header = shards[0].header
        if (suite.suite_hash, suite.cases_hash) != (header.suite_hash, header.cases_hash):
            raise JournalError(
                f"{path} changed since run {header.run_id} ran (its suite or cases differ): "
                "merge under the suite as the shards ran it"
            )
        request = RunRequest(
            suite=suite,
            home=home,
            baseline=baseline,
            fail_on_regression=fail_on_regression,
            phoenix_url=phoenix_url,
            no_phoenix=no_phoenix,
            reports=reports,
        )
        result = merge_runs(request, shards, TerminalView())
    raise typer.Exit(EXIT_PASS if result.passed else EXIT_BELOW_THRESHOLD)
