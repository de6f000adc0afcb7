"""The replay mutator: scoring post-states a system already produced, from the cases or from a
predictions file joined by case id; missing or malformed ones are per-case errors."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from stateval.errors import MutatorError, SuiteProblemsError
from stateval.mutators import ReplayMutator, StructuredInput
from stateval.run import start_journal
from stateval.state import InterpretiveState
from stateval.suite import load_suite
from stateval.upload import run_suite

STATEVAL = [sys.executable, "-c", "from stateval.cli import main; main()"]
CASES: list[dict[str, Any]] = [
    {
        "id": "right",
        "input": {"prompt": "north"},
        "expected_post_state": {"hotel.area": "north", "hotel.stars": "4"},
        "actual_post_state": {"hotel.area": "north", "hotel.stars": "4"},
    },
    {
        "id": "wrong",
        "input": {"prompt": "south"},
        "expected_post_state": {"hotel.area": "south"},
        "actual_post_state": {"hotel.area": "east"},
    },
]


def _suite(folder: Path, cases: list[dict[str, Any]], **mutator: Any) -> Path:
    with (folder / "cases.jsonl").open("w") as handle:
        for case in cases:
            handle.write(json.dumps(case) + "\n")
    data = {
        "mutator": {"type": "replay", **mutator},
        "cases": {"file": "cases.jsonl"},
        "thresholds": {"max_error_rate": None},
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _run(path: Path, root: Path) -> Any:
    suite = load_suite(path)
    return asyncio.run(run_suite(suite, start_journal(root, suite), concurrency=2)).summary


def test_recorded_post_states_in_the_cases_are_scored_like_any_run(tmp_path: Path) -> None:
    summary = _run(_suite(tmp_path, CASES), tmp_path / ".stateval")
    assert summary.n_cases == 2
    assert summary.n_errors == 0
    assert summary.overall_match_rate == 0.5
    assert summary.accuracy == pytest.approx(2 / 3)
    wrong = summary.cases[1]
    assert wrong.comparison.field("hotel.area").actual.value == "east"  # type: ignore[union-attr]


def test_a_predictions_file_is_joined_by_case_id(tmp_path: Path) -> None:
    cases = [{k: v for k, v in c.items() if k != "actual_post_state"} for c in CASES]
    (tmp_path / "preds.jsonl").write_text(
        json.dumps({"id": "wrong", "actual_post_state": {"hotel.area": "south"}})
        + "\n"
        + json.dumps({"id": "right", "actual_post_state": {"hotel.area": "north"}})
        + "\n"
    )
    summary = _run(_suite(tmp_path, cases, predictions="preds.jsonl"), tmp_path / ".stateval")
    assert summary.n_errors == 0
    assert [c.overall_match for c in summary.cases] == [False, True]  # right lacks hotel.stars
    assert summary.cases[0].comparison.missing == ("hotel.stars",)


def test_missing_and_malformed_recorded_outputs_are_per_case_errors(tmp_path: Path) -> None:
    cases = [
        CASES[0],
        {**CASES[1], "id": "none", "actual_post_state": None},
        {**CASES[1], "id": "text", "actual_post_state": "hotel.area=south"},
        {**CASES[1], "id": "bad-path", "actual_post_state": {"hotel..area": "south"}},
    ]
    summary = _run(_suite(tmp_path, cases), tmp_path / ".stateval")
    assert summary.n_cases == 4
    errors = {c.case_id: c.result.error for c in summary.cases if not c.ok}
    assert errors["none"] == "case 'none' has no recorded output (no 'actual_post_state' key)"
    assert errors["text"] == (
        "case 'text': the recorded actual_post_state is a string, not a state object"
    )
    assert errors["bad-path"].startswith(  # type: ignore[union-attr]
        "case 'bad-path': the recorded actual_post_state is not a valid state: "
    )
    assert "hotel..area" in errors["bad-path"]  # type: ignore[operator]
    assert summary.cases[0].ok


def test_a_case_without_a_prediction_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "preds.jsonl").write_text(json.dumps({"id": "right", "actual_post_state": {}}))
    summary = _run(_suite(tmp_path, CASES, predictions="preds.jsonl"), tmp_path / ".stateval")
    (failed,) = [c for c in summary.cases if not c.ok]
    assert failed.result.error == "case 'wrong' has no recorded output (no line in preds.jsonl)"
    assert failed.result.error_type == "MutatorError"


def test_a_predictions_file_that_is_not_jsonl_fails_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "preds.jsonl").write_text('{"id": "right"}\nnot json\n{"no": "id"}\n')
    with pytest.raises(SuiteProblemsError) as caught:
        load_suite(_suite(tmp_path, CASES, predictions="preds.jsonl"))
    problems = caught.value.problems
    assert any(p.startswith("preds.jsonl:2: invalid JSON") for p in problems), problems
    assert any(p.startswith('preds.jsonl:3: expected an object with an "id"') for p in problems)


def test_stateval_run_reports_replay_errors_and_exits_nonzero(tmp_path: Path) -> None:
    cases = [CASES[0], {**CASES[1], "actual_post_state": None}]
    path = _suite(tmp_path, cases)
    data = yaml.safe_load(path.read_text())
    del data["thresholds"]
    path.write_text(yaml.safe_dump(data))
    done = subprocess.run(
        [*STATEVAL, "run", str(path), "--no-phoenix"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "STATEVAL_HOME": str(tmp_path / ".stateval")},
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "case 'wrong' has no recorded output" in done.stdout
    assert "Traceback" not in done.stderr


def test_without_its_case_it_replays_by_message_id() -> None:
    replay = ReplayMutator(InterpretiveState.from_flat)
    with pytest.raises(MutatorError, match="case 'm1' has no recorded output"):
        asyncio.run(replay.mutate(InterpretiveState(), StructuredInput("x", "m1")))
