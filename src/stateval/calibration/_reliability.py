"""Reliability over repetitions: τ-bench's pass^k, the chance that k independent tries all
succeed, estimated without bias from n tries of which c succeeded.

pass^k of one item is C(c, k) / C(n, k) (the hypergeometric chance that k tries drawn from
the n without replacement all succeed); over many items it is the mean of theirs. pass^1 is the
plain success rate; pass^k falls with k as soon as an item sometimes fails, which is what makes
it a reliability measure (a flaky item has pass^1 > 0 and pass^n = 0).

Example:
    >>> pass_hat_k(3, 4, 1), pass_hat_k(3, 4, 2), pass_hat_k(3, 4, 4)
    (0.75, 0.5, 0.0)
    >>> pass_k_curve([(4, 4), (2, 4)], 4)
    {1: 0.75, 2: 0.5833333333333334, 3: 0.5, 4: 0.5}
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["pass_hat_k", "pass_k_curve"]


def pass_hat_k(c: int, n: int, k: int) -> float:
    """The unbiased estimate of pass^k from ``c`` successes in ``n`` tries.

    Raises:
        ValueError: Not 0 <= c <= n, or not 1 <= k <= n.
    """
    if not 0 <= c <= n:
        raise ValueError(f"successes must be in [0, {n}], got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}], got {k}")
    return math.comb(c, k) / math.comb(n, k)


def pass_k_curve(counts: Iterable[tuple[int, int]], max_k: int) -> dict[int, float]:
    """k -> the mean pass^k over items given as ``(successes, tries)``, for k = 1..max_k;
    an item with fewer than k tries does not count at that k (a k no item reaches is left out).
    """
    sums = [0.0] * (max_k + 1)
    ns = [0] * (max_k + 1)
    for c, n in counts:
        for k in range(1, min(n, max_k) + 1):
            sums[k] += pass_hat_k(c, n, k)
            ns[k] += 1
    return {k: sums[k] / ns[k] for k in range(1, max_k + 1) if ns[k]}
