"""The pytest plugin: suite files as tests, and a fixture that runs a suite from a test.

Installed with stateval (entry point ``pytest11``), so ``pytest suites/`` collects every
``*.stateval.yaml`` (``.yml``, ``.json``) file: one test item per threshold of the suite
(``joint_goal_accuracy``, ``fields[hotel.*]``, ``error_rate``...), plus ``regressed_fields`` when a
baseline is configured. The suite runs once per file, when its first item runs; a failing item
shows the threshold line and the run's summary (and the diff, for the regression gate). pytest's
own ``--junitxml`` reports the items, with each one's value and limit as properties.
Collecting reads only the suite file's settings (`stateval.suite.read_suite_settings`): no case
file, and none of the user's modules (``mutator.callable``, ``slots.ref``) is imported before an
item runs; a suite that does not load is one line per problem, at collection or on each item.

Options: ``--stateval-baseline RUN|EXPERIMENT`` (else the suite's
``thresholds.regressions.baseline``), ``--stateval-phoenix URL`` (default: none, the runs stay in
the journal), ``--stateval-repeat N``, ``--stateval-limit N``. Runs are journaled under
``$STATEVAL_HOME`` or ``.stateval`` in pytest's root folder, like ``stateval run``'s.

The `stateval_run` fixture runs a suite from a test function::

    def test_tracker_keeps_its_quality(stateval_run):
        result = stateval_run("suites/hotel.stateval.yaml", baseline="latest")
        assert result.summary.joint_goal_accuracy >= 0.6
        assert not result.diff.regressed_fields
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from stateval.regressions import RunDiff
    from stateval.run import Journal, PhoenixTarget, RunOutcome, RunSummary, ThresholdResult
    from stateval.suite import Suite

__all__ = ["SuiteResult", "run_suite_file", "stateval_run"]

SUFFIXES = (".stateval.yaml", ".stateval.yml", ".stateval.json")
"""File names the plugin collects as suites."""

GATE = "regressed_fields"


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """A suite run from pytest.

    Attributes:
        summary: The run's summary (thresholds included).
        diff: The diff against the baseline, when there was one.
        gate: The regression gate's result, when there was a baseline.
    """

    summary: RunSummary
    diff: RunDiff | None = None
    gate: ThresholdResult | None = None

    @property
    def passed(self) -> bool:
        """True when the run met its thresholds and the gate (if any)."""
        return self.summary.passed and (self.gate is None or self.gate.passed)

    def report(self) -> str:
        """The run's summary and the diff, as the terminal shows them (no colour)."""
        from rich.console import Console

        from stateval.regressions import print_diff
        from stateval.reports import print_summary

        console = Console(
            record=True,
            width=110,
            color_system=None,
            file=io.StringIO(),
            markup=False,  # field paths and values are text
            emoji=False,
        )
        print_summary(self.summary, console)
        if self.diff is not None:
            print_diff(self.diff, console)
        return console.export_text()


def _home(root: Path) -> Path:
    from stateval.run import ENV_HOME

    return Path(os.environ.get(ENV_HOME) or root / ".stateval")


def run_suite_file(
    path: str | Path,
    *,
    home: str | Path | None = None,
    baseline: str | None = None,
    phoenix_url: str | None = None,
    limit: int | None = None,
    repeat: int = 1,
) -> SuiteResult:
    """Run a suite file to the end and check it, as ``stateval run`` does.

    Args:
        path: The suite file.
        home: Where runs are journaled (default ``$STATEVAL_HOME`` or ``.stateval``).
        baseline: Compare with this run or Phoenix experiment (default: the suite's
            ``thresholds.regressions.baseline``); ``latest`` is the suite's newest run before
            this one.
        phoenix_url: Report the run to this Phoenix server (default: none).
        limit: Run only the first ``limit`` cases.
        repeat: Run every case this many times (the diff uses every repetition).

    Raises:
        StatevalError: The suite or the baseline is invalid (before any mutator call).
    """
    from stateval.orchestrator import RunRequest, carry_out
    from stateval.suite import load_suite

    request = RunRequest(
        suite=load_suite(Path(path)),
        home=Path(home) if home is not None else _home(Path.cwd()),
        limit=limit,
        repetitions=repeat,
        baseline=baseline,
        phoenix_url=phoenix_url,
        no_phoenix=phoenix_url is None,
    )
    result = carry_out(request, _QuietView())
    return SuiteResult(result.outcome.summary, result.diff, result.gate)


class _QuietView:
    """A run from pytest shows nothing while it runs: the items report it."""

    phoenix_hint = "give --stateval-phoenix"

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(file=io.StringIO())

    def note(self, text: str, style: str | None = None) -> None:
        """Notes are dropped."""

    def summary(self, summary: RunSummary) -> None:
        """The summary is shown by a failing item (`SuiteResult.report`)."""

    def drive(
        self,
        suite: Suite,
        journal: Journal,
        target: PhoenixTarget | None,
        concurrency: int,
        finish: Callable[[RunSummary], None],
    ) -> RunOutcome:
        """Run to the end, no progress shown."""
        from stateval.upload import run_suite

        outcome = asyncio.run(run_suite(suite, journal, concurrency=concurrency, phoenix=target))
        finish(outcome.summary)
        return outcome

    def shards(self, name: str, total: int) -> AbstractContextManager[Callable[[int, int], None]]:
        """Workers' runs show nothing either."""
        return nullcontext(lambda scored, failed: None)


@pytest.fixture
def stateval_run(request: pytest.FixtureRequest) -> Callable[..., SuiteResult]:
    """Run a suite file from a test: ``stateval_run(path, baseline=None, phoenix_url=None,
    limit=None, repeat=1)`` returns a `SuiteResult` (summary, diff, gate). Relative paths are
    taken from the test file's folder; runs are journaled as with ``stateval run``."""
    folder = Path(str(request.path)).parent
    root = _home(request.config.rootpath)

    def run(path: str | Path, **options: Any) -> SuiteResult:
        suite = Path(path)
        return run_suite_file(
            suite if suite.is_absolute() else folder / suite, home=root, **options
        )

    return run


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's command-line options."""
    group = parser.getgroup("stateval", "stateval suite files")
    group.addoption(
        "--stateval-baseline",
        metavar="RUN|EXPERIMENT",
        default=None,
        help="Gate every suite file against this baseline ('latest': its newest earlier run).",
    )
    group.addoption(
        "--stateval-phoenix",
        metavar="URL",
        default=None,
        help="Report suite-file runs to this Phoenix server (default: journal only).",
    )
    group.addoption(
        "--stateval-repeat",
        metavar="N",
        type=int,
        default=1,
        help="Run every case of each suite file N times.",
    )
    group.addoption(
        "--stateval-limit",
        metavar="N",
        type=int,
        default=None,
        help="Run only the first N cases of each suite file.",
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect ``*.stateval.yaml`` files as suites."""
    if file_path.name.endswith(SUFFIXES):
        return SuiteFile.from_parent(parent, path=file_path)
    return None


class SuiteFile(pytest.File):
    """A suite file: one item per threshold, plus the regression gate with a baseline."""

    _result: SuiteResult | None = None
    _error: BaseException | None = None

    def collect(self) -> Iterator[pytest.Item]:
        """An item per threshold the suite sets (``run`` when it sets none)."""
        from stateval.errors import StatevalError
        from stateval.run import threshold_names
        from stateval.suite import read_suite_settings

        try:  # the settings alone: collecting runs no code of the user's (mutator, slots.ref)
            spec = read_suite_settings(self.path).thresholds
        except StatevalError as exc:  # its problem lines, not a traceback through stateval
            raise self.CollectError(str(exc)) from None
        names = threshold_names(spec)
        if not names:
            names.append("run")
        baseline = self.config.getoption("--stateval-baseline") or (
            spec.regressions.baseline if spec.regressions is not None else None
        )
        if baseline is not None:
            names.append(GATE)
        for name in names:
            yield ThresholdItem.from_parent(self, name=name)

    def result(self) -> SuiteResult:
        """Run the suite once (the first item asks), then hand every item the same result."""
        if self._error is not None:
            raise self._error
        if self._result is None:
            try:
                self._result = run_suite_file(
                    self.path,
                    home=_home(self.config.rootpath),
                    baseline=self.config.getoption("--stateval-baseline"),
                    phoenix_url=self.config.getoption("--stateval-phoenix"),
                    limit=self.config.getoption("--stateval-limit"),
                    repeat=self.config.getoption("--stateval-repeat"),
                )
            except BaseException as exc:
                self._error = exc
                raise
        return self._result


class ThresholdFailed(Exception):
    """A suite's threshold (or regression gate) is not met."""


class ThresholdItem(pytest.Item):
    """One threshold of one suite file."""

    parent: SuiteFile

    def runtest(self) -> None:
        """Run the suite (once per file) and check this item's threshold."""
        result = self.parent.result()
        found = self._threshold(result)
        if found is not None:
            self.user_properties.extend(
                [("value", found.value), ("limit", found.limit), ("kind", found.kind)]
            )
        ok = result.summary.complete and (found.passed if found is not None else result.passed)
        if not ok:
            line = found.describe() if found is not None else "the run did not pass"
            if not result.summary.complete:
                line += f" (only {result.summary.n_cases} of {result.summary.n_planned} cases ran)"
            raise ThresholdFailed(f"{self.parent.path.name}: {line}\n\n{result.report()}")

    def _threshold(self, result: SuiteResult) -> ThresholdResult | None:
        if self.name == GATE:
            return result.gate
        return next((t for t in result.summary.thresholds if t.name == self.name), None)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str:
        """The threshold line and the run's summary; one line for a bad suite or baseline."""
        from stateval.errors import StatevalError

        if isinstance(excinfo.value, ThresholdFailed | StatevalError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))
