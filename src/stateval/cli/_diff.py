"""``stateval diff BASE CAND``: per-field verdicts of a candidate run against a baseline, and the
options of the ``--baseline`` gate `stateval run` adds after its summary (the gate itself is
`stateval.orchestrator`'s)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stateval.cli._common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_PASS,
    DebugOption,
    errors_to_exit,
    plain_console,
)

if TYPE_CHECKING:
    from rich.console import Console

    from stateval.regressions import RunColumns, RunDiff, RunResolver, ScoredRun
    from stateval.run import ThresholdResult
    from stateval.suite import RegressionsSpec

__all__ = ["BaselineOption", "FailOnRegressionOption", "RepeatOption", "diff"]

BaselineOption = Annotated[
    str | None,
    typer.Option(
        metavar="RUN|EXPERIMENT",
        help="Compare with this baseline after the run: a run id of the suite ('latest' = "
        "the newest before this one, 'latest~1'...), or a Phoenix experiment id or URL.",
    ),
]
RepeatOption = Annotated[
    int,
    typer.Option(
        min=1,
        metavar="N",
        help="Run every case N times (one Phoenix experiment with N repetitions); prints each "
        "field's mean with a 95% interval and how flaky it is.",
    ),
]
FailOnRegressionOption = Annotated[
    bool,
    typer.Option(
        "--fail-on-regression",
        help="Exit 1 when more fields regress than the suite's thresholds.regressions allows "
        "(default: none).",
    ),
]


def _phoenix_lookup(phoenix_url: str | None) -> tuple[str, str | None]:
    """The server to read experiments from: ``--phoenix-url``, ``PHOENIX_COLLECTOR_ENDPOINT``,
    or the embedded one only when it is already running. A diff reads; it never provisions or
    starts a server (a mistyped run id did)."""
    import os

    from stateval.errors import DiffError
    from stateval.upload import resolve_phoenix

    if phoenix_url is None and not os.environ.get("PHOENIX_COLLECTOR_ENDPOINT"):
        from stateval.server import EmbeddedPhoenix

        if not EmbeddedPhoenix().status().running:
            raise DiffError(
                "not a run id under this stateval home, and no Phoenix server is running to "
                "look for an experiment (give --phoenix-url, or start one: stateval phoenix start)"
            )
    target = resolve_phoenix(phoenix_url, False, None)
    assert target is not None
    return target.url, target.api_key


def diff(
    base: Annotated[
        str,
        typer.Argument(
            metavar="BASE", help="Baseline: run id, latest, latest~N, or Phoenix experiment id/URL."
        ),
    ],
    cand: Annotated[
        str,
        typer.Argument(metavar="CAND", help="Candidate, named the same ways (e.g. latest)."),
    ],
    suite_path: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            metavar="SUITE",
            help="Suite that 'latest' refers to and whose policies score local runs "
            "(default: the suite of the runs named).",
        ),
    ] = None,
    phoenix_url: Annotated[
        str | None,
        typer.Option(metavar="URL", help="Phoenix server of experiment ids given without a URL."),
    ] = None,
    alpha: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            metavar="A",
            help="Significance level after Holm's correction (default: the suite's, else 0.05).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(metavar="N", help="Bootstrap seed.")] = 0,
    resamples: Annotated[
        int, typer.Option(min=100, metavar="N", help="Bootstrap resamples.")
    ] = 2000,
    as_json: Annotated[bool, typer.Option("--json", help="Print the diff as JSON.")] = False,
    as_markdown: Annotated[
        bool, typer.Option("--markdown", help="Print Markdown for a pull-request comment.")
    ] = False,
    report_html: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Also write the diff as a self-contained HTML page."),
    ] = None,
    fail_on_regression: FailOnRegressionOption = False,
    debug: DebugOption = False,
) -> None:
    """Compare a candidate run with a baseline, field by field, case by case.

    Cases pair by case id. Each field gets an exact McNemar verdict (Holm-corrected across
    fields), each run-level metric a paired bootstrap 95% interval; unpaired cases are counted.
    """
    if as_json and as_markdown:
        print("error: --json and --markdown exclude each other", file=sys.stderr)
        raise typer.Exit(2)
    if alpha is not None and not 0 < alpha < 1:
        print(f"error: --alpha must be between 0 and 1 (exclusive), got {alpha}", file=sys.stderr)
        raise typer.Exit(2)
    with errors_to_exit(debug):
        from stateval.regressions import DEFAULT_GATE, RunResolver, gate_result
        from stateval.run import stateval_home

        home = stateval_home()
        resolver = RunResolver(home, suite=suite_path, phoenix=lambda: _phoenix_lookup(phoenix_url))
        base_run = resolver.resolve(base, cand)
        cand_run = resolver.resolve(cand, base)
        for side in (base_run, cand_run):
            if side.unfinished:
                print(
                    f"note: {side.label} is unfinished ({side.unfinished} journaled); the diff "
                    "pairs what it holds (`stateval run SUITE --resume` finishes it)",
                    file=sys.stderr,
                )
        spec = _suite_gate(resolver, base, cand) or DEFAULT_GATE
        result = _diff(base_run, cand_run, spec.alpha if alpha is None else alpha, seed, resamples)
        gate = gate_result(result, spec)
        _emit(result, as_json=as_json, as_markdown=as_markdown, gate=gate)
        if report_html is not None:
            from stateval.reports import diff_html_report

            _write_report(report_html, diff_html_report(result))
    raise typer.Exit(EXIT_BELOW_THRESHOLD if fail_on_regression and not gate.passed else EXIT_PASS)


def _suite_gate(resolver: RunResolver, *names: str) -> RegressionsSpec | None:
    """The ``thresholds.regressions`` block of the suite the local runs belong to (the suite
    the resolver already loaded to score them)."""
    from stateval.errors import StatevalError

    local = [n for n in names if resolver.is_local(n)]
    if not local and resolver.suite is None:
        return None
    try:
        suite = resolver.load(resolver.suite_path(*local))
    except StatevalError:
        return None
    return suite.thresholds.regressions


def _diff(
    base: ScoredRun | RunColumns,
    cand: ScoredRun | RunColumns,
    alpha: float,
    seed: int,
    resamples: int,
) -> RunDiff:
    from stateval.errors import DiffError
    from stateval.regressions import diff_runs

    if not set(base.case_ids) & set(cand.case_ids):
        raise DiffError(f"{base.label} and {cand.label} share no case ids: nothing to compare")
    return diff_runs(base, cand, alpha=alpha, seed=seed, resamples=resamples)


def _emit(
    result: RunDiff, *, as_json: bool, as_markdown: bool, gate: ThresholdResult | None
) -> None:
    if as_json:
        data = result.to_dict()
        if gate is not None:
            data["gate"] = gate.to_dict()
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif as_markdown:
        from stateval.regressions import markdown_diff

        sys.stdout.write(markdown_diff(result))
    else:
        from stateval.regressions import print_diff

        console = plain_console()
        print_diff(result, console)
        if gate is not None:
            _print_gate(gate, console)


def _write_report(path: Path, page: str) -> None:
    from stateval.reports import write_atomically

    write_atomically(path, page)


def _print_gate(gate: ThresholdResult, console: Console) -> None:
    from rich.text import Text

    style = "green" if gate.passed else "bold red"
    console.print(Text(f"regression gate: {gate.describe()}", style=style))
