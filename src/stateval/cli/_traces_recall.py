"""``stateval traces mutate`` and ``stateval traces rates``: a monitor measuring itself.

``mutate``: a seeded sample of the monitor's production calls is degraded with stateval's state
operators and the monitor's checks run on every mutant and on the originals (`stateval.traces
.measure_recall`): how much the checks miss. ``rates``: per field, the flags on every span of a
window corrected by the reviewed cases of an exported case file (`stateval.traces.RateTally`):
the production error rate with an interval, beside the flag rate and the human-only estimate.
`register` adds both to the ``traces`` command group.

Exit codes: 0, or 1 when the pooled recall is below ``--fail-under`` (``mutate``); 2 for a
mistake in the monitor file, the case file or the options; 3 when Phoenix cannot be reached.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeAlias

import typer

from stateval.cli._common import (
    EXIT_BELOW_THRESHOLD,
    DebugOption,
    ReportJsonOption,
    errors_to_exit,
    plain_console,
    report_console,
)

if TYPE_CHECKING:
    from rich.console import Console

    from stateval.calibration import RateEstimate
    from stateval.traces import CallSample, FieldRates, MonitorRecall, RateTally, RecallTally

__all__ = ["register", "traces_mutate", "traces_rates"]

_Since: TypeAlias = Annotated[
    str | None,
    typer.Option(
        metavar="TIME", help="Spans started at or after (ISO 8601, or 30m / 2h / 7d ago)."
    ),
]
_Until: TypeAlias = Annotated[
    str | None, typer.Option(metavar="TIME", help="Spans started before (ISO 8601, or 2h ago).")
]
_PhoenixUrl: TypeAlias = Annotated[
    str | None, typer.Option(metavar="URL", help="The Phoenix server (base URL).")
]
_Markdown: TypeAlias = Annotated[
    Path | None, typer.Option(metavar="FILE", help="Write a Markdown report here.")
]
_Publish: TypeAlias = Annotated[
    bool,
    typer.Option(
        "--publish/--no-publish",
        help="Record the figures in the monitored project: a span with them as annotations.",
    ),
]


def _deliver(
    report: dict[str, object],
    report_json: Path | None,
    markdown: tuple[Path | None, str],
    publish: bool,
    target: tuple[str, str | None],
    *,
    project: str,
    span_name: str,
    annotations: list[tuple[str, float | None, str, str]],
) -> None:
    """Write the JSON report (atomically) and record the figures in the monitored project."""
    from stateval.cli._common import run_interruptible
    from stateval.reports import write_atomically
    from stateval.traces import PublishedFigures, publish_figures
    from stateval.upload import PhoenixUploader

    if report_json is not None:
        write_atomically(report_json, json.dumps(report, indent=2) + "\n")
    if markdown[0] is not None:
        write_atomically(markdown[0], markdown[1])
    if not publish:
        return
    url, api_key = target

    async def send() -> PublishedFigures:
        async with PhoenixUploader(url, api_key=api_key) as phoenix:
            return await publish_figures(
                phoenix,
                project=project,
                span_name=span_name,
                monitor=str(report["monitor"]),
                report=report,
                annotations=annotations,
                api_key=api_key,
            )

    published = run_interruptible(send())
    plain_console(stderr=True).print(
        f"figures in Phoenix: span {published.span_id} ({span_name}) of project {project!r}, "
        f"{published.annotations} annotations: {url.rstrip('/')}/redirects/spans/"
        f"{published.span_id}"
    )


def _percent(tally: RecallTally) -> tuple[str, str]:
    if tally.recall is None or tally.interval is None:
        return "not measurable", "no mutant applied"
    low, high = tally.interval
    return f"{tally.recall:.1%}", f"{low:.1%} - {high:.1%}"


def pooled(recall: MonitorRecall) -> RecallTally:
    """Every operator's mutants together."""
    from stateval.traces import RecallTally

    total = RecallTally()
    for tally in recall.operators.values():
        total.applied += tally.applied
        total.caught += tally.caught
    return total


def render_recall(console: Console, recall: MonitorRecall, sample: CallSample) -> None:
    """The terminal report: recall per operator and check, the flag rate, the survivors."""
    from rich.table import Table

    rate = recall.original_flag_rate
    console.print(
        f"{recall.calls} calls sampled of {sample.read} spans read"
        f" ({sample.unmapped} not mutator calls); flag rate on the originals: "
        + ("not measurable (no field checked)" if rate is None else f"{rate:.1%}")
        + f" of {recall.fields_checked} checked fields"
    )
    operators = Table(title="recall per operator (mutants caught / applied)", title_justify="left")
    for column in ("operator", "applied", "caught", "recall", "95% interval"):
        operators.add_column(column, justify="left" if column == "operator" else "right")
    for name, tally in sorted(
        recall.operators.items(), key=lambda kv: (kv[1].recall is None, kv[1].recall or 0.0)
    ):
        operators.add_row(name, str(tally.applied), str(tally.caught), *_percent(tally))
    operators.add_row(
        "all", str(pooled(recall).applied), str(pooled(recall).caught), *_percent(pooled(recall))
    )
    console.print(operators)
    checks = Table(title="recall per check (mutants it caught / applied)", title_justify="left")
    for column in ("check", "caught", "recall", "95% interval"):
        checks.add_column(column, justify="left" if column == "check" else "right")
    for name, tally in recall.checks.items():
        checks.add_row(name, str(tally.caught), *_percent(tally))
    console.print(checks)
    if not recall.survivors:
        console.print("no survivors: every kind of mutant was caught at least once")
        return
    console.print(f"survivors ({len(recall.survivors)}), most applied first:")
    for survivor in recall.survivors[:15]:
        console.print(
            f"  {survivor.operator} on {survivor.path} ({survivor.applied} calls): "
            f"{survivor.suggestion}"
        )
    if len(recall.survivors) > 15:
        console.print(f"  ... {len(recall.survivors) - 15} more in the JSON report")


def traces_mutate(
    monitor_path: Annotated[Path, typer.Argument(metavar="MONITOR", help="Monitor file.")],
    sample: Annotated[
        int, typer.Option(min=1, metavar="N", help="How many calls to sample.")
    ] = 200,
    seed: Annotated[int, typer.Option(metavar="S", help="The sample's and operators' seed.")] = 0,
    operators: Annotated[
        str | None,
        typer.Option(
            metavar="A,B",
            help="Comma-separated state operators (default: the value "
            "changes a person would call wrong; see docs/traces.md).",
        ),
    ] = None,
    since: _Since = None,
    until: _Until = None,
    fail_under: Annotated[
        float | None,
        typer.Option(
            min=0.0, max=1.0, metavar="R", help="Exit 1 when the pooled recall is below R."
        ),
    ] = None,
    report_json: ReportJsonOption = None,
    markdown: _Markdown = None,
    phoenix_url: _PhoenixUrl = None,
    publish: _Publish = True,
    debug: DebugOption = False,
) -> None:
    """Measure how much the monitor's checks miss: recall on state mutants of sampled calls."""
    with errors_to_exit(debug):
        from stateval.cli._common import run_interruptible
        from stateval.cli._traces import _moment
        from stateval.cli._traces_gold import _target
        from stateval.errors import StatevalError
        from stateval.reports import recall_markdown
        from stateval.suite import load_monitor
        from stateval.traces import (
            DEFAULT_OPERATORS,
            RECALL_SPAN,
            NoGoldChecks,
            SpanWindow,
            measure_recall,
            recall_annotations,
            sample_calls,
        )
        from stateval.upload import PhoenixUploader

        monitor = load_monitor(monitor_path, build_judge=False)
        names = (
            DEFAULT_OPERATORS
            if operators is None
            else tuple(name.strip() for name in operators.split(",") if name.strip())
        )
        window = SpanWindow(
            None if since is None else _moment(since, "--since"),
            None if until is None else _moment(until, "--until"),
        )
        url, api_key = _target(phoenix_url)

        async def read() -> CallSample:
            async with PhoenixUploader(url, api_key=api_key) as phoenix:
                return await sample_calls(phoenix, monitor.traces, window, sample, seed)

        drawn = run_interruptible(read())
        if not drawn.calls:
            raise StatevalError(
                f"{monitor_path}: no mutator call to sample in project "
                f"{monitor.traces.project!r} ({drawn.read} spans read, {drawn.unmapped} unmapped)"
            )
        try:
            recall = measure_recall(
                drawn.calls, NoGoldChecks.of(monitor), operators=names, seed=seed
            )
        except ValueError as exc:
            raise StatevalError(f"--operators: {exc}") from None
        render_recall(report_console(), recall, drawn)
        _deliver(
            {"monitor": monitor.name, "seed": seed, **recall.to_dict()},
            report_json,
            (markdown, recall_markdown(monitor.name, recall) if markdown else ""),
            publish,
            (url, api_key),
            project=monitor.traces.project,
            span_name=RECALL_SPAN,
            annotations=recall_annotations(recall),
        )
        total = pooled(recall)
        if fail_under is not None and (total.recall is None or total.recall < fail_under):
            shown = "not measurable" if total.recall is None else f"{total.recall:.1%}"
            plain_console(stderr=True).print(
                f"pooled recall {shown} is below --fail-under {fail_under:.1%}"
            )
            raise typer.Exit(EXIT_BELOW_THRESHOLD)


def _estimate(rate: RateEstimate) -> str:
    if rate.estimate is None:
        return f"not measurable: {rate.reason}"
    if rate.low is None or rate.high is None:
        return f"{rate.estimate:.1%}"
    return f"{rate.estimate:.1%} ({rate.low:.1%} - {rate.high:.1%})"


def render_rates(console: Console, rates: list[FieldRates], tally: RateTally) -> None:
    """The terminal report of `traces_rates`: per field, worst first."""
    from rich.table import Table

    console.print(
        f"{tally.calls} spans checked; {len(tally.reviewed)} reviewed cases"
        + (f", {tally.unreviewed} drafts not reviewed" if tally.unreviewed else "")
    )
    if tally.unreviewed:
        console.print(
            "note: the estimates assume the reviewed cases are a random sample of the spans; "
            "a review queue worked through part of the way is not one"
        )
    table = Table(title="error rate per field, worst first (95% intervals)", title_justify="left")
    for column in ("field", "flag rate", "humans alone", "flags corrected by humans"):
        table.add_column(column, justify="left" if column == "field" else "right")
    for field in rates:
        r = field.rates
        table.add_row(
            field.path, _estimate(r.flag_rate), _estimate(r.human), _estimate(r.corrected)
        )
    console.print(table)


def traces_rates(
    monitor_path: Annotated[Path, typer.Argument(metavar="MONITOR", help="Monitor file.")],
    cases: Annotated[
        Path,
        typer.Option(
            metavar="FILE",
            help="The case file `traces export` wrote and `traces import` filled with reviews.",
        ),
    ],
    since: _Since = None,
    until: _Until = None,
    report_json: ReportJsonOption = None,
    markdown: _Markdown = None,
    phoenix_url: _PhoenixUrl = None,
    publish: _Publish = True,
    debug: DebugOption = False,
) -> None:
    """Estimate each field's production error rate: the monitor's flags on every span,
    corrected by the reviewed cases (prediction-powered inference; docs/traces.md)."""
    with errors_to_exit(debug):
        from stateval.cli._common import run_interruptible
        from stateval.cli._traces import _moment
        from stateval.cli._traces_gold import _target
        from stateval.errors import StatevalError
        from stateval.reports import rates_markdown
        from stateval.suite import load_monitor
        from stateval.traces import (
            RATES_SPAN,
            MappedCall,
            NoGoldChecks,
            RateTally,
            SpanWindow,
            rate_annotations,
            read_calls,
        )
        from stateval.upload import PhoenixUploader

        monitor = load_monitor(monitor_path, build_judge=False)
        tally = RateTally(NoGoldChecks.of(monitor))
        for number, line in enumerate(_case_lines(cases), start=1):
            try:
                tally.add_case(line)
            except StatevalError as exc:
                raise StatevalError(f"{cases}:{number}: {exc}") from None
        window = SpanWindow(
            None if since is None else _moment(since, "--since"),
            None if until is None else _moment(until, "--until"),
        )
        url, api_key = _target(phoenix_url)

        async def read() -> None:
            async with PhoenixUploader(url, api_key=api_key) as phoenix:
                async for page in read_calls(phoenix, monitor.traces, window):
                    for _, call in page.calls:
                        if isinstance(call, MappedCall):
                            tally.add_call(call)

        run_interruptible(read())
        if tally.calls == 0:
            raise StatevalError(
                f"{monitor_path}: no mutator call in project {monitor.traces.project!r} "
                "in the window: nothing to estimate"
            )
        rates = tally.rates()
        render_rates(report_console(), rates, tally)
        report = {
            "monitor": monitor.name,
            "spans": tally.calls,
            "reviewed": len(tally.reviewed),
            "unreviewed": tally.unreviewed,
            "fields": [field.to_dict() for field in rates],
        }
        _deliver(
            report,
            report_json,
            (
                markdown,
                rates_markdown(
                    monitor.name, rates, tally.calls, len(tally.reviewed), tally.unreviewed
                )
                if markdown
                else "",
            ),
            publish,
            (url, api_key),
            project=monitor.traces.project,
            span_name=RATES_SPAN,
            annotations=rate_annotations(rates),
        )


def _case_lines(path: Path) -> list[dict[str, object]]:
    from stateval.errors import StatevalError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StatevalError(f"{path}: cannot read: {exc.strerror}") from None
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise StatevalError(f"{path}:{number}: not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise StatevalError(f"{path}:{number}: a case must be a JSON object")
        lines.append(data)
    return lines


def register(group: typer.Typer) -> None:
    """Add ``mutate`` and ``rates`` to the ``traces`` command group."""
    group.command("mutate", short_help="How much the monitor's checks miss (recall).")(
        traces_mutate
    )
    group.command("rates", short_help="Production error rates per field, with intervals.")(
        traces_rates
    )
