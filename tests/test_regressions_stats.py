"""The statistics behind diff verdicts, against values computed by hand."""

from __future__ import annotations

import math
import random

import pytest

from stateval.regressions import holm, mcnemar_exact, paired_bootstrap


def _two_sided_sign_test(k: int, n: int) -> float:
    """By hand: 2 * P(X <= min(k, n-k)) for X ~ Binomial(n, 1/2), capped at 1."""
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail)


@pytest.mark.parametrize(
    ("regressed", "improved", "expected"),
    [
        (1, 9, 22 / 1024),  # 2 * (1 + 10) / 2**10
        (0, 6, 2 / 64),  # 2 * 1 / 2**6
        (5, 5, 1.0),
        (3, 0, 0.25),  # 2 * 1 / 2**3
        (0, 0, 1.0),  # no discordant pair: no evidence
    ],
)
def test_mcnemar_exact_matches_the_binomial_tail_computed_by_hand(
    regressed: int, improved: int, expected: float
) -> None:
    assert mcnemar_exact(regressed, improved) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_exact_is_symmetric_and_agrees_with_the_sign_test_formula() -> None:
    for n in range(1, 30):
        for k in range(n + 1):
            p = mcnemar_exact(k, n - k)
            assert p == pytest.approx(_two_sided_sign_test(k, n), rel=1e-9)
            assert p == pytest.approx(mcnemar_exact(n - k, k), rel=1e-12)


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="negative"):
        mcnemar_exact(-1, 3)


def test_holm_adjusts_step_down_and_keeps_order() -> None:
    # sorted 0.01, 0.02, 0.03, 0.5 -> 4*0.01, 3*0.02, max(2*0.03, .06), max(1*0.5, .06)
    assert holm([0.5, 0.02, 0.01, 0.03]) == pytest.approx([0.5, 0.06, 0.04, 0.06])
    assert holm([0.9, 0.01]) == pytest.approx([0.9, 0.02])
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # 2 * 0.8 capped at 1, then monotone
    assert holm([]) == []


def test_bootstrap_of_two_cases_spans_their_two_differences() -> None:
    # Resampling 2 cases: both first (1/4), one each (1/2), both second (1/4), so the 2.5th
    # and 97.5th percentiles are the two per-case differences.
    interval = paired_bootstrap([0, 1], [1, 1], [0.5, 1], [1, 1], seed=3)
    assert interval is not None
    assert interval.estimate == pytest.approx(0.25)
    assert (interval.low, interval.high) == pytest.approx((0.0, 0.5))


def test_bootstrap_of_a_constant_difference_is_that_difference() -> None:
    interval = paired_bootstrap([1, 1, 1], [1, 1, 1], [0, 0, 0], [1, 1, 1])
    assert interval is not None
    assert (interval.estimate, interval.low, interval.high) == (-1.0, -1.0, -1.0)
    assert interval.excludes_zero


def test_bootstrap_of_a_mean_difference_is_close_to_the_normal_interval() -> None:
    rng = random.Random(7)
    base = [float(rng.random() < 0.8) for _ in range(400)]
    cand = [float(rng.random() < 0.7) for _ in range(400)]
    ones = [1.0] * 400
    interval = paired_bootstrap(base, ones, cand, ones, seed=0, resamples=4000)
    assert interval is not None
    d = [c - b for b, c in zip(base, cand, strict=True)]
    mean = sum(d) / len(d)
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1))
    half = 1.96 * sd / math.sqrt(len(d))
    assert interval.estimate == pytest.approx(mean)
    assert interval.low == pytest.approx(mean - half, abs=0.01)
    assert interval.high == pytest.approx(mean + half, abs=0.01)


def test_bootstrap_is_seeded_and_pools_ratios() -> None:
    num_b, den_b = [1, 2, 0, 3], [2, 2, 1, 4]  # pooled 6/9
    num_c, den_c = [2, 1, 1, 3], [2, 2, 1, 4]  # pooled 7/9
    first = paired_bootstrap(num_b, den_b, num_c, den_c, seed=11)
    again = paired_bootstrap(num_b, den_b, num_c, den_c, seed=11)
    assert first == again
    assert first is not None
    assert first.estimate == pytest.approx(7 / 9 - 6 / 9)


def test_bootstrap_needs_two_usable_cases() -> None:
    assert paired_bootstrap([1], [1], [0], [1]) is None
    assert paired_bootstrap([1, 1], [1, 0], [0, 1], [1, 1]) is None  # one case has no denominator


def test_the_docstring_examples_run() -> None:
    import doctest

    from stateval.regressions import _diff, _gate, _links, _stats

    for module in (_stats, _links, _diff, _gate):
        result = doctest.testmod(module)
        assert result.attempted > 0, module.__name__
        assert result.failed == 0, module.__name__
