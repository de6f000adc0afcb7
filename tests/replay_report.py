"""Run a replay suite through ``stateval run`` and read its JSON report (the official-scorer
tests: the scorer's references as expected states, its predictions replayed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stateval.cli import app


def replay_report(
    folder: Path,
    expected: list[tuple[str, dict[str, Any]]],
    predicted: list[dict[str, Any]],
    suite_lines: str,
) -> dict[str, Any]:
    """The JSON report of a run replaying ``predicted`` against ``expected`` ((id, state)
    pairs, in order); ``suite_lines``: the suite's lines beside the mutator and the cases."""
    cases = [{"id": i, "input": {"prompt": i}, "expected_post_state": s} for i, s in expected]
    replay = [
        {"id": i, "actual_post_state": p} for (i, _), p in zip(expected, predicted, strict=True)
    ]
    for name, rows in (("turns.jsonl", cases), ("predictions.jsonl", replay)):
        text = "".join(json.dumps(r) + "\n" for r in rows)
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "suite.yaml").write_text(
        "mutator: {type: replay, predictions: predictions.jsonl}\n"
        f"cases: {{file: turns.jsonl}}\n{suite_lines}",
        encoding="utf-8",
    )
    out = folder / "report.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        mp.setenv("STATEVAL_HOME", str(folder / "home"))
        ran = CliRunner().invoke(
            app, ["run", "suite.yaml", "--no-phoenix", "--report-json", str(out)]
        )
    assert ran.exit_code in (0, 1), ran.output  # 1: the suite's default thresholds fail
    data = json.loads(out.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data
