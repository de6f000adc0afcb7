"""What follows a run's summary, for every way of running it: the `RunView` an entry point
shows a run through, the `RunResult` it gets back, the baseline resolved before the run, and
`conclude`: the stability over repetitions and the diff against the baseline with its gate.

`carry_out` (one process), the workers and `stateval merge` all end here.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from stateval.errors import DiffError
from stateval.orchestrator._request import RunRequest
from stateval.regressions import (
    DEFAULT_GATE,
    RepetitionsBuilder,
    RunColumns,
    RunDiff,
    RunResolver,
    ScoredRun,
    diff_runs,
    gate_result,
    local_run,
    print_diff,
    print_reliability,
    print_stability,
    tag_baseline,
)
from stateval.run import (
    Journal,
    PhoenixTarget,
    RunOutcome,
    RunSummary,
    ThresholdResult,
    UploadStatus,
)
from stateval.suite import RegressionsSpec, Suite

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["RunResult", "RunView", "conclude", "resolve_baseline", "undelivered"]


class RunView(Protocol):
    """How an entry point shows a run (the CLI: progress bars and a summary; pytest: nothing).

    Attributes:
        console: Where the stability table and the diff against the baseline are printed.
        phoenix_hint: How to give this entry point a Phoenix server (for error messages).
    """

    console: Console
    phoenix_hint: str

    def note(self, text: str, style: str | None = None) -> None:
        """A line for the user beside the run, as text (``style``: a rich style)."""

    def summary(self, summary: RunSummary) -> None:
        """Show the summary of a run (before its reports are written)."""

    def drive(
        self,
        suite: Suite,
        journal: Journal,
        target: PhoenixTarget | None,
        concurrency: int,
        finish: Callable[[RunSummary], None],
    ) -> RunOutcome:
        """Run the journal's cases to the end; ``finish`` as soon as scoring ends."""
        ...

    def shards(self, name: str, total: int) -> AbstractContextManager[Callable[[int, int], None]]:
        """Show the ``total`` cases of suite ``name`` that ``--workers`` workers run, while
        they run: the display is updated with how many they have scored and how many of
        those failed (first once the workers are forked: start no thread before that)."""
        ...


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a request gave.

    Attributes:
        outcome: The main run (its summary, journal and upload).
        compared: The summary of the run before it with ``--mode both`` (shown beside).
        diff: The diff against the baseline, when there was one.
        gate: The regression gate's result, when there was a baseline.
        gate_fails_run: True when the gate failed and the request makes that fail the run.
    """

    outcome: RunOutcome
    compared: RunSummary | None = None
    diff: RunDiff | None = None
    gate: ThresholdResult | None = None
    gate_fails_run: bool = False

    @property
    def passed(self) -> bool:
        """The run (and the one shown beside it) met its thresholds and the gate did not fail."""
        ok = self.outcome.summary.passed and not self.gate_fails_run
        return ok and (self.compared is None or self.compared.passed)


def undelivered(upload: UploadStatus | None) -> bool:
    """Some of the run did not reach Phoenix (the journal keeps it for ``--resume``)."""
    return upload is not None and bool(upload.error or upload.pending or upload.spans_kept)


def resolve_baseline(
    request: RunRequest, target: PhoenixTarget | None, exclude: str | None, view: RunView
) -> ScoredRun | RunColumns | None:
    """The run's baseline (``--baseline`` or the suite's), resolved before the run, or None.

    Raises:
        DiffError: The baseline cannot be found.
    """
    spec = request.suite.thresholds.regressions
    baseline = request.baseline or (spec.baseline if spec is not None else None)
    if baseline is None:
        return None
    return _baseline(baseline, request, target, exclude, view.phoenix_hint)


def conclude(
    request: RunRequest,
    result: RunResult,
    base_run: ScoredRun | RunColumns | None,
    target: PhoenixTarget | None,
    view: RunView,
) -> RunResult:
    """After the summary and reports: the stability over repetitions and the diff against the
    baseline with its gate (printed and added to the reports)."""
    outcome = result.outcome
    spec = request.suite.thresholds.regressions
    if base_run is not None or outcome.journal.header.repetitions > 1:
        # Reads every case again (its journaled scores where they are current): only for the
        # gate and --repeat's stability table.
        cand = _after_run(request, outcome, view)
    if base_run is not None:
        diff, gate = _gate(cand, base_run, spec or DEFAULT_GATE, target, view)
        for report in request.reports:
            add = report.writer.add_diff
            if add is not None:
                add(report.path, diff, gate, outcome.summary)
        fails = not gate.passed and (request.fail_on_regression or spec is not None)
        result = replace(result, diff=diff, gate=gate, gate_fails_run=fails)
    elif request.fail_on_regression:
        view.note("note: --fail-on-regression without a baseline checks nothing", style="yellow")
    return result


def _baseline(
    name: str, request: RunRequest, target: PhoenixTarget | None, exclude: str | None, hint: str
) -> ScoredRun | RunColumns:
    """The baseline, resolved before the run starts (``latest``: the suite's newest run;
    ``exclude``: a resumed run's own id)."""
    suite_path = request.suite.path

    def phoenix() -> tuple[str, str | None]:
        if target is None:
            raise DiffError(
                f"baseline {name}: not a run of {suite_path}; an experiment id needs Phoenix "
                f"({hint})"
            )
        return target.url, target.api_key

    return RunResolver(request.home, suite=suite_path, phoenix=phoenix, exclude=exclude).resolve(
        name
    )


def _after_run(request: RunRequest, outcome: RunOutcome, view: RunView) -> RunColumns:
    """The finished run as a diff side, every repetition included; with repetitions, each
    field's mean, interval, flakiness and pass^N, and pass^k of the cases and episodes, printed
    and added to the reports."""
    journal = outcome.journal
    repetitions = journal.header.repetitions
    if repetitions == 1:  # as columns, scored from the journal case by case
        return local_run(journal, request.suite)
    suite = request.suite
    # as a run of one repetition: columns, each case's repetitions counted and dropped
    counted = RepetitionsBuilder(None if suite.episodes is None else suite.episodes.index)
    run = local_run(journal, suite, each=counted.add)
    fields = counted.fields()
    print_stability(fields, repetitions, view.console)
    pass_k = counted.reliability()
    print_reliability(pass_k, view.console)
    for report in request.reports:
        add = report.writer.add_stability
        if add is not None:
            add(report.path, repetitions, fields, pass_k)
    return run


def _gate(
    cand: ScoredRun | RunColumns,
    baseline: ScoredRun | RunColumns,
    spec: RegressionsSpec,
    target: PhoenixTarget | None,
    view: RunView,
) -> tuple[RunDiff, ThresholdResult]:
    """Diff a finished run against its baseline, print it after the summary, and tag the
    baseline experiment as its dataset's baseline on the run's Phoenix server."""
    if not set(baseline.case_ids) & set(cand.case_ids):
        raise DiffError(f"{baseline.label} shares no case ids with this run: nothing to compare")
    diff = diff_runs(baseline, cand, alpha=spec.alpha, seed=0, resamples=2000)
    print_diff(diff, view.console)
    gate = gate_result(diff, spec)
    style = "green" if gate.passed else "bold red"
    from rich.text import Text

    view.console.print(Text(f"regression gate: {gate.describe()}", style=style))
    link = baseline.experiment
    if target is not None and link is not None and link.phoenix_url == target.url.rstrip("/"):
        if tag_baseline(link.phoenix_url, link.experiment_id, api_key=target.api_key):
            view.note(f"Phoenix: experiment {link.experiment_id} tagged as the dataset's baseline")
        else:
            view.note("note: this Phoenix server has no experiment tags; baseline not tagged")
    return diff, gate
