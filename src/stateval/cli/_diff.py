"""``stateval diff BASE CAND``: per-field verdicts of a candidate run against a baseline, and the
``--baseline`` gate `stateval run` adds after its summary."""

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

    from stateval.regressions import RunDiff, RunResolver, ScoredRun
    from stateval.run import PhoenixTarget, RunOutcome, RunSummary, ThresholdResult
    from stateval.suite import RegressionsSpec, Suite

__all__ = [
    "BaselineOption",
    "FailOnRegressionOption",
    "RepeatOption",
    "after_run",
    "diff",
    "gate_after_run",
    "gate_run",
    "resolve_baseline",
]

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
    from stateval.run import resolve_phoenix

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
        spec = _suite_gate(resolver, base, cand) or DEFAULT_GATE
        result = _diff(base_run, cand_run, spec.alpha if alpha is None else alpha, seed, resamples)
        gate = gate_result(result, spec)
        _emit(result, as_json=as_json, as_markdown=as_markdown, gate=gate)
        if report_html is not None:
            from stateval.reports import diff_html_report

            _write_report(report_html, diff_html_report(result))
    raise typer.Exit(EXIT_BELOW_THRESHOLD if fail_on_regression and not gate.passed else EXIT_PASS)


def _suite_gate(resolver: RunResolver, *names: str) -> RegressionsSpec | None:
    """The ``thresholds.regressions`` block of the suite the local runs belong to."""
    from stateval.errors import StatevalError
    from stateval.suite import load_suite

    local = [n for n in names if resolver.is_local(n)]
    if not local and resolver.suite is None:
        return None
    try:
        suite = load_suite(resolver.suite_path(*local), load_mutator=False)
    except StatevalError:
        return None
    return suite.thresholds.regressions


def _diff(base: ScoredRun, cand: ScoredRun, alpha: float, seed: int, resamples: int) -> RunDiff:
    from stateval.errors import DiffError
    from stateval.regressions import diff_runs

    if not set(base.cases) & set(cand.cases):
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


def gate_run(
    cand: ScoredRun,
    baseline: ScoredRun,
    spec: RegressionsSpec,
    *,
    err: Console,
    console: Console,
    tag: tuple[str, str | None] | None = None,
) -> tuple[RunDiff, ThresholdResult]:
    """Diff a finished run against its baseline and print it after the run's summary.

    Args:
        cand: The run just finished.
        baseline: Its baseline.
        spec: The suite's gate (or the default: no regressed field, alpha 0.05).
        err: Where notes go.
        console: Where the diff goes.
        tag: (server, API key): tag the baseline experiment as its dataset's baseline there.
    """
    from stateval.errors import DiffError
    from stateval.regressions import tag_baseline

    if not set(baseline.cases) & set(cand.cases):
        raise DiffError(f"{baseline.label} shares no case ids with this run: nothing to compare")
    result = _diff(baseline, cand, spec.alpha, 0, 2000)
    from stateval.regressions import gate_result, print_diff

    print_diff(result, console)
    gate = gate_result(result, spec)
    _print_gate(gate, console)
    link = baseline.experiment
    if tag is not None and link is not None and link.phoenix_url == tag[0].rstrip("/"):
        if tag_baseline(link.phoenix_url, link.experiment_id, api_key=tag[1]):
            err.print(f"Phoenix: experiment {link.experiment_id} tagged as the dataset's baseline")
        else:
            err.print("note: this Phoenix server has no experiment tags; baseline not tagged")
    return result, gate


def resolve_baseline(
    name: str, suite_path: Path, home: Path, target: PhoenixTarget | None, exclude: str | None
) -> ScoredRun:
    """The baseline of ``stateval run --baseline NAME``, resolved before the run starts
    (``latest``: the suite's newest run; ``exclude``: a resumed run's own id)."""
    from stateval.errors import DiffError
    from stateval.regressions import RunResolver

    def phoenix() -> tuple[str, str | None]:
        if target is None:
            raise DiffError(
                f"baseline {name}: not a run of {suite_path}; an experiment id needs Phoenix "
                "(drop --no-phoenix or give --phoenix-url)"
            )
        return target.url, target.api_key

    resolver = RunResolver(home, suite=suite_path, phoenix=phoenix, exclude=exclude)
    return resolver.resolve(name)


def after_run(suite: Suite, outcome: RunOutcome, report_json: Path | None) -> ScoredRun:
    """The finished run as a diff side, every repetition included; with ``--repeat``, print
    each field's mean, interval, flakiness and pass^N, and pass^k of the cases and episodes
    (and add them to the JSON report)."""
    from stateval.regressions import (
        ScoredRun,
        experiment_link,
        field_stability,
        print_reliability,
        print_stability,
        reliability,
    )
    from stateval.run import Scoring, journaled_repetitions

    journal = outcome.journal
    link = experiment_link(journal)
    repetitions = journal.header.repetitions
    if repetitions == 1:
        return ScoredRun.from_summary(outcome.summary, experiment=link)
    scores = journaled_repetitions(suite, journal, Scoring.from_suite(suite))
    run = ScoredRun.from_scores(
        f"run {journal.run_id}", scores, experiment=link, suite_name=suite.name
    )
    fields = field_stability(run)
    console = plain_console()
    print_stability(fields, repetitions, console)
    plan = None if suite.episodes is None else suite.episodes.index
    reliable = reliability(run, plan)
    print_reliability(reliable, console)
    if report_json is not None:
        data = json.loads(report_json.read_text(encoding="utf-8"))
        data["repetitions"] = {
            "repetitions": repetitions,
            "fields": [f.to_dict() for f in fields],
            "pass_k": reliable.to_dict(),
        }
        _write_report(report_json, json.dumps(data, indent=2) + "\n")
    return run


def gate_after_run(
    cand: ScoredRun,
    base_run: ScoredRun,
    spec: RegressionsSpec | None,
    target: PhoenixTarget | None,
    err: Console,
    report_json: Path | None,
    markdown: Path | None,
    report_html: Path | None = None,
    summary: RunSummary | None = None,
) -> bool:
    """Print the diff of a finished run against its baseline and add it to the reports (the
    HTML report of ``summary`` is written again with a regression section); True when the gate
    failed."""
    from stateval.regressions import DEFAULT_GATE, markdown_diff

    tag = None if target is None else (target.url, target.api_key)
    result, gate = gate_run(
        cand, base_run, spec or DEFAULT_GATE, err=err, console=plain_console(), tag=tag
    )
    if report_json is not None:
        data = json.loads(report_json.read_text(encoding="utf-8"))
        data["regressions"] = {**result.to_dict(), "gate": gate.to_dict()}
        _write_report(report_json, json.dumps(data, indent=2) + "\n")
    if markdown is not None:
        before = markdown.read_text(encoding="utf-8") if markdown.exists() else ""
        _write_report(markdown, before + "\n" + markdown_diff(result))
    if report_html is not None and summary is not None:
        from stateval.reports import html_report, regression_section

        _write_report(report_html, html_report(summary, sections=[regression_section(result)]))
    return not gate.passed
