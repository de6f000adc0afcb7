"""Reports: JSON, JUnit XML (failures name the fields), Markdown, terminal summary."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from stateval.mutators import PythonMutator, StructuredInput
from stateval.reports import (
    markdown_report,
    print_summary,
    write_json_report,
    write_junit_report,
    write_markdown_report,
)
from stateval.run import RunSummary, start_journal
from stateval.state import InterpretiveState
from stateval.suite import load_suite
from stateval.upload import run_suite


def _tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    if input.prompt == "explode":
        raise RuntimeError("model timed out")
    return InterpretiveState.from_flat({"user.name": input.prompt, "user.city": "Paris"})


@pytest.fixture
def summary(tmp_path: Path) -> RunSummary:
    data = {
        "name": "forms",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {
            "inline": [
                {
                    "id": "ok",
                    "input": {"prompt": "Ada"},
                    "expected_post_state": {"user.name": "Ada", "user.city": "Paris"},
                },
                {
                    "id": "bad",
                    "input": {"prompt": "Bob"},
                    "expected_post_state": {"user.name": "Rob", "user.age": 3},
                },
                {
                    "id": "err",
                    "input": {"prompt": "explode"},
                    "expected_post_state": {"user.name": "X"},
                },
            ]
        },
        "slots": ["user.name", "user.city", "user.age"],
        "thresholds": {"accuracy": 0.9},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    suite = dataclasses.replace(
        load_suite(path, load_mutator=False), mutator=PythonMutator(_tracker)
    )
    journal = start_journal(tmp_path / ".stateval", suite)
    return asyncio.run(run_suite(suite, journal, concurrency=2)).summary


def test_junit_has_one_testcase_per_case_with_failures_naming_fields(
    summary: RunSummary, tmp_path: Path
) -> None:
    out = tmp_path / "junit.xml"
    write_junit_report(summary, out)
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["ok", "bad", "err"]
    assert len(cases["ok"]) == 0
    failure = cases["bad"].find("failure")
    assert failure is not None
    message = failure.get("message") or ""
    assert "user.name (mismatched)" in message
    assert "user.age (missing)" in message
    assert "user.city (extra)" in message
    assert "expected 'Rob'" in (failure.text or "")
    error = cases["err"].find("error")
    assert error is not None
    assert error.get("type") == "RuntimeError"
    assert error.get("message") == "model timed out"


def test_json_report_holds_metrics_fields_and_cases(summary: RunSummary, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    write_json_report(summary, out)
    data = json.loads(out.read_text())
    assert data["suite"] == "forms"
    assert data["passed"] is False
    assert data["n_errors"] == 1
    assert data["accuracy"] == pytest.approx(2 / 5)
    assert data["joint_goal_accuracy"] == pytest.approx(1 / 3)
    assert [t["name"] for t in data["thresholds"]] == ["accuracy", "error_rate"]
    assert data["fields"][0]["accuracy"] <= data["fields"][-1]["accuracy"]
    bad = next(c for c in data["cases"] if c["case_id"] == "bad")
    names = {e["name"]: e for e in bad["evaluations"]}
    assert names["field:user.age"]["label"] == "missing"


def test_markdown_report_shows_verdict_metrics_and_failing_cases(
    summary: RunSummary, tmp_path: Path
) -> None:
    text = markdown_report(summary)
    assert text.startswith("### stateval: `forms` ❌ failed")
    assert "| joint goal accuracy | 33.3% |" in text
    assert "- ❌ `accuracy 0.400 >= 0.900 FAILED`" in text
    assert "- `bad`: `user.age` missing, `user.name` mismatched, `user.city` extra" in text
    assert "- `err`: mutator error (RuntimeError): model timed out" in text
    out = tmp_path / "r.md"
    write_markdown_report(summary, out)
    assert out.read_text() == text


def test_terminal_summary_shows_headline_fields_and_verdict(summary: RunSummary) -> None:
    console = Console(record=True, width=120)
    print_summary(summary, console)
    text = console.export_text()
    assert "overall match rate" in text
    assert "joint goal accuracy" in text
    assert "slot accuracy" in text
    assert "user.age" in text
    assert "threshold accuracy 0.400 >= 0.900 FAILED" in text
    assert text.rstrip().endswith("FAILED")


REPORT_SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "docs" / "report-schema.json").read_text()
)


def _validate(report: object) -> None:
    import jsonschema

    jsonschema.validate(report, REPORT_SCHEMA, cls=jsonschema.Draft202012Validator)


def test_json_reports_match_the_published_schema(summary: RunSummary, tmp_path: Path) -> None:
    import jsonschema

    out = tmp_path / "report.json"
    write_json_report(summary, out)
    report = json.loads(out.read_text())
    _validate(report)
    assert report["fields"][0]["absent"] is not None  # with a slot schema
    # the schema is strict: a renamed or unknown key is caught
    report["fields"][0]["f1_score"] = report["fields"][0].pop("f1")
    with pytest.raises(jsonschema.ValidationError):
        _validate(report)


def test_the_multiwoz_example_report_matches_the_schema_with_slices(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from stateval.cli import app

    example = Path(__file__).resolve().parents[1] / "examples" / "multiwoz"
    data = yaml.safe_load((example / "suite.yaml").read_text())
    data["cases"]["file"] = str(example / "data" / "cases.jsonl")
    data["slots"]["path"] = str(example)
    data["mutator"]["path"] = str(example)
    data["slices"] = ["metadata.dialogue_id"]
    data["metrics"] = {"list_credit": "partial", "averaging": "case"}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(data))
    report_path, markdown_path = tmp_path / "r.json", tmp_path / "r.md"
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path / "suite.yaml"),
            "--no-phoenix",
            "--limit",
            "30",
            "--report-json",
            str(report_path),
            "--markdown",
            str(markdown_path),
        ],
    )
    assert result.exit_code in (0, 1), result.output
    report = json.loads(report_path.read_text())
    _validate(report)
    assert report["conventions"] == {
        "list_credit": "partial",
        "wrong_value": "fp_and_fn",
        "averaging": "case",
        "slot_schema": True,
        "convention": None,
    }
    dialogues = report["slices"]["metadata.dialogue_id"]
    assert sum(s["n_cases"] for s in dialogues.values()) == 30
    assert "**By `metadata.dialogue_id`**" in markdown_path.read_text()
    assert "by metadata.dialogue_id" in result.output
    assert "value precision / recall / F1" in result.output


def test_field_tables_rank_by_f1_and_show_confusion_counts(summary: RunSummary) -> None:
    rows = {r.path: r for r in summary.fields}
    # user.city: matched in "ok", extra in "bad" (not expected there), absent in "err"
    city = rows["user.city"]
    assert (city.matching, city.extra, city.absent) == (1, 1, 1)
    assert city.precision == 0.5
    assert city.slot_accuracy == pytest.approx(2 / 3)
    assert [r.f1 for r in summary.fields] == sorted(r.f1 for r in summary.fields)
    text = markdown_report(summary)
    assert "| field | n | matching | mismatched | missing | extra | absent | precision |" in text
    assert "| `user.city` | 2 | 1 | 0 | 0 | 1 | 1 | 50.0% | 100.0% | 66.7% | 66.7% |" in text
    assert "| value F1 |" in text


def _slice_suite(tmp_path: Path, finish_order: list[str]) -> RunSummary:
    """A run of three cases in three slices whose mutator calls finish in ``finish_order``
    (each call waits for the one before it in that order, not for a time)."""
    data = {
        "name": "slices",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {
            "inline": [
                {
                    "id": name,
                    "input": {"prompt": name},
                    "expected_post_state": {"user.name": name},
                    **({"metadata": {"domain": name}} if name != "none" else {}),
                }
                for name in ("taxi", "hotel", "none")
            ]
        },
        "slices": ["metadata.domain"],
    }
    tmp_path.mkdir()
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    gates: dict[str, asyncio.Event] = {}

    async def tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        if not gates:
            gates.update((name, asyncio.Event()) for name in finish_order)
            gates[finish_order[0]].set()
        await gates[input.prompt].wait()
        after = finish_order.index(input.prompt) + 1
        if after < len(finish_order):
            gates[finish_order[after]].set()
        return InterpretiveState.from_flat({"user.name": input.prompt})

    suite = dataclasses.replace(
        load_suite(path, load_mutator=False), mutator=PythonMutator(tracker)
    )
    journal = start_journal(tmp_path / ".stateval", suite)
    return asyncio.run(run_suite(suite, journal, concurrency=3)).summary


def test_slice_rows_do_not_depend_on_which_case_finished_first(tmp_path: Path) -> None:
    first = _slice_suite(tmp_path / "a", ["taxi", "hotel", "none"])
    second = _slice_suite(tmp_path / "b", ["none", "hotel", "taxi"])
    assert list(first.slices_dict()["metadata.domain"]) == ["hotel", "taxi", "(none)"]
    assert first.slices_dict() == second.slices_dict()
    assert first.metrics is not None
    assert second.metrics is not None
    assert json.dumps(first.metrics.to_dict()) == json.dumps(second.metrics.to_dict())
    slices = [markdown_report(s).split("**By `metadata.domain`**")[1] for s in (first, second)]
    assert slices[0] == slices[1]
    outs = []
    for s in (first, second):
        console = Console(record=True, width=120)
        print_summary(s, console=console)
        outs.append(console.export_text().split("metadata.domain")[1])
    assert outs[0] == outs[1]
