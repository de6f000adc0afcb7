"""Reports of runs whose field paths, values, case ids and errors are hostile text.

Everything user- or model-derived is printed as text: rich markup (``notes.[/]``, which the LLM
reply parser accepts), emoji codes (``:x:``), matplotlib's TeX (``$\\frac$``), HTML, Markdown
table pipes and XML-invalid characters neither crash a report nor change what it says.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from stateval.mutators import PythonMutator, StructuredInput
from stateval.regressions import Observation, ScoredRun, diff_runs, markdown_diff, print_diff
from stateval.reports import (
    diff_html_report,
    html_report,
    markdown_report,
    print_summary,
    write_json_report,
    write_junit_report,
)
from stateval.run import RunSummary, start_journal
from stateval.state import InterpretiveState
from stateval.suite import load_suite
from stateval.upload import run_suite

HOSTILE_PATHS = (
    "notes.[/]",
    "x.:x:",
    "f.$\\frac$",
    "g.[bold_red]loud[/bold_red]",
    "h.<script>alert(1)</script>",
    "i.a|b",
    "j.$x_1$and$",
)
HOSTILE_VALUE = "[/] :x: $\\frac{1}{0}$ <b>&amp; | \x1b[31m"


def _tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    if input.prompt == "explode":
        raise RuntimeError("[/] :boom: $\\frac$ <oops>")
    right = input.prompt == "right"
    return InterpretiveState.from_flat(
        {p: ("v" if right else HOSTILE_VALUE) for p in HOSTILE_PATHS}
    )


def _summary(folder: Path, suite_name: str = "[/]:x:$\\frac$") -> RunSummary:
    expected = {p: "v" for p in HOSTILE_PATHS}
    data = {
        "name": suite_name,
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {
            "inline": [
                {"id": "[/]ok", "input": {"prompt": "right"}, "expected_post_state": expected},
                {"id": ":x:bad", "input": {"prompt": "wrong"}, "expected_post_state": expected},
                {"id": "$err$", "input": {"prompt": "explode"}, "expected_post_state": expected},
            ]
        },
        "thresholds": {"accuracy": 0.9},
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    suite = dataclasses.replace(
        load_suite(path, load_mutator=False), mutator=PythonMutator(_tracker)
    )
    journal = start_journal(folder / ".stateval", suite)
    return asyncio.run(run_suite(suite, journal, concurrency=1)).summary


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> RunSummary:
    return _summary(tmp_path_factory.mktemp("hostile"))


def test_the_terminal_summary_prints_paths_values_and_errors_as_text(summary: RunSummary) -> None:
    console = Console(record=True, width=200, file=io.StringIO())  # a user's default console
    print_summary(summary, console)
    text = console.export_text()
    for path in HOSTILE_PATHS:
        if not path.startswith("h."):
            assert path in text, path
    assert "[/]:x:$\\frac$" in text  # the suite name, no emoji
    assert "❌" not in text
    assert "💥" not in text
    assert ":boom:" in text


def test_json_report_keeps_every_path_and_value(summary: RunSummary, tmp_path: Path) -> None:
    write_json_report(summary, tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert {f["path"] for f in data["fields"]} == set(HOSTILE_PATHS)


def test_markdown_report_escapes_table_pipes(summary: RunSummary) -> None:
    text = markdown_report(summary)
    row = next(line for line in text.splitlines() if "i.a" in line and line.startswith("|"))
    assert "i.a\\|b" in row
    header = next(line for line in text.splitlines() if line.startswith("| field"))
    assert row.count(" | ") == header.count(" | ")


def test_html_report_draws_tex_like_names_literally(summary: RunSummary) -> None:
    page = html_report(summary)
    assert "<script>alert(1)</script>" not in page
    assert "h.&lt;script&gt;" in page
    assert "f.$\\frac$" in page


def test_junit_report_is_valid_xml_with_control_characters(
    summary: RunSummary, tmp_path: Path
) -> None:
    write_junit_report(summary, tmp_path / "j.xml")
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert [c.get("name") for c in root.iter("testcase")] == ["[/]ok", ":x:bad", "$err$"]


def test_a_diff_of_hostile_fields_renders_in_every_format() -> None:
    def run(label: str, right: float) -> ScoredRun:
        return ScoredRun(
            label,
            {
                f"[/]{i}:x:": (Observation({f"field:{p}": right for p in HOSTILE_PATHS}),)
                for i in range(12)
            },
        )

    diff = diff_runs(run("[/]base", 1.0), run(":x:cand", 0.0), resamples=20)
    assert len(diff.regressed_fields) == len(HOSTILE_PATHS)
    console = Console(record=True, width=250, file=io.StringIO())
    print_diff(diff, console)
    text = console.export_text()
    for path in HOSTILE_PATHS:
        if not path.startswith("h."):
            assert path in text, path
    assert "[/]base -> :x:cand" in text
    assert "i.a\\|b" in markdown_diff(diff)
    assert "<script>alert" not in diff_html_report(diff)


HOSTILE_MUTATOR = """
from stateval.state import InterpretiveState

def track(state, input):
    return InterpretiveState.from_flat({"notes.[/]": "[/]", "x.:x:": ":x:", "f.$\\\\frac$": "$"})
"""


def test_run_and_rescore_print_hostile_paths_and_write_their_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from stateval.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / ".stateval"))
    (tmp_path / "hostile_mut.py").write_text(HOSTILE_MUTATOR)
    suite = {
        "name": "[/]:x:",
        "mutator": {"type": "python", "callable": "hostile_mut:track", "path": "."},
        "cases": {
            "inline": [
                {"id": "c1", "input": {"prompt": "hi"}, "expected_post_state": {"notes.[/]": "a"}}
            ]
        },
        "thresholds": {"accuracy": 1.0},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    for args in (
        ["run", "suite.yaml", "--no-phoenix", "--report-json", "r.json", "--report-html", "r.html"],
        ["rescore", "latest", "--report-json", "r.json", "--markdown", "r.md"],
    ):
        (tmp_path / "r.json").unlink(missing_ok=True)
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1, result.output  # below threshold, not a crash
        assert "notes.[/]" in result.stdout
        assert "x.:x:" in result.stdout
        assert "❌" not in result.stdout
        paths = {f["path"] for f in json.loads((tmp_path / "r.json").read_text())["fields"]}
        assert "notes.[/]" in paths


def test_junit_report_of_a_case_id_with_an_escape_character_parses(tmp_path: Path) -> None:
    # found by bench/fuzz.py's reports target: an ESC in a case id made the XML unreadable
    data = {
        "name": "esc",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {
            "inline": [
                {"id": "\x1b[31mred", "input": {"prompt": "wrong"}, "expected_post_state": {"a": 1}}
            ]
        },
    }
    (tmp_path / "suite.json").write_text(json.dumps(data))
    suite = dataclasses.replace(
        load_suite(tmp_path / "suite.json", load_mutator=False), mutator=PythonMutator(_tracker)
    )
    journal = start_journal(tmp_path / ".stateval", suite)
    summary = asyncio.run(run_suite(suite, journal, concurrency=1)).summary
    write_junit_report(summary, tmp_path / "j.xml")
    names = [c.get("name") for c in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")]
    assert names == ["\\x1b[31mred"]
