"""The ``stateval mutate`` command (a typer command function; ``cli.py`` registers it).

Exit codes: 0 the mutation score reaches ``--fail-under`` (or none is set), 1 it does not,
2 usage or input error (one line per problem on stderr; ``--debug`` adds the traceback).
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from stateval.mutation._evals import Eval
    from stateval.mutation._runner import MutationReport
    from stateval.mutation._score import MutantResult
    from stateval.suite import Suite

__all__ = ["mutate"]

EXIT_PASS, EXIT_BELOW, EXIT_USAGE = 0, 1, 2


def _evals(specs: Sequence[str], suite: Suite) -> list[Eval]:
    from stateval.errors import PluginError
    from stateval.mutation._plugins import EVALS
    from stateval.mutators import load_callable

    out: list[Eval] = []
    for spec in specs:
        if spec in EVALS:
            out.append(EVALS[spec])
        elif ":" in spec:
            fn = load_callable(spec, search_path=[suite.path.parent])
            if not callable(fn):
                raise PluginError(f"--eval {spec}: not callable")
            out.append(fn)
        else:
            known = ", ".join(sorted(EVALS))
            raise PluginError(
                f"--eval {spec}: no eval of that name (known: {known}; or module:attr)"
            )
    return out


def mutate(
    suite_path: Annotated[Path, typer.Argument(metavar="SUITE", help="Suite file (YAML/JSON).")],
    operators: Annotated[
        str | None,
        typer.Option(help="Comma-separated operator names (default: every registered one)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the operators' random choices.")] = 0,
    fail_under: Annotated[
        float | None,
        typer.Option(min=0, max=100, help="Exit 1 when the mutation score (%) is below this."),
    ] = None,
    junit: Annotated[Path | None, typer.Option(help="Write a JUnit XML report here.")] = None,
    report_json: Annotated[Path | None, typer.Option(help="Write a JSON report here.")] = None,
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Mutator calls at once (default: the suite's).")
    ] = None,
    max_calls: Annotated[
        int | None,
        typer.Option(min=0, help="Most paid calls (LLM mutator calls, is_llm evals) to make."),
    ] = None,
    max_mutants: Annotated[
        int | None, typer.Option(min=1, help="Evaluate a seeded sample of this many mutants.")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Use only the first N cases.")] = None,
    eval_specs: Annotated[
        list[str] | None,
        typer.Option(
            "--eval", help="An extra eval: a registered name (provenance) or module:attr."
        ),
    ] = None,
    debug: Annotated[bool, typer.Option(help="Show tracebacks.")] = False,
) -> None:
    """Mutation-test a suite: would it notice if the mutator got worse?"""
    from rich.console import Console

    from stateval.errors import StatevalError

    try:
        report = _run(
            suite_path,
            operators=operators,
            seed=seed,
            concurrency=concurrency,
            max_calls=max_calls,
            max_mutants=max_mutants,
            limit=limit,
            eval_specs=eval_specs or [],
            junit=junit,
            report_json=report_json,
        )
    except StatevalError as exc:
        if debug:
            traceback.print_exc()
        for line in str(exc).splitlines() or [type(exc).__name__]:
            print(f"error: {line}", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE) from None
    from stateval.mutation._report import print_mutation_report

    print_mutation_report(report, Console(highlight=False), fail_under=fail_under)
    raise typer.Exit(EXIT_PASS if report.passes(fail_under) else EXIT_BELOW)


def _run(
    suite_path: Path,
    *,
    operators: str | None,
    seed: int,
    concurrency: int | None,
    max_calls: int | None,
    max_mutants: int | None,
    limit: int | None,
    eval_specs: Sequence[str],
    junit: Path | None,
    report_json: Path | None,
) -> MutationReport:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from stateval.errors import StatevalError
    from stateval.mutation._plugins import load_plugins, resolve_operators
    from stateval.mutation._report import write_mutation_json, write_mutation_junit
    from stateval.mutation._runner import MutationConfig, run_mutation
    from stateval.suite import load_suite

    load_plugins()
    resolve_operators(operators)
    suite = load_suite(suite_path)
    config = MutationConfig(
        operators=operators,
        seed=seed,
        evals=_evals(eval_specs, suite),
        concurrency=concurrency or suite.model.concurrency,
        max_calls=max_calls,
        max_mutants=max_mutants,
        limit=limit,
    )
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[killed]} killed"),
        console=Console(stderr=True),
        transient=True,
    )
    task = progress.add_task(f"{suite.name}: mutants", total=None, killed=0)
    killed = [0]

    def on_mutant(result: MutantResult) -> None:
        killed[0] += result.killed
        progress.update(task, advance=1, killed=killed[0])

    with progress:
        report = asyncio.run(
            run_mutation(
                suite,
                config,
                on_plan=lambda n: progress.update(task, total=n),
                on_mutant=on_mutant,
            )
        )
    for path, write in ((junit, write_mutation_junit), (report_json, write_mutation_json)):
        if path is not None:
            try:
                write(report, path)
            except OSError as exc:
                raise StatevalError(f"cannot write report {path}: {exc.strerror}") from exc
    return report
