"""``stateval run --mode`` and ``stateval rescore --with`` on a suite of episodes: the terminal,
JSON and Markdown reports carry the trajectory metrics, both modes side by side, and the episode
thresholds gate the exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from episodes_fixture import episode_cases
from stateval.cli import app
from stateval.episodes import EPISODE_METRICS, EpisodeMetric
from stateval.run import list_runs

ROOT = Path(__file__).resolve().parents[1]
TRACKER = """
from stateval import ValueConfidence

def track(state, input):
    verb, _, rest = input.prompt.partition(" ")
    out = state.copy()
    key, _, value = rest.partition("=")
    out.set_value(key, ValueConfidence(value[::-1] if verb == "wrong" else value, 1.0))
    return out
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    (tmp_path / "episode_turns.py").write_text(TRACKER)
    return tmp_path


def _suite(folder: Path, **extra: Any) -> Path:
    data = {
        "mutator": {"type": "python", "callable": "episode_turns:track", "path": "."},
        "cases": {"inline": episode_cases()},
        "episodes": {"by": "metadata.dialogue_id", "order": "metadata.turn_index"},
        **extra,
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _schema() -> dict[str, Any]:
    return json.loads((ROOT / "docs" / "report-schema.json").read_text())  # type: ignore[no-any-return]


def test_run_both_modes_shows_them_side_by_side_in_every_report(project: Path) -> None:
    _suite(project)
    result = CliRunner().invoke(
        app,
        [
            "run",
            "suite.yaml",
            "--no-phoenix",
            "--mode",
            "both",
            "--report-json",
            "r.json",
            "--markdown",
            "r.md",
            "--report-html",
            "r.html",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "teacher-forced vs free-running" in result.stdout
    assert "first divergence" in result.stdout
    report = json.loads((project / "r.json").read_text())
    jsonschema.validate(report, _schema())
    assert report["episodes"]["mode"] == "free_running"
    modes = report["modes"]
    assert sorted(modes) == ["free_running", "teacher_forced"]
    # d2's wrong first turn: teacher-forced recovers at turn 1, free-running carries the error
    assert modes["teacher_forced"]["episodes"]["turns"][1]["joint_goal_accuracy"] == 1.0
    assert modes["free_running"]["episodes"]["turns"][1]["joint_goal_accuracy"] == 0.5
    assert modes["free_running"]["episodes"]["inherited"] == 1
    assert modes["teacher_forced"]["run_id"] != modes["free_running"]["run_id"]
    markdown = (project / "r.md").read_text()
    assert "**Teacher-forced vs free-running**" in markdown
    assert "| episode success | 50.0% | 50.0% |" in markdown
    html = (project / "r.html").read_text()
    assert '<section id="episodes"><h2>Episodes</h2>' in html
    assert "<th>teacher-forced</th><th>free-running</th>" in html


def test_a_metric_added_to_the_table_reaches_the_json_report(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    metric = EpisodeMetric("episodes_counted", "episodes counted", lambda t: float(t.n_episodes))
    monkeypatch.setitem(EPISODE_METRICS, metric.name, metric)
    _suite(project)
    result = CliRunner().invoke(
        app, ["run", "suite.yaml", "--no-phoenix", "--mode", "both", "--report-json", "r.json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((project / "r.json").read_text())
    episodes = report["episodes"]
    assert list(episodes)[-1] == "episodes_counted"  # no ``json_after``: at the end
    assert episodes["episodes_counted"] == episodes["n_episodes"] > 0
    assert report["modes"]["teacher_forced"]["episodes"]["episodes_counted"] > 0
    # the keys of today's table keep their places
    assert list(episodes)[:8] == [
        "mode",
        "n_episodes",
        "n_success",
        "episode_success",
        "mean_episode_accuracy",
        "first_divergence",
        "n_recovered",
        "recovery_rate",
    ]


def test_the_report_schema_lists_each_metric_of_the_json_report() -> None:
    episodes = _schema()["$defs"]["episodes"]
    in_json = {m.name for m in EPISODE_METRICS.values() if m.json}
    assert in_json <= set(episodes["properties"])
    assert in_json <= set(episodes["required"])


def test_episode_thresholds_gate_the_exit_code(project: Path) -> None:
    _suite(project, thresholds={"episode_success": 0.9, "per_turn": {"joint_goal_accuracy": 0.5}})
    result = CliRunner().invoke(
        app,
        ["run", "suite.yaml", "--no-phoenix", "--mode", "free_running", "--report-json", "r.json"],
    )
    assert result.exit_code == 1, result.output
    assert "threshold episode_success 0.500 >= 0.900 FAILED" in result.stdout
    # turn 0 is right in one episode of two: 0.5 meets the per-turn minimum
    assert "threshold per_turn[joint_goal_accuracy] 0.500 >= 0.500 ok" in result.stdout
    report = json.loads((project / "r.json").read_text())
    names = {t["name"]: t["passed"] for t in report["thresholds"]}
    assert names == {
        "error_rate": True,
        "episode_success": False,
        "per_turn[joint_goal_accuracy]": True,
    }


def test_rescore_with_another_run_shows_the_two_side_by_side(project: Path) -> None:
    _suite(project)
    runner = CliRunner()
    for mode in ("teacher_forced", "free_running"):
        assert (
            runner.invoke(app, ["run", "suite.yaml", "--no-phoenix", "--mode", mode]).exit_code == 0
        )
    runs = list_runs(project / ".stateval")  # oldest first: teacher-forced, free-running
    result = runner.invoke(
        app, ["rescore", runs[1], "--with", runs[0], "--no-phoenix", "--report-json", "r.json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((project / "r.json").read_text())
    assert {m: v["run_id"] for m, v in report["modes"].items()} == {
        "teacher_forced": runs[0],
        "free_running": runs[1],
    }


def test_an_unknown_mode_is_one_clear_line(project: Path) -> None:
    _suite(project)
    result = CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix", "--mode", "free"])
    assert result.exit_code == 2
    assert "--mode 'free': expected one of teacher_forced, free_running, both" in result.output
    assert "Traceback" not in result.output


def test_validate_counts_the_episodes(project: Path) -> None:
    _suite(project)
    result = CliRunner().invoke(app, ["validate", "suite.yaml"])
    assert result.exit_code == 0, result.output
    assert "ok (5 cases, 2 episodes, mutator python:episode_turns:track)" in result.stdout


def test_free_running_a_suite_without_episodes_is_one_clear_line(project: Path) -> None:
    path = project / "plain.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "mutator": {"type": "python", "callable": "episode_turns:track", "path": "."},
                "cases": {"inline": episode_cases()},
            }
        )
    )
    result = CliRunner().invoke(
        app, ["run", "plain.yaml", "--no-phoenix", "--mode", "free_running"]
    )
    assert result.exit_code == 2, result.output
    assert "free-running mode needs episodes" in result.output
    assert "Traceback" not in result.output
