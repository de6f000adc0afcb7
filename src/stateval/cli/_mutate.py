"""The ``stateval mutate`` command (a typer command function; ``_app.py`` registers it).

Options left unset take the suite's ``mutation:`` section (see `suite_config`). With
``--phoenix`` or ``--phoenix-url``, the baseline and the survivors (``--phoenix-all``: killed
mutants too) are logged as experiments on the suite's Phoenix dataset (see `log_mutation`).

Exit codes: 0 the mutation score reaches ``--fail-under`` (or none is set), 1 it does not,
2 usage or input error (one line per problem on stderr; ``--debug`` adds the traceback).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from stateval.cli._common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_PASS,
    ConcurrencyOption,
    DebugOption,
    errors_to_exit,
    plain_console,
    report_console,
    report_options,
)

if TYPE_CHECKING:
    from rich.console import Console

    from stateval.mutation import MutantResult, MutationReport
    from stateval.reports import ReportRequest
    from stateval.run import PhoenixTarget
    from stateval.suite import EpisodeMode

__all__ = ["mutate"]


@report_options("mutation")
def mutate(
    suite_path: Annotated[Path, typer.Argument(metavar="SUITE", help="Suite file (YAML/JSON).")],
    operators: Annotated[
        str | None,
        typer.Option(
            metavar="A,B",
            help="Comma-separated operator names (default: the suite's mutation.operators, "
            "else every registered one).",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(metavar="N", help="Seed of the operators' random choices (default 0)."),
    ] = None,
    fail_under: Annotated[
        float | None,
        typer.Option(
            min=0, max=100, metavar="PCT", help="Exit 1 when the mutation score (%) is below this."
        ),
    ] = None,
    reports: tuple[ReportRequest, ...] = (),
    concurrency: ConcurrencyOption = None,
    max_calls: Annotated[
        int | None,
        typer.Option(
            min=0, metavar="N", help="Most paid calls (LLM mutator calls, is_llm evals) to make."
        ),
    ] = None,
    max_mutants: Annotated[
        int | None,
        typer.Option(min=1, metavar="N", help="Evaluate a seeded sample of this many mutants."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Use only the first N cases.")
    ] = None,
    eval_specs: Annotated[
        list[str] | None,
        typer.Option(
            "--eval",
            metavar="EVAL",
            help="An extra eval: a registered name (provenance) or module:attr; replaces the "
            "suite's mutation.evals.",
        ),
    ] = None,
    phoenix: Annotated[
        bool,
        typer.Option(
            "--phoenix",
            help="Log the baseline and survivors as Phoenix experiments (PHOENIX_COLLECTOR_"
            "ENDPOINT, else the embedded server).",
        ),
    ] = False,
    phoenix_url: Annotated[
        str | None,
        typer.Option(
            metavar="URL", help="Log to this Phoenix server (base URL); implies --phoenix."
        ),
    ] = None,
    phoenix_all: Annotated[
        bool,
        typer.Option(
            "--phoenix-all", help="Log killed and equivalent mutants too, not only survivors."
        ),
    ] = False,
    episode_mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            metavar="MODE",
            help="How the suite's episodes run, for the baseline and every mutant: "
            "teacher_forced or free_running (default: the suite's episodes.mode).",
        ),
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Mutation-test a suite: would it notice if the mutator got worse?"""

    with errors_to_exit(debug):
        report, gate = _run(
            suite_path,
            operators=operators,
            seed=seed,
            fail_under=fail_under,
            concurrency=concurrency,
            max_calls=max_calls,
            max_mutants=max_mutants,
            limit=limit,
            mode=_mode(episode_mode),
            eval_specs=eval_specs or None,
            reports=reports,
            phoenix=phoenix or phoenix_url is not None,
            phoenix_url=phoenix_url,
            phoenix_mutants="all" if phoenix_all else "survivors",
        )
    from stateval.reports import print_mutation_report

    print_mutation_report(report, report_console(), fail_under=gate)
    raise typer.Exit(EXIT_PASS if report.passes(gate) else EXIT_BELOW_THRESHOLD)


def _mode(value: str | None) -> EpisodeMode | None:
    """``--mode`` checked: None, ``teacher_forced`` or ``free_running``."""
    from stateval.errors import UsageError

    if value is None:
        return None
    if value == "teacher_forced":
        return "teacher_forced"
    if value == "free_running":
        return "free_running"
    raise UsageError(f"--mode {value!r}: expected teacher_forced or free_running")


def _phoenix_target(phoenix_url: str | None) -> PhoenixTarget:
    """The server ``stateval run`` would report to: ``--phoenix-url``, else
    ``PHOENIX_COLLECTOR_ENDPOINT``, else the embedded one (started if need be)."""
    from stateval.upload import resolve_phoenix

    announce = plain_console(stderr=True).print
    target = resolve_phoenix(phoenix_url, False, None, announce=announce)
    assert target is not None
    return target


def _run(
    suite_path: Path,
    *,
    operators: str | None,
    seed: int | None,
    fail_under: float | None,
    concurrency: int | None,
    max_calls: int | None,
    max_mutants: int | None,
    limit: int | None,
    mode: EpisodeMode | None,
    eval_specs: Sequence[str] | None,
    reports: tuple[ReportRequest, ...],
    phoenix: bool,
    phoenix_url: str | None,
    phoenix_mutants: Literal["survivors", "all"],
) -> tuple[MutationReport, float | None]:
    from stateval.mutation import (
        load_plugins,
        resolve_operators,
        run_mutation,
        suite_config,
        suite_fail_under,
    )
    from stateval.suite import load_suite

    load_plugins()
    if operators is not None:
        resolve_operators(operators)
    suite = load_suite(suite_path)
    config = suite_config(
        suite,
        operators=operators,
        seed=seed,
        evals=eval_specs,
        concurrency=concurrency,
        max_calls=max_calls,
        max_mutants=max_mutants,
        limit=limit,
        mode=mode,
    )
    target = _phoenix_target(phoenix_url) if phoenix else None
    if target is not None:  # Phoenix shows each logged mutant's changed cases: keep them
        config = replace(config, keep_cases=True)
    err = plain_console(stderr=True)
    watch = _Watch(suite.name, err) if err.is_terminal else _ProgressLines(suite.name, err)
    with watch:
        report = asyncio.run(
            run_mutation(suite, config, on_plan=watch.plan, on_mutant=watch.mutant)
        )
    if target is not None:
        from stateval.mutation import log_mutation

        if not err.is_terminal:
            err.print(f"logging to Phoenix at {target.url}", highlight=False)
        with err.status(f"logging to Phoenix at {target.url}"):
            logged = asyncio.run(log_mutation(suite, report, target, mutants=phoenix_mutants))
        report = replace(report, phoenix=logged)
    for wanted in reports:
        write = wanted.writer.mutation
        assert write is not None  # report_options("mutation") offers only formats that have one
        write(report, wanted.path)  # whole or not at all (ReportWriteError)
    return report, suite_fail_under(suite, fail_under)


class _Watch:
    """A progress bar of the mutants decided (on a terminal)."""

    def __init__(self, name: str, console: Console) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[killed]} killed"),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task(f"{name}: mutants", total=None, killed=0)
        self.killed = 0

    def plan(self, total: int) -> None:
        self.progress.update(self.task, total=total)

    def mutant(self, result: MutantResult) -> None:
        self.killed += result.killed
        self.progress.update(self.task, advance=1, killed=self.killed)

    def __enter__(self) -> None:
        self.progress.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.progress.stop()


PROGRESS_EVERY = 15.0
"""Seconds between progress lines when stderr is not a terminal (CI logs)."""


class _ProgressLines:
    """Plain progress lines for logs: the plan, the first mutant, then one line every
    `PROGRESS_EVERY` seconds, and the last one."""

    def __init__(self, name: str, console: Console, every: float = PROGRESS_EVERY) -> None:
        self.name = name
        self.console = console
        self.every = every
        self.total = 0
        self.done = 0
        self.killed = 0
        self.started = time.monotonic()
        self.last = -every

    def _line(self, text: str) -> None:
        elapsed = time.monotonic() - self.started
        self.console.print(f"{self.name}: {text} ({elapsed:.0f} s)", highlight=False)

    def plan(self, total: int) -> None:
        self.total = total
        self._line(f"baseline done; {total} mutants to evaluate")

    def mutant(self, result: MutantResult) -> None:
        self.done += 1
        self.killed += result.killed
        now = time.monotonic()
        if self.done in (1, self.total) or now - self.last >= self.every:
            self.last = now
            self._line(f"mutants {self.done}/{self.total} decided, {self.killed} killed")

    def __enter__(self) -> None:
        self._line("running the baseline")

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None
