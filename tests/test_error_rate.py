"""Production error rates from flags and a human sample: coverage and width by simulation."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from stateval.calibration import estimate_error_rate

SETTINGS = [
    # (true error rate, the check's recall, its false-flag rate)
    (0.10, 0.80, 0.05),
    (0.05, 0.50, 0.10),
    (0.20, 0.95, 0.02),
    (0.02, 0.70, 0.01),
    (0.01, 0.50, 0.05),
    (0.30, 0.60, 0.20),
]


@cache
def _simulate(
    rate: float, recall: float, false_flags: float, runs: int = 1000, seed: int = 0
) -> tuple[float, float, float]:
    """Coverage of the corrected and human-only intervals, and their mean width ratio."""
    rng = np.random.default_rng(seed)
    spans, labelled = 5000, 200
    covered = covered_human = 0
    widths, human_widths = [], []
    for _ in range(runs):
        errors = rng.random(spans) < rate
        flags = np.where(errors, rng.random(spans) < recall, rng.random(spans) < false_flags)
        sample = rng.choice(spans, labelled, replace=False)
        truth = errors.mean()
        rates = estimate_error_rate(flags, errors[sample], flags[sample])
        corrected, human = rates.corrected, rates.human
        assert corrected.low is not None
        assert corrected.high is not None
        assert human.low is not None
        assert human.high is not None
        covered += corrected.low <= truth <= corrected.high
        covered_human += human.low <= truth <= human.high
        widths.append(corrected.high - corrected.low)
        human_widths.append(human.high - human.low)
    return covered / runs, covered_human / runs, float(np.mean(widths) / np.mean(human_widths))


@pytest.mark.parametrize(("rate", "recall", "false_flags"), SETTINGS)
def test_the_95_percent_interval_covers_the_true_rate(
    rate: float, recall: float, false_flags: float
) -> None:
    coverage, human_coverage, _ = _simulate(rate, recall, false_flags)
    assert coverage >= 0.94
    assert human_coverage >= 0.93  # the Wilson interval, for reference


@pytest.mark.parametrize(
    ("rate", "recall", "false_flags", "at_most"),
    [(0.20, 0.95, 0.02, 0.6), (0.10, 0.80, 0.05, 0.85), (0.05, 0.50, 0.10, 1.05)],
)
def test_an_informative_check_narrows_the_interval(
    rate: float, recall: float, false_flags: float, at_most: float
) -> None:
    # The same simulations as the coverage test (cached): width against the human-only interval.
    _, _, ratio = _simulate(rate, recall, false_flags)
    assert ratio <= at_most


def test_the_flag_rate_is_not_the_error_rate() -> None:
    # The check flags 10% of spans; humans find that half the flags are false and that as many
    # errors hide among unflagged spans as the flags catch: the error rate is 14%, not 10%.
    flags = [True] * 100 + [False] * 900
    labelled_flags = [True] * 20 + [False] * 180
    labelled_errors = [True] * 10 + [False] * 10 + [True] * 18 + [False] * 162
    rates = estimate_error_rate(flags, labelled_errors, labelled_flags)
    assert rates.flag_rate.estimate == pytest.approx(0.10)
    assert rates.corrected.estimate == pytest.approx(0.1 * 0.5 + 0.9 * 0.1)
    assert rates.human.estimate == pytest.approx(28 / 200)


def test_no_human_sample_is_not_measurable_with_the_reason() -> None:
    rates = estimate_error_rate([True, False] * 50, [], [])
    assert rates.flag_rate.estimate == pytest.approx(0.5)
    assert not rates.human.measurable
    assert not rates.corrected.measurable
    assert rates.corrected.estimate is None
    assert rates.corrected.reason == "no human-labelled sample to correct with"
    assert rates.human.reason == "no human-labelled sample for this field"


def test_a_field_with_no_flags_is_not_measurable_beyond_the_humans() -> None:
    rates = estimate_error_rate([False] * 500, [True] * 3 + [False] * 47, [False] * 50)
    assert not rates.corrected.measurable
    assert rates.corrected.reason is not None
    assert "flagged no span" in rates.corrected.reason
    assert rates.human.estimate == pytest.approx(3 / 50)


def test_too_small_a_sample_or_no_spans_is_not_measurable() -> None:
    rates = estimate_error_rate([True, False] * 10, [True, False], [True, False])
    assert not rates.corrected.measurable
    assert rates.corrected.reason == "2 labelled spans (at least 10 needed)"
    empty = estimate_error_rate([], [], [])
    assert not empty.flag_rate.measurable
    assert empty.flag_rate.reason == "no span was checked for this field"


def test_mismatched_labelled_lists_are_refused() -> None:
    with pytest.raises(ValueError, match="labelled_errors has 2 spans, labelled_flags 1"):
        estimate_error_rate([True], [True, False], [True])


def test_estimates_serialise_with_their_reasons() -> None:
    data = estimate_error_rate([False] * 10, [], []).to_dict()
    assert data["corrected"] == {
        "method": "prediction-powered",
        "estimate": None,
        "low": None,
        "high": None,
        "n": 0,
        "reason": "no human-labelled sample to correct with",
    }
