"""Retention by memory age, and the table of episode metrics."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.episodes import (
    EPISODE_METRICS,
    RetentionTally,
    TrajectoryTally,
    TurnRecord,
    memory_ages,
    score_episode,
)
from stateval.suite import ThresholdsSpec

P_FORGET = 0.05
N_SLOTS = 10
P_RESET = 0.05


def _simulated_episode(rng: random.Random, e: int, turns: int) -> list[TurnRecord]:
    """A free-running episode: every slot set at turn 0, each re-set with probability 0.05 per
    turn; the mutator forgets each value it holds with probability 0.05 per turn, before the
    turn's updates, and a forgotten value stays forgotten until the gold sets it again."""
    held: set[str] = set()
    records = []
    for t in range(turns):
        held = {s for s in held if rng.random() >= P_FORGET}
        sets = {f"s{k}" for k in range(N_SLOTS) if t == 0 or rng.random() < P_RESET}
        held |= sets
        fields = tuple((f"s{k}", f"s{k}" in sets, f"s{k}" in held) for k in range(N_SLOTS))
        records.append(
            TurnRecord(t, f"e{e}:{t}", True, all(r for *_, r in fields), 1.0, fields=fields)
        )
    return records


def test_the_curve_matches_the_forgetting_law_over_1000_episodes_of_20_turns() -> None:
    rng = random.Random(2027)
    tally = RetentionTally()
    for e in range(1000):
        tally.add(_simulated_episode(rng, e, 20))
    curve = tally.result()
    by_age = {p.age: p for p in curve.points}
    assert by_age[0].accuracy == 1.0
    for age in range(1, 16):
        point = by_age[age]
        assert abs(point.accuracy - (1 - P_FORGET) ** age) <= 0.02, (age, point)
        assert point.low <= point.accuracy <= point.high
        assert point.n >= 1000
    assert curve.slope is not None
    assert curve.slope.significant
    assert curve.slope.slope < 0


def test_a_flat_curve_has_no_significant_slope() -> None:
    rng = random.Random(3)
    tally = RetentionTally()
    for e in range(300):
        turns = []
        for t in range(12):
            fields = tuple(("a", t == 0, rng.random() < 0.9) for _ in range(1))
            turns.append(TurnRecord(t, f"e{e}:{t}", True, True, 1.0, fields=fields))
        tally.add(turns)
    curve = tally.result()
    assert curve.slope is not None
    assert not curve.slope.significant


def test_memory_age_counts_from_the_last_set_and_from_before_the_start() -> None:
    turns = [
        TurnRecord(3, "d:3", True, True, 1.0, fields=(("kept", False, True), ("a", True, True))),
        TurnRecord(4, "d:4", True, True, 1.0, fields=(("kept", False, True), ("a", False, False))),
        TurnRecord(5, "d:5", True, True, 1.0, fields=(("kept", False, False), ("a", True, True))),
    ]
    assert list(memory_ages(turns)) == [
        ("kept", 1, True),
        ("a", 0, True),
        ("kept", 2, True),
        ("a", 1, False),
        ("kept", 3, False),
        ("a", 0, True),
    ]
    long = [
        TurnRecord(t, f"d:{t}", True, True, 1.0, fields=(("x", t == 0, t != 7),)) for t in range(9)
    ]
    score = score_episode("d", "free_running", long)
    assert (score.n_old, score.right_old, score.retention) == (4, 3, 0.75)  # ages 5..8


def test_every_thresholded_episode_metric_is_a_suite_threshold() -> None:
    marked = {
        name
        for name, info in ThresholdsSpec.model_fields.items()
        if isinstance(info.json_schema_extra, dict)
        and info.json_schema_extra.get("x-episode-metric")
    }
    assert marked == {m.name for m in EPISODE_METRICS.values() if m.threshold}
    assert "retention_at_5" in marked


def test_the_table_drives_the_summary_and_thresholds() -> None:
    rng = random.Random(11)
    tally = TrajectoryTally("free_running")
    for e in range(50):
        turns = _simulated_episode(rng, e, 12)
        tally.add(score_episode(f"e{e}", "free_running", turns), turns)
    summary = tally.summary()
    assert summary.retention is not None
    value = EPISODE_METRICS["retention_at_5"].run_value(summary)
    assert value == summary.retention.accuracy_from(5)
    assert value is not None
    assert 0.4 < value < 0.9


def test_run_reports_retention_in_both_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forgetting in free-running mode falls with age; teacher-forced turns start from the gold
    state each time, so their curve is flat past age 0; a ``retention_at_5`` minimum gates."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    rng = random.Random(5)
    lines = []
    for e in range(60):
        gold: dict[str, str] = {}
        for t in range(12):
            pre = dict(gold)
            sets = {f"s{k}": f"v{e}.{t}.{k}" for k in range(4) if t == 0 or rng.random() < 0.1}
            gold.update(sets)
            case = {
                "id": f"e{e}:{t}",
                "pre_state": pre,
                "input": {"prompt": json.dumps(sets)},
                "expected_post_state": dict(gold),
                "metadata": {"episode": f"e{e}", "turn": t},
            }
            lines.append(json.dumps(case))
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    name = "forget_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{name}.py").write_text(
        "import json, random\n"
        "from stateval.state import ValueConfidence\n"
        "def track(state, input):\n"
        "    out = state.copy()\n"
        "    for path in state.paths():\n"
        "        if random.Random(f'{input.message_id}:{path}').random() < 0.15:\n"
        "            out.remove(path)\n"
        "    for path, value in json.loads(input.prompt).items():\n"
        "        out.set_value(path, ValueConfidence(value, 1.0))\n"
        "    return out\n"
    )
    suite = {
        "name": "forgetting",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"file": "cases.jsonl"},
        "episodes": {"by": "metadata.episode", "order": "metadata.turn"},
        "thresholds": {"retention_at_5": 0.8},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
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
            "--report-html",
            "r.html",
            "--markdown",
            "r.md",
        ],
    )
    assert result.exit_code == 1, result.output  # free-running forgets: retention < 0.8
    report = json.loads((tmp_path / "r.json").read_text())
    free = report["modes"]["free_running"]["episodes"]["retention"]
    forced = report["modes"]["teacher_forced"]["episodes"]["retention"]
    assert free["slope"]["significant"]
    assert free["slope"]["slope"] < 0
    assert not forced["slope"]["significant"]
    assert free["accuracy_from_5"] < 0.6 < forced["accuracy_from_5"]
    gate = {t["name"]: t for t in report["thresholds"]}["retention_at_5"]
    assert gate["value"] in (free["accuracy_from_5"], forced["accuracy_from_5"])
    assert gate["passed"] is (gate["value"] >= 0.8)
    assert report["modes"]["teacher_forced"]["passed"] is True
    assert report["modes"]["free_running"]["passed"] is False
    assert "retention by memory age" in result.stdout
    assert 'data-chart="retention"' in (tmp_path / "r.html").read_text()
    assert "Retention by memory age" in (tmp_path / "r.md").read_text()
