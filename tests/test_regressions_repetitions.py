"""Repeated runs: per-field mean with an interval, and flakiness."""

from __future__ import annotations

import random

import pytest
from rich.console import Console

from stateval.regressions import (
    Observation,
    ScoredRun,
    bootstrap_mean,
    field_stability,
    print_stability,
)


def _obs(**fields: float) -> Observation:
    return Observation({f"field:{k}": v for k, v in fields.items()})


def test_flakiness_counts_cases_whose_repetitions_disagree() -> None:
    run = ScoredRun(
        "r",
        {
            "a": (_obs(x=1, y=1), _obs(x=0, y=1), _obs(x=1, y=1)),  # x flaky
            "b": (_obs(x=0, y=1), _obs(x=0, y=1), _obs(x=0, y=1)),  # x always wrong
            "c": (_obs(x=1), _obs(x=1, y=0), _obs(x=1)),  # y: right, wrong (extra), right
            "d": (_obs(x=1, y=1), _obs(x=1, y=1), _obs(x=1, y=1)),
        },
    )
    by_path = {f.path: f for f in field_stability(run, resamples=500)}
    x, y = by_path["x"], by_path["y"]
    assert (x.n, x.flaky, x.flaky_cases) == (4, 1, ("a",))
    assert x.mean == pytest.approx((2 / 3 + 0 + 1 + 1) / 4)
    assert x.flakiness == pytest.approx(0.25)
    assert (y.n, y.flaky, y.flaky_cases) == (4, 1, ("c",))
    assert y.mean == pytest.approx((1 + 1 + 2 / 3 + 1) / 4)
    assert [f.path for f in field_stability(run)] == ["x", "y"]  # as flaky: lower mean first
    assert x.to_dict()["flakiness"] == pytest.approx(0.25)


def test_a_deterministic_field_is_never_flaky_and_its_interval_is_a_point() -> None:
    run = ScoredRun("r", {f"c{i}": (_obs(x=1), _obs(x=1)) for i in range(10)})
    (x,) = field_stability(run)
    assert (x.mean, x.flaky) == (1.0, 0)
    assert x.interval is not None
    assert (x.interval.low, x.interval.high) == (1.0, 1.0)


def test_the_interval_covers_the_true_accuracy_of_a_noisy_field() -> None:
    rng = random.Random(3)
    run = ScoredRun(
        "r",
        {f"c{i}": tuple(_obs(x=float(rng.random() < 0.7)) for _ in range(3)) for i in range(300)},
    )
    (x,) = field_stability(run, seed=1)
    assert x.interval is not None
    assert x.interval.low < 0.7 < x.interval.high
    assert x.interval.high - x.interval.low < 0.1
    # independent repetitions at 0.7 disagree with probability 1 - 0.7**3 - 0.3**3 = 0.63
    assert x.flakiness == pytest.approx(0.63, abs=0.06)


def test_bootstrap_mean_of_two_values_spans_them() -> None:
    interval = bootstrap_mean([0.0, 1.0], seed=0)
    assert interval is not None
    assert (interval.estimate, interval.low, interval.high) == (0.5, 0.0, 1.0)
    assert bootstrap_mean([1.0]) is None


def test_the_table_shows_mean_interval_and_flakiness() -> None:
    run = ScoredRun("r", {"a": (_obs(x=1), _obs(x=0)), "b": (_obs(x=1), _obs(x=1))})
    console = Console(record=True, width=120)
    print_stability(field_stability(run), 2, console)
    text = console.export_text()
    assert "fields over 2 repetitions" in text
    assert "75.0%" in text
    assert "50.0%" in text  # one of two cases flaky


def test_from_normal_from_cases_the_interval_is_the_normal_one_and_agrees_with_the_bootstrap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import statistics

    from stateval.regressions import NORMAL_FROM, _stats

    rng = random.Random(5)
    values = [rng.choice((0.0, 1 / 3, 2 / 3, 1.0)) for _ in range(NORMAL_FROM)]
    normal = bootstrap_mean(values, seed=0)
    assert normal is not None
    error = statistics.stdev(values) / len(values) ** 0.5
    z = statistics.NormalDist().inv_cdf(0.975)
    assert normal.estimate == pytest.approx(statistics.fmean(values))
    assert normal.low == pytest.approx(normal.estimate - z * error)
    assert normal.high == pytest.approx(normal.estimate + z * error)
    assert bootstrap_mean(values, seed=1) == normal  # no resampling: no seed
    monkeypatch.setattr(_stats, "NORMAL_FROM", NORMAL_FROM + 1)  # the bootstrap, one value short
    resampled = bootstrap_mean(values, seed=0)
    assert resampled is not None
    half = (resampled.high - resampled.low) / 2
    assert abs(resampled.low - normal.low) < 0.15 * half
    assert abs(resampled.high - normal.high) < 0.15 * half
