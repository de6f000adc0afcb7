"""The verdict of a run: failed mutator calls fail it by default, and are named in the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateval.cli import app

MUTATOR = """
from stateval import InterpretiveState, ValueConfidence


def fill(state, input):
    if "boom" in input.prompt:
        raise RuntimeError("the tracker fell over")
    out = state.copy()
    out.add_value("greeting", ValueConfidence(input.prompt, 1.0))
    return out
"""


def _suite(tmp_path: Path, thresholds: dict[str, object] | None = None) -> Path:
    (tmp_path / "mutator.py").write_text(MUTATOR)
    cases = [
        {
            "id": "fine",
            "input": {"prompt": "hello", "message_id": "m1"},
            "expected_post_state": {"greeting": "hello"},
        },
        {
            "id": "broken",
            "input": {"prompt": "boom", "message_id": "m2"},
            "expected_post_state": {"greeting": "boom"},
        },
    ]
    suite = {
        "mutator": {"type": "python", "callable": "mutator:fill", "path": "."},
        "cases": {"inline": cases},
    }
    if thresholds is not None:
        suite["thresholds"] = thresholds
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    return path


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / ".stateval"))
    monkeypatch.chdir(tmp_path)


def test_a_failed_mutator_call_fails_a_run_by_default_and_is_named(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(_suite(tmp_path)), "--no-phoenix"])
    assert result.exit_code == 1, result.output
    assert "case broken: RuntimeError: the tracker fell over" in result.stdout
    assert "threshold error_rate 0.500 <= 0.000 FAILED" in result.stdout
    assert result.stdout.rstrip().endswith("FAILED")


def test_a_suite_may_allow_failed_calls(tmp_path: Path) -> None:
    path = _suite(tmp_path, {"max_error_rate": 0.5})
    result = CliRunner().invoke(app, ["run", str(path), "--no-phoenix"])
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip().endswith("PASSED")


def test_a_run_without_thresholds_says_so(tmp_path: Path) -> None:
    path = _suite(tmp_path, {"max_error_rate": None})
    result = CliRunner().invoke(app, ["run", str(path), "--no-phoenix"])
    assert result.exit_code == 0, result.output
    assert "no thresholds set" in result.stdout
