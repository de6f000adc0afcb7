"""Paired diffs of two runs: field verdicts, run-level intervals, unpaired cases, rendering."""

from __future__ import annotations

import random

import pytest
from rich.console import Console

from stateval.regressions import (
    DEFAULT_GATE,
    Observation,
    ScoredRun,
    diff_runs,
    gate_result,
    markdown_diff,
    print_diff,
)
from stateval.suite import RegressionsSpec

FIELDS = ("hotel.area", "hotel.stars", "hotel.parking", "train.day", "train.dest")


def _simulated(
    seed: int, n: int = 300, planted: str | None = "hotel.area"
) -> tuple[ScoredRun, ScoredRun]:
    """Two runs of the same cases: every field right with probability 0.8 in both, except
    ``planted``, right with 0.9 in the baseline and 0.6 in the candidate."""
    rng = random.Random(seed)

    def run(label: str, candidate: bool) -> ScoredRun:
        cases = {}
        for i in range(n):
            scores = {}
            for path in FIELDS:
                p = 0.8
                if path == planted:
                    p = 0.6 if candidate else 0.9
                scores[f"field:{path}"] = float(rng.random() < p)
            slot = sum(scores.values()) / len(scores)
            scores["slot_accuracy"] = slot
            scores["state_accuracy"] = slot
            scores["overall_match"] = float(slot == 1.0)
            cases[f"c{i}"] = (Observation(scores, time_used=0.01),)
        return ScoredRun(label, cases)

    return run("base", False), run("cand", True)


def test_a_planted_regression_is_detected_in_every_seed() -> None:
    for seed in range(20):
        base, cand = _simulated(seed)
        diff = diff_runs(base, cand, seed=seed, resamples=500)
        assert [f.path for f in diff.regressed_fields] == ["hotel.area"], seed
        assert diff.fields[0].path == "hotel.area"  # worst first
        metrics = {m.name: m for m in diff.metrics}
        assert metrics["slot_accuracy"].verdict == "regressed", seed
        interval = metrics["slot_accuracy"].interval
        assert interval is not None
        assert interval.high < 0
        assert metrics["joint_goal_accuracy"].change is not None
        assert metrics["joint_goal_accuracy"].change < 0


def test_noise_alone_gives_no_false_verdict_at_alpha_005() -> None:
    # Holm keeps the chance of any false field verdict per diff at or below alpha; over 200
    # seeded pairs of same-quality runs, at most 5% may have one, and the first 20 none.
    seeds_with_false = 0
    for seed in range(200):
        base, cand = _simulated(seed, n=150, planted=None)
        diff = diff_runs(base, cand, alpha=0.05, seed=seed, resamples=100)
        if diff.regressed_fields or diff.improved_fields:
            seeds_with_false += 1
            assert seed >= 20, f"false verdict at seed {seed}"
    assert seeds_with_false <= 10


def test_the_planted_field_leaves_the_other_fields_without_verdicts() -> None:
    false = 0
    for seed in range(50):
        diff = diff_runs(*_simulated(seed), seed=seed, resamples=200)
        false += sum(
            1 for f in diff.fields if f.path != "hotel.area" and f.verdict != "no evidence"
        )
    assert false <= 2


def _run(label: str, cases: dict[str, list[dict[str, float]]], **labels: str) -> ScoredRun:
    return ScoredRun(
        label,
        {
            case_id: tuple(Observation(scores, labels=dict(labels)) for scores in reps)
            for case_id, reps in cases.items()
        },
    )


def test_counts_per_field_and_unpaired_cases() -> None:
    base = _run(
        "b",
        {
            "a": [{"field:x": 1.0, "field:y": 1.0}],
            "b": [{"field:x": 1.0, "field:y": 0.0}],
            "c": [{"field:x": 0.0}],
            "gone": [{"field:x": 1.0}],
        },
    )
    cand = _run(
        "c",
        {
            "a": [{"field:x": 0.0, "field:y": 1.0}],
            "b": [{"field:x": 1.0, "field:y": 1.0}],
            "c": [{"field:x": 0.0, "field:y": 0.0}],  # y extra here: base had it right
            "new": [{"field:x": 0.0}],
        },
    )
    diff = diff_runs(base, cand)
    assert diff.n_paired == 3
    assert (diff.removed, diff.added) == (("gone",), ("new",))
    x = next(f for f in diff.fields if f.path == "x")
    assert (x.n, x.regressed, x.improved, x.unchanged) == (3, 1, 0, 2)
    assert x.regressed_cases == ("a",)
    assert x.base_accuracy == pytest.approx(2 / 3)
    assert x.cand_accuracy == pytest.approx(1 / 3)
    y = next(f for f in diff.fields if f.path == "y")
    assert (y.n, y.regressed, y.improved) == (3, 1, 1)
    assert set(y.regressed_cases) == {"c"}
    assert y.improved_cases == ("b",)
    assert all(f.verdict == "no evidence" for f in diff.fields)  # far too few cases
    data = diff.to_dict()
    assert data["removed"] == ["gone"]
    assert data["added"] == ["new"]


def test_repetitions_compare_each_case_mean() -> None:
    # Three repetitions per case: the baseline is right 3/3, the candidate 1/3 on 12 cases.
    base = _run("b", {f"c{i}": [{"field:x": 1.0}] * 3 for i in range(12)})
    cand = _run(
        "c", {f"c{i}": [{"field:x": 1.0}, {"field:x": 0.0}, {"field:x": 0.0}] for i in range(12)}
    )
    diff = diff_runs(base, cand, resamples=300)
    x = diff.fields[0]
    assert (x.regressed, x.improved) == (12, 0)
    assert x.cand_accuracy == pytest.approx(1 / 3)
    assert x.verdict == "regressed"
    assert (diff.base_repetitions, diff.cand_repetitions) == (3, 3)


def test_error_rate_regresses_when_it_goes_up_and_time_is_not_judged() -> None:
    base = ScoredRun(
        "b", {f"c{i}": (Observation({}, error=False, time_used=0.1),) for i in range(30)}
    )
    cand = ScoredRun(
        "c", {f"c{i}": (Observation({}, error=i < 20, time_used=0.3),) for i in range(30)}
    )
    metrics = {m.name: m for m in diff_runs(base, cand, resamples=500).metrics}
    assert metrics["error_rate"].verdict == "regressed"
    assert metrics["error_rate"].change == pytest.approx(20 / 30)
    assert metrics["mean_time"].verdict == "not judged"  # machine load, not the mutator
    assert not metrics["mean_time"].higher_is_better


def test_pooled_accuracy_leaves_extra_fields_out() -> None:
    base = _run(
        "b",
        {"a": [{"field:x": 1.0, "field:y": 0.0}], "b": [{"field:x": 1.0}]},
        **{"field:y": "extra"},
    )
    cand = _run(
        "c",
        {"a": [{"field:x": 0.0, "field:y": 0.0}], "b": [{"field:x": 1.0}]},
        **{"field:y": "extra"},
    )
    accuracy = next(m for m in diff_runs(base, cand).metrics if m.name == "accuracy")
    assert (accuracy.base, accuracy.cand) == (1.0, 0.5)


def test_gate_counts_regressed_fields_against_the_suite_limit() -> None:
    diff = diff_runs(*_simulated(1), resamples=200)
    assert not gate_result(diff).passed
    assert gate_result(diff, RegressionsSpec(max_regressed_fields=1)).passed
    assert DEFAULT_GATE.max_regressed_fields == 0
    assert DEFAULT_GATE.alpha == 0.05


def test_terminal_and_markdown_put_the_regression_first() -> None:
    diff = diff_runs(*_simulated(2), resamples=200)
    console = Console(record=True, width=140)
    print_diff(diff, console)
    text = console.export_text()
    assert "hotel.area" in text
    assert "regressed" in text
    assert "1 field(s) regressed" in text
    assert "joint_goal_accuracy" in text
    md = markdown_diff(diff)
    assert md.startswith("### :x: stateval: 1 field(s) regressed")
    regressed_section = md.split("**Regressed**")[1].split("**Run metrics**")[0]
    assert "`hotel.area`" in regressed_section
    assert "| joint_goal_accuracy |" in md


def test_alpha_must_be_a_probability() -> None:
    with pytest.raises(ValueError, match="alpha"):
        diff_runs(*_simulated(0, n=5), alpha=1.5)


def test_value_precision_recall_and_f1_count_the_field_labels() -> None:
    def obs(**labels: str) -> Observation:
        scores = {f"field:{k}": float(v == "matching") for k, v in labels.items()}
        return Observation(scores, {f"field:{k}": v for k, v in labels.items()})

    # baseline: 2 matching; candidate: 1 matching, 1 mismatched, 1 missing, 1 extra
    base = ScoredRun("b", {"a": (obs(x="matching", y="matching"),), "b": (obs(z="matching"),)})
    cand = ScoredRun(
        "c",
        {"a": (obs(x="matching", y="mismatched", w="extra"),), "b": (obs(z="missing"),)},
    )
    metrics = {m.name: m for m in diff_runs(base, cand).metrics}
    assert metrics["value_precision"].cand == pytest.approx(1 / 3)  # TP / (TP + mism. + extra)
    assert metrics["value_recall"].cand == pytest.approx(1 / 3)  # TP / (TP + mism. + missing)
    assert metrics["value_f1"].cand == pytest.approx(2 / (2 + 2 + 1 + 1))
    assert metrics["value_f1"].base == 1.0
