"""The gate's power and its false verdict rate, by simulation with fixed seeds.

A field with no discordant pair (or too few for an exact test to ever reach alpha) cannot be
significant, so it must not dilute the fields that can (Tarone's correction for discrete tests,
then Holm over the testable fields).
"""

from __future__ import annotations

import random

import pytest

from stateval.regressions import (
    Observation,
    ScoredRun,
    diff_runs,
    gate_result,
    mcnemar_exact,
    tarone_testable,
)

ALPHA = 0.05


def _runs(base: list[dict[str, float]], cand: list[dict[str, float]]) -> tuple[ScoredRun, ...]:
    def run(label: str, rows: list[dict[str, float]]) -> ScoredRun:
        return ScoredRun(
            label,
            {
                f"c{i}": (Observation({f"field:{p}": v for p, v in row.items()}),)
                for i, row in enumerate(rows)
            },
        )

    return run("base", base), run("cand", cand)


def _smallest_exact_k(alpha: float) -> int:
    """The fewest k-to-0 discordant pairs whose exact two-sided p-value is below alpha."""
    k = 1
    while mcnemar_exact(k, 0) >= alpha:
        k += 1
    return k


def test_the_smallest_k_an_exact_test_allows_at_alpha_005_is_six() -> None:
    assert _smallest_exact_k(ALPHA) == 6  # 2 / 2**6 = 0.031; 2 / 2**5 = 0.0625


@pytest.mark.parametrize("unchanged", [10, 86, 500])
def test_a_planted_k_to_0_regression_among_unchanged_fields_is_caught(unchanged: int) -> None:
    k = _smallest_exact_k(ALPHA)
    n_cases = 40
    base = [{f"f{j}": 1.0 for j in range(unchanged)} | {"planted": 1.0} for _ in range(n_cases)]
    cand = [dict(row) for row in base]
    for i in range(k):
        cand[i]["planted"] = 0.0
    diff = diff_runs(*_runs(base, cand), alpha=ALPHA, resamples=50)
    assert [f.path for f in diff.regressed_fields] == ["planted"]
    assert not gate_result(diff).passed
    # one fewer discordant pair can never be significant: no verdict, however the others look
    cand[0]["planted"] = 1.0
    assert diff_runs(*_runs(base, cand), alpha=ALPHA, resamples=50).regressed_fields == ()


def test_the_sgd_case_eleven_to_zero_among_87_fields_fails_the_gate() -> None:
    # The SGD run: 87 fields, 72 never changed, 14 changed a little both ways, and
    # RentalCars_1.pickup_time got wrong in 11 more turns and right in none.
    rng = random.Random(24)
    n_cases = 200
    base = [{f"f{j}": 1.0 for j in range(86)} | {"pickup_time": 1.0} for _ in range(n_cases)]
    cand = [dict(row) for row in base]
    for j in range(72, 86):  # 14 noisy fields: one or two cases each way
        for _ in range(rng.randint(1, 2)):
            base[rng.randrange(n_cases)][f"f{j}"] = 0.0
            cand[rng.randrange(n_cases)][f"f{j}"] = 0.0
    for i in range(11):
        cand[i]["pickup_time"] = 0.0
    diff = diff_runs(*_runs(base, cand), alpha=ALPHA, resamples=50)
    assert [f.path for f in diff.regressed_fields] == ["pickup_time"]
    planted = diff.regressed_fields[0]
    assert planted.p_value == pytest.approx(2 / 2**11)
    assert planted.p_adjusted < ALPHA
    assert not gate_result(diff).passed


def test_untestable_fields_have_p_adjusted_one_and_are_counted() -> None:
    base = [{"a": 1.0, "b": 1.0, "c": 1.0} for _ in range(30)]
    cand = [dict(row) for row in base]
    for i in range(8):
        cand[i]["a"] = 0.0
    cand[0]["b"] = 0.0  # one discordant pair: p >= 1, never testable
    diff = diff_runs(*_runs(base, cand), alpha=ALPHA, resamples=50)
    by_path = {f.path: f for f in diff.fields}
    assert by_path["b"].p_adjusted == 1.0
    assert by_path["c"].p_adjusted == 1.0
    assert by_path["a"].p_adjusted == pytest.approx(by_path["a"].p_value)  # alone in its family
    assert diff.tested_fields == 1
    assert diff.to_dict()["tested_fields"] == 1


def test_tarone_keeps_fields_whose_smallest_p_reaches_alpha_over_the_family() -> None:
    # minimum p-values 2 / 2**n: n = 6 -> 0.031, 7 -> 0.016, 10 -> 0.002
    assert tarone_testable([0, 0, 3, 10], ALPHA) == [False, False, False, True]
    # two fields of 6 pairs: K=1 keeps both (2 > 1), K=2 needs p_min <= 0.025: neither
    assert tarone_testable([6, 6], ALPHA) == [False, False]
    assert tarone_testable([7, 7], ALPHA) == [True, True]
    assert tarone_testable([], ALPHA) == []


def _noise_runs(seed: int) -> tuple[ScoredRun, ...]:
    """Two runs of one tracker: every field right with its own probability in both runs,
    independently per run (no change at all); most fields always right."""
    rng = random.Random(seed)
    n_cases, n_fields = 60, 40
    rates = [1.0 if j < 25 else rng.choice([0.7, 0.85, 0.95]) for j in range(n_fields)]

    def rows() -> list[dict[str, float]]:
        return [
            {f"f{j}": float(rng.random() < rates[j]) for j in range(n_fields)}
            for _ in range(n_cases)
        ]

    return _runs(rows(), rows())


def test_the_false_verdict_rate_on_noise_is_at_most_alpha() -> None:
    runs = 400
    diffs = [diff_runs(*_noise_runs(seed), alpha=ALPHA, resamples=10) for seed in range(runs)]
    false = sum(bool(d.regressed_fields or d.improved_fields) for d in diffs)
    assert false / runs <= ALPHA
    # the simulation is not vacuous: some fields were tested in most diffs
    assert sum(d.tested_fields > 0 for d in diffs) > runs / 2


def test_mean_time_is_shown_but_never_judged() -> None:
    # A loaded machine makes every call slower: that is not the mutator regressing.
    base = ScoredRun("b", {f"c{i}": (Observation({}, time_used=0.1),) for i in range(30)})
    cand = ScoredRun("c", {f"c{i}": (Observation({}, time_used=0.3),) for i in range(30)})
    time = next(m for m in diff_runs(base, cand, resamples=200).metrics if m.name == "mean_time")
    assert time.change == pytest.approx(0.2)
    assert time.interval is not None
    assert time.interval.excludes_zero
    assert time.verdict == "not judged"
    assert time.to_dict()["verdict"] == "not judged"
