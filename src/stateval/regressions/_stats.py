"""The two tests behind every verdict: exact McNemar with Tarone's and Holm's corrections for
fields, and a paired interval for run-level metrics: a seeded bootstrap up to `NORMAL_FROM`
paired cases, the paired normal (delta-method) interval of the ratio difference from there on.

scipy does the statistics (`scipy.stats.binomtest`, `scipy.stats.bootstrap`); Holm's step-down
is the few lines below because scipy has no family-wise correction and statsmodels is too heavy
a dependency for them. Why the normal interval at large n: a bootstrap costs resamples x cases
per metric (2,000 x 100,000 = 2e8 per metric, minutes for a diff), while each metric is a ratio
of sums over cases, whose sampling distribution is normal to within the bootstrap's own Monte
Carlo error at thousands of cases (the central limit theorem with the delta method); the
percentile bootstrap converges to exactly this interval as n grows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

__all__ = [
    "NORMAL_FROM",
    "Interval",
    "bootstrap_mean",
    "holm",
    "mcnemar_exact",
    "paired_bootstrap",
    "paired_normal",
    "tarone_testable",
]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]

NORMAL_FROM = 5000
"""From this many usable paired cases on, `paired_bootstrap` gives the paired normal interval
(O(n), no resampling), and `bootstrap_mean` the normal interval of the mean; below, the seeded
percentile bootstrap."""


def mcnemar_exact(regressed: int, improved: int) -> float:
    """The two-sided exact McNemar p-value of ``regressed`` against ``improved`` discordant pairs.

    Under "no change" each discordant pair is a fair coin, so the p-value is the binomial test
    of ``regressed`` successes in ``regressed + improved`` trials at 0.5.

    Example:
        >>> round(mcnemar_exact(1, 9), 6)   # 2 * (C(10,0) + C(10,1)) / 2**10
        0.021484
        >>> mcnemar_exact(0, 0)
        1.0
    """
    if regressed < 0 or improved < 0:
        raise ValueError("discordant pair counts cannot be negative")
    n = regressed + improved
    if n == 0:
        return 1.0
    from scipy.stats import binomtest

    return min(1.0, float(binomtest(regressed, n, 0.5, alternative="two-sided").pvalue))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (family-wise error control).

    Example:
        >>> holm([0.01, 0.04, 0.03])   # sorted: 0.01*3, max(0.03*2, .03), max(0.04*1, .06)
        [0.03, 0.06, 0.06]
    """
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


def tarone_testable(discordant: Sequence[int], alpha: float) -> list[bool]:
    """Which fields can reach significance at all (Tarone 1990, for discrete tests).

    A field with ``n`` discordant pairs has an exact McNemar p-value of at least
    ``2 / 2**n``: with none, or with five or fewer at alpha 0.05, it can never be significant,
    and counting it in a family-wise correction only dilutes the fields that can. Tarone's K is
    the smallest K whose fields with minimum p <= alpha / K number at most K; those fields are
    the testable ones. Given the discordant counts (the exact test conditions on them) the
    family is fixed, so Holm over it keeps the chance of any false verdict at or below alpha.

    Example:
        >>> tarone_testable([0, 0, 3, 10], 0.05)   # 10 pairs: min p 0.002; 3 pairs: 0.25
        [False, False, False, True]
    """
    minimum = [min(1.0, 2.0 ** (1 - n)) for n in discordant]  # mcnemar_exact(n, 0)
    for k in range(1, len(minimum) + 1):
        chosen = [p <= alpha / k for p in minimum]
        if sum(chosen) <= k:
            return chosen
    return [False] * len(minimum)


@dataclass(frozen=True, slots=True)
class Interval:
    """A bootstrap interval of a difference (candidate minus baseline).

    Attributes:
        estimate: The difference on the full sample.
        low: The interval's lower end.
        high: The interval's upper end.
        confidence: Its confidence level (0.95).
    """

    estimate: float
    low: float
    high: float
    confidence: float

    @property
    def excludes_zero(self) -> bool:
        """True when the whole interval lies on one side of zero."""
        return self.low > 0 or self.high < 0


def _ratio_difference(
    base_num: FloatArray,
    base_den: FloatArray,
    cand_num: FloatArray,
    cand_den: FloatArray,
    axis: int = -1,
) -> FloatArray:
    import numpy as np

    base = np.sum(base_num, axis=axis) / np.sum(base_den, axis=axis)
    cand = np.sum(cand_num, axis=axis) / np.sum(cand_den, axis=axis)
    return np.asarray(cand - base, dtype=np.float64)


def paired_bootstrap(
    base_num: Sequence[float] | FloatArray,
    base_den: Sequence[float] | FloatArray,
    cand_num: Sequence[float] | FloatArray,
    cand_den: Sequence[float] | FloatArray,
    *,
    seed: int = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> Interval | None:
    """A percentile bootstrap interval of ``sum(cand_num)/sum(cand_den)`` minus
    ``sum(base_num)/sum(base_den)``.

    The four sequences are paired by position (one entry per case); cases are resampled
    together, so the interval is of the paired difference. A mean is the ratio with every
    denominator 1; a pooled rate (matching fields over expected fields) has per-case counts.
    Cases whose denominator is zero in either run are left out. With `NORMAL_FROM` usable
    cases or more the interval is the paired normal one (`paired_normal`), which needs no
    resampling and no seed.

    Returns:
        The interval, or None with fewer than two usable cases.
    """
    import numpy as np

    arrays = [np.asarray(a, dtype=np.float64) for a in (base_num, base_den, cand_num, cand_den)]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError("the four sequences must have one entry per case each")
    keep = (arrays[1] > 0) & (arrays[3] > 0)
    bn, bd, cn, cd = (a[keep] for a in arrays)
    if bn.size < 2:
        return None
    estimate = float(_ratio_difference(bn, bd, cn, cd))
    if np.all(bn / bd == bn[0] / bd[0]) and np.all(cn / cd == cn[0] / cd[0]):
        return Interval(estimate, estimate, estimate, confidence)  # nothing varies
    if bn.size >= NORMAL_FROM:
        return paired_normal(bn, bd, cn, cd, confidence=confidence)
    from scipy.stats import bootstrap

    result = bootstrap(
        (bn, bd, cn, cd),
        _ratio_difference,
        paired=True,
        vectorized=True,
        n_resamples=resamples,
        batch=200,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    low = float(result.confidence_interval.low)
    high = float(result.confidence_interval.high)
    return Interval(estimate, low, high, confidence)


def paired_normal(
    base_num: FloatArray,
    base_den: FloatArray,
    cand_num: FloatArray,
    cand_den: FloatArray,
    *,
    confidence: float = 0.95,
) -> Interval:
    """The paired normal interval of ``sum(cand_num)/sum(cand_den)`` minus
    ``sum(base_num)/sum(base_den)`` (every denominator positive), in O(n).

    Each case's influence on the difference of the two ratio estimators (the delta method) is
    ``(cn - Rc*cd)/mean(cd) - (bn - Rb*bd)/mean(bd)``; pairing is in that per-case difference,
    so what both runs share cancels. The standard error is the influences' standard deviation
    over root n.

    Example:
        >>> import numpy as np
        >>> one = np.ones(4)
        >>> i = paired_normal(np.array([1.0, 1, 0, 0]), one, np.array([1.0, 1, 1, 0]), one)
        >>> round(i.estimate, 2), round(i.low, 3), round(i.high, 3)
        (0.25, -0.24, 0.74)
    """
    from statistics import NormalDist

    import numpy as np

    base_ratio = base_num.sum() / base_den.sum()
    cand_ratio = cand_num.sum() / cand_den.sum()
    influence = (cand_num - cand_ratio * cand_den) / cand_den.mean() - (
        base_num - base_ratio * base_den
    ) / base_den.mean()
    error = float(np.std(influence, ddof=1)) / float(np.sqrt(influence.size))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    estimate = float(cand_ratio - base_ratio)
    return Interval(estimate, estimate - z * error, estimate + z * error, confidence)


def bootstrap_mean(
    values: Sequence[float], *, seed: int = 0, resamples: int = 2000, confidence: float = 0.95
) -> Interval | None:
    """A percentile bootstrap interval of the mean of ``values`` (one per case); with
    `NORMAL_FROM` values or more, the normal interval of the mean (the mean plus or minus z
    standard errors: O(n), no resampling and no seed), for the reason `paired_bootstrap` gives
    it there.

    Returns:
        The interval, or None with fewer than two values.

    Example:
        >>> bootstrap_mean([0.5, 0.5, 0.5])
        Interval(estimate=0.5, low=0.5, high=0.5, confidence=0.95)
    """
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    if data.size < 2:
        return None
    estimate = float(data.mean())
    if np.all(data == data[0]):
        return Interval(estimate, estimate, estimate, confidence)
    if data.size >= NORMAL_FROM:
        from statistics import NormalDist

        error = float(np.std(data, ddof=1)) / float(np.sqrt(data.size))
        z = NormalDist().inv_cdf(0.5 + confidence / 2)
        return Interval(estimate, estimate - z * error, estimate + z * error, confidence)
    from scipy.stats import bootstrap

    result = bootstrap(
        (data,),
        np.mean,
        vectorized=True,
        n_resamples=resamples,
        batch=200,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return Interval(estimate, float(ci.low), float(ci.high), confidence)
