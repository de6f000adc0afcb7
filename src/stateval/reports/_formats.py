"""The report formats, as a table: a new format is one module and one line in `REPORT_FORMATS`.

Each format says which option asks for it (``--report-json FILE``...) and where its writers are
(``module:function`` in this package, imported when a report is written, so the commands can
list the options without loading the run machinery): one for a run's summary and, when it has
them, one for a mutation test's report, one adding the diff against a baseline and one adding
each field's stability over repetitions to a report already written. ``stateval run``,
``rescore`` and ``mutate`` build their report options from this table.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from stateval.mutation import MutationReport
    from stateval.regressions import FieldStability, Reliability, RunDiff
    from stateval.run import RunSummary, ThresholdResult
    from stateval.traces import TracesSummary

__all__ = ["REPORT_FORMATS", "ReportFormat", "ReportRequest"]

RunWriter = Callable[["RunSummary", Path], None]
MutationWriter = Callable[["MutationReport", Path], None]
TracesWriter = Callable[["TracesSummary", Path, str], None]
DiffWriter = Callable[[Path, "RunDiff", "ThresholdResult", "RunSummary"], None]
StabilityWriter = Callable[[Path, int, Sequence["FieldStability"], "Reliability"], None]


def _load(ref: str) -> Any:
    """``module:name`` (a module of this package when it starts with ``_``, else absolute)."""
    module, name = ref.split(":")
    where = f"stateval.reports.{module}" if module.startswith("_") else module
    return getattr(importlib.import_module(where), name)


@dataclass(frozen=True, slots=True)
class ReportFormat:
    """One report format; its writers are ``module:function`` (``_json:write_json_report``
    for a module of this package).

    Attributes:
        name: Its short name (``json``).
        option: The command-line option that asks for it (``--report-json``).
        help: That option's help.
        run_ref: Writes a run's summary to a path.
        mutation_ref: Writes a mutation test's report (None: ``stateval mutate`` has no such
            option).
        traces_ref: Writes a monitor run's summary, with span links on a Phoenix server (None:
            ``stateval traces score`` has no such option).
        diff_ref: Adds the diff against a baseline to a report already written.
        stability_ref: Adds each field's stability over repetitions, and pass^k, to a report
            written.
        check_ref: Raises before any work when the format cannot be written here.
    """

    name: str
    option: str
    help: str
    run_ref: str
    mutation_ref: str | None = None
    traces_ref: str | None = None
    diff_ref: str | None = None
    stability_ref: str | None = None
    check_ref: str | None = None

    @property
    def run(self) -> RunWriter:
        """The writer of a run's summary."""
        return cast("RunWriter", _load(self.run_ref))

    @property
    def mutation(self) -> MutationWriter | None:
        """The writer of a mutation test's report, if the format has one."""
        return None if self.mutation_ref is None else _load(self.mutation_ref)

    @property
    def traces(self) -> TracesWriter | None:
        """The writer of a monitor run's summary, if the format has one."""
        return None if self.traces_ref is None else _load(self.traces_ref)

    def writes(self, kind: str) -> bool:
        """True when the format writes reports of this kind (run, mutation, traces)."""
        return {"run": True, "mutation": self.mutation_ref, "traces": self.traces_ref}[
            kind
        ] is not None

    @property
    def add_diff(self) -> DiffWriter | None:
        """Adds the diff against a baseline to a written report, if the format shows it."""
        return None if self.diff_ref is None else _load(self.diff_ref)

    @property
    def add_stability(self) -> StabilityWriter | None:
        """Adds each field's stability over repetitions, if the format shows it."""
        return None if self.stability_ref is None else _load(self.stability_ref)

    def check(self) -> None:
        """Raise before any work when the format cannot be written here (a missing extra)."""
        if self.check_ref is not None:
            _load(self.check_ref)()


REPORT_FORMATS: dict[str, ReportFormat] = {
    f.name: f
    for f in (
        ReportFormat(
            "json",
            "--report-json",
            "Write a JSON report here.",
            "_json:write_json_report",
            mutation_ref="_mutation:write_mutation_json",
            traces_ref="_traces:write_traces_json",
            diff_ref="_json:add_diff",
            stability_ref="_json:add_stability",
        ),
        ReportFormat(
            "junit",
            "--junit",
            "Write a JUnit XML report here.",
            "_junit:write_junit_report",
            mutation_ref="_mutation:write_mutation_junit",
        ),
        ReportFormat(
            "markdown",
            "--markdown",
            "Write a Markdown report here.",
            "_markdown:write_markdown_report",
            traces_ref="_traces:write_traces_markdown",
            diff_ref="_markdown:add_diff",
        ),
        ReportFormat(
            "html",
            "--report-html",
            "Write a self-contained HTML report here (charts need the 'report' extra).",
            "_html:write_html_report",
            diff_ref="_regressions:add_diff",
            check_ref="_charts:require_charts",
        ),
    )
}
"""Every report format by name, in the order the commands list their options."""


@dataclass(frozen=True, slots=True)
class ReportRequest:
    """A report asked for: a format of `REPORT_FORMATS` by name, and the file to write."""

    format: str
    path: Path

    @property
    def writer(self) -> ReportFormat:
        """Its entry in `REPORT_FORMATS`."""
        return REPORT_FORMATS[self.format]
