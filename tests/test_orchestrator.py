"""One run request, one orchestrator: `carry_out` runs what the CLI and the pytest plugin ask,
and report formats are a table (a new one is an option of every command that writes reports)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
import yaml
from rich.console import Console
from typer.testing import CliRunner

from stateval.cli import app
from stateval.cli._common import report_options
from stateval.orchestrator import RunRequest, carry_out
from stateval.reports import REPORT_FORMATS, ReportFormat, ReportRequest
from stateval.run import Journal, PhoenixTarget, RunOutcome, RunSummary
from stateval.suite import Suite, load_suite
from stateval.upload import run_suite

MUTATOR = """
from stateval.state import ValueConfidence

def track(state, input):
    name, city = input.prompt.split()
    out = state.copy()
    out.set_value("user.name", ValueConfidence(name, 1.0))
    out.set_value("user.city", ValueConfidence(city, 1.0))
    return out
"""


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    """A small suite whose mutator gets every field right."""
    name = "orchestrated_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    cases = [
        {
            "id": f"case-{i}",
            "input": {"prompt": f"Ada{i} City{i}"},
            "expected_post_state": {"user.name": f"Ada{i}", "user.city": f"City{i}"},
        }
        for i in range(6)
    ]
    spec = {
        "name": "cities",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return load_suite(path)


class Recorder:
    """A view that keeps what it was shown."""

    phoenix_hint = "give a Phoenix URL"

    def __init__(self) -> None:
        self.console = Console(file=io.StringIO(), width=200)
        self.notes: list[str] = []
        self.summaries: list[RunSummary] = []

    def note(self, text: str, style: str | None = None) -> None:
        self.notes.append(text)

    def summary(self, summary: RunSummary) -> None:
        self.summaries.append(summary)

    def drive(
        self,
        suite: Suite,
        journal: Journal,
        target: PhoenixTarget | None,
        concurrency: int,
        finish: Callable[[RunSummary], None],
    ) -> RunOutcome:
        import asyncio

        outcome = asyncio.run(run_suite(suite, journal, concurrency=concurrency, phoenix=target))
        finish(outcome.summary)
        return outcome


def test_a_request_runs_writes_its_reports_and_gates_against_the_baseline(
    suite: Suite, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    first = carry_out(RunRequest(suite=suite, home=home, no_phoenix=True), Recorder())
    assert first.passed
    assert first.diff is None
    reports = (
        ReportRequest("json", tmp_path / "r.json"),
        ReportRequest("markdown", tmp_path / "r.md"),
    )
    view = Recorder()
    request = RunRequest(
        suite=suite, home=home, no_phoenix=True, baseline="latest", reports=reports
    )
    second = carry_out(request, view)
    assert second.diff is not None
    assert second.gate is not None
    assert second.gate.passed
    assert [s.n_cases for s in view.summaries] == [6]
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["n_cases"] == 6
    assert data["regressions"]["gate"]["passed"] is True
    assert "regressed" in (tmp_path / "r.md").read_text()
    assert "regression gate" in view.console.file.getvalue()  # type: ignore[attr-defined]


def test_a_baseline_from_phoenix_without_phoenix_names_the_entry_points_option(
    suite: Suite, tmp_path: Path
) -> None:
    from stateval.errors import DiffError

    request = RunRequest(suite=suite, home=tmp_path, no_phoenix=True, baseline="abc123")
    with pytest.raises(DiffError, match="give a Phoenix URL"):
        carry_out(request, Recorder())


def test_every_report_format_is_an_option_of_the_commands_that_write_its_kind() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    traces = commands["traces"].commands  # type: ignore[attr-defined]

    def options(command: typer.core.TyperCommand) -> set[str]:
        return {o for p in command.params for o in p.opts}

    for fmt in REPORT_FORMATS.values():
        assert fmt.option in options(commands["run"])
        assert fmt.option in options(commands["rescore"])
        assert (fmt.option in options(commands["mutate"])) == (fmt.mutation is not None)
        assert (fmt.option in options(traces["score"])) == (fmt.traces is not None)


CSV_FORMAT = """
from pathlib import Path

def write_csv(summary, path: Path) -> None:
    rows = [f"{row.path},{row.accuracy}" for row in summary.fields]
    path.write_text("field,accuracy\\n" + "\\n".join(rows) + "\\n")
"""


def test_a_format_added_to_the_table_is_one_more_option_and_is_written(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = "csv_format_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{module}.py").write_text(CSV_FORMAT)
    monkeypatch.syspath_prepend(str(tmp_path))
    csv = ReportFormat("csv", "--report-csv", "Write a CSV report here.", f"{module}:write_csv")
    monkeypatch.setitem(REPORT_FORMATS, "csv", csv)
    asked: list[tuple[ReportRequest, ...]] = []
    command = typer.Typer()

    @command.command()
    @report_options("run")
    def go(reports: tuple[ReportRequest, ...] = ()) -> None:
        asked.append(reports)

    out = tmp_path / "r.csv"
    result = CliRunner().invoke(command, ["--report-csv", str(out), "--junit", "j.xml"])
    assert result.exit_code == 0, result.output
    assert asked == [(ReportRequest("junit", Path("j.xml")), ReportRequest("csv", out))]
    request = RunRequest(suite=suite, home=tmp_path, no_phoenix=True, reports=asked[0][1:])
    carry_out(request, Recorder())
    assert out.read_text().splitlines() == ["field,accuracy", "user.city,1.0", "user.name,1.0"]
