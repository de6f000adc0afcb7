"""One metrics API: the exported `slot_metrics` / `joint_goal_accuracy` are the run's figures, and
``stateval diff`` reads a run's ``slot_accuracy`` as its summary does."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateval.cli import app
from stateval.compare import (
    MetricsAccumulator,
    compare_states,
    joint_goal_accuracy,
    slot_metrics,
)
from stateval.state import InterpretiveState

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "multiwoz"
SLOTS = ["a", "b", "c", "d"]


def _random_state(rng: random.Random) -> InterpretiveState:
    paths = [*SLOTS, "outside"]
    return InterpretiveState.from_flat({p: rng.choice("xy") for p in paths if rng.random() < 0.6})


def test_slot_metrics_and_joint_goal_equal_the_runs_in_300_random_trials() -> None:
    rng = random.Random(7)
    for _ in range(300):
        pairs = [(_random_state(rng), _random_state(rng)) for _ in range(rng.randint(1, 6))]
        acc = MetricsAccumulator(slots=SLOTS)
        for want, got in pairs:
            acc.add(compare_states(want, got))
        run = acc.result()
        exported = slot_metrics(pairs, SLOTS)
        assert exported.joint_goal_accuracy == run.joint_goal_accuracy
        assert exported.slot_accuracy == run.slot_accuracy
        assert (exported.precision, exported.recall) == (run.precision, run.recall)
        comparisons = [compare_states(w, g) for w, g in pairs]
        assert joint_goal_accuracy(comparisons, slots=SLOTS) == run.joint_goal_accuracy
        no_schema = MetricsAccumulator()
        for c in comparisons:
            no_schema.add(c)
        assert joint_goal_accuracy(comparisons) == no_schema.result().joint_goal_accuracy


def test_a_slot_outside_the_schema_does_not_break_the_joint_goal() -> None:
    want = InterpretiveState.from_flat({"a": "x"})
    got = InterpretiveState.from_flat({"a": "x", "outside": "y"})
    assert joint_goal_accuracy([compare_states(want, got)], slots=SLOTS) == 1.0
    assert slot_metrics([(want, got)], SLOTS).joint_goal_accuracy == 1.0
    assert joint_goal_accuracy([compare_states(want, got)]) == 0.0


def test_diff_reads_the_runs_slot_accuracy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The MultiWOZ schema suite scores a varying number of slots per turn: the summary pools
    them (right slots over scored slots) and so must the diff (it took the mean of the turns'
    fractions: 94.7% against the summary's 95.7%)."""
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    report = tmp_path / "r.json"
    ran = CliRunner().invoke(
        app, ["run", "suite_schema.yaml", "--no-phoenix", "--report-json", str(report)]
    )
    assert ran.exit_code == 0, ran.output
    summary = json.loads(report.read_text())
    diffed = CliRunner().invoke(
        app, ["diff", "latest", "latest", "--suite", "suite_schema.yaml", "--json"]
    )
    assert diffed.exit_code == 0, diffed.output
    metrics = {m["name"]: m for m in json.loads(diffed.stdout)["metrics"]}
    for name in ("slot_accuracy", "joint_goal_accuracy"):
        assert metrics[name]["base"] == pytest.approx(summary[name], abs=1e-12), name
    turn_mean = sum(
        e["score"]
        for c in summary["cases"]
        for e in c["evaluations"]
        if e["name"] == "slot_accuracy"
    ) / len(summary["cases"])
    assert abs(turn_mean - summary["slot_accuracy"]) > 1e-3  # the two readings do differ here


@pytest.mark.phoenix
def test_diff_reads_the_same_figures_from_the_phoenix_experiment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, phoenix_url: str
) -> None:
    """The experiment a run uploads, read back over REST, gives the diff the run's own slot
    accuracy and edit-operation rates (their counts travel in the evaluations' explanations)."""
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    report = tmp_path / "r.json"
    ran = CliRunner().invoke(
        app,
        ["run", "suite_schema.yaml", "--phoenix-url", phoenix_url, "--report-json", str(report)],
    )
    assert ran.exit_code == 0, ran.output
    summary = json.loads(report.read_text())
    experiment = summary["experiment_url"].split("experimentId=")[1]
    diffed = CliRunner().invoke(
        app,
        [
            "diff",
            experiment,
            "latest",
            "--suite",
            "suite_schema.yaml",
            "--phoenix-url",
            phoenix_url,
            "--json",
        ],
    )
    assert diffed.exit_code == 0, diffed.output
    metrics = {m["name"]: m for m in json.loads(diffed.stdout)["metrics"]}
    assert metrics["slot_accuracy"]["base"] == pytest.approx(summary["slot_accuracy"], abs=1e-12)
    pooled = summary["edits"]["pooled"]
    for name in ("update_propagation_rate", "staleness_rate", "deletion_success"):
        assert metrics[name]["base"] == pytest.approx(pooled[name], abs=1e-12), name
        assert metrics[name]["cand"] == pytest.approx(pooled[name], abs=1e-12), name
