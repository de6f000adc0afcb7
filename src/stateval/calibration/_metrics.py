"""The statistics of calibration, in numpy: Brier score, ECE, AUROC, reliability bins, triage.

Each function takes confidences in [0, 1] and whether each value was correct, as sequences of
the same length, and assumes the caller has checked that the statistic is defined (see
`stateval.calibration.calibrate`, which says "not measurable" instead). numpy is enough for
every one of them; scikit-learn's ``brier_score_loss`` and ``roc_auc_score`` are the reference
the tests compare against.

Example:
    >>> round(brier_score([0.9, 0.6, 0.2], [True, False, False]), 4)
    0.1367
    >>> auroc([0.9, 0.6, 0.2], [True, False, False])
    1.0
    >>> round(expected_calibration_error([0.9, 0.6, 0.2], [True, False, False], bins=2), 4)
    0.2333
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = [
    "BinStrategy",
    "ReliabilityBin",
    "TriagePoint",
    "auroc",
    "brier_score",
    "expected_calibration_error",
    "reliability_bins",
    "triage",
]

BinStrategy: TypeAlias = Literal["width", "mass"]
"""``width``: bins of equal width over [0, 1]; ``mass``: bins holding about as many values."""

_Floats = npt.NDArray[np.float64]
_Confidences = Sequence[float] | npt.NDArray[np.float64]
"""One confidence per value: a sequence or a numpy array."""
_Correct = Sequence[bool] | npt.NDArray[np.bool_]
"""Whether each value was correct: a sequence or a numpy array."""


def _arrays(confidences: _Confidences, correct: _Correct) -> tuple[_Floats, _Floats]:
    conf = np.asarray(confidences, dtype=np.float64)
    hit = np.asarray(correct, dtype=np.float64)
    if conf.shape != hit.shape or conf.ndim != 1:
        raise ValueError(f"{conf.shape[0]} confidences but {hit.shape[0]} correctness flags")
    return conf, hit


def brier_score(confidences: _Confidences, correct: _Correct) -> float:
    """Mean squared distance between each confidence and its outcome (1 correct, 0 wrong).

    0 is perfect; always answering 0.5 scores 0.25.
    """
    conf, hit = _arrays(confidences, correct)
    return float(np.mean((conf - hit) ** 2))


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """One bin of a reliability diagram.

    Attributes:
        lower: The bin's lower edge (exclusive, except 0 for the first bin).
        upper: Its upper edge (inclusive).
        n: Values in the bin.
        mean_confidence: Their mean confidence.
        accuracy: The fraction of them that was correct.
    """

    lower: float
    upper: float
    n: int
    mean_confidence: float
    accuracy: float

    @property
    def gap(self) -> float:
        """``|accuracy - mean_confidence|``."""
        return abs(self.accuracy - self.mean_confidence)


def _edges(conf: _Floats, bins: int, strategy: BinStrategy) -> _Floats:
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    if strategy == "width":
        return np.linspace(0.0, 1.0, bins + 1)
    if strategy == "mass":
        # Quantile edges: each bin holds about n / bins values, and equal confidences always
        # share a bin (so fewer bins remain when many values tie).
        inner = np.quantile(conf, np.linspace(0.0, 1.0, bins + 1)[1:-1])
        return np.unique(np.concatenate(([0.0], inner, [1.0])))
    raise ValueError(f"unknown bin strategy {strategy!r} (use 'width' or 'mass')")


def reliability_bins(
    confidences: _Confidences,
    correct: _Correct,
    *,
    bins: int = 10,
    strategy: BinStrategy = "width",
) -> tuple[ReliabilityBin, ...]:
    """The non-empty bins of a reliability diagram, lowest confidence first.

    A value with confidence c falls in the bin whose edges satisfy ``lower < c <= upper``
    (confidence 0 falls in the first bin).

    Args:
        confidences: One confidence per value.
        correct: Whether each value was correct.
        bins: Number of bins (``mass`` may end with fewer when confidences tie).
        strategy: ``width`` or ``mass``.
    """
    conf, hit = _arrays(confidences, correct)
    edges = _edges(conf, bins, strategy)
    index = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, len(edges) - 2)
    out: list[ReliabilityBin] = []
    for i in range(len(edges) - 1):
        inside = index == i
        n = int(inside.sum())
        if n:
            out.append(
                ReliabilityBin(
                    float(edges[i]),
                    float(edges[i + 1]),
                    n,
                    float(conf[inside].mean()),
                    float(hit[inside].mean()),
                )
            )
    return tuple(out)


def expected_calibration_error(
    confidences: _Confidences,
    correct: _Correct,
    *,
    bins: int = 10,
    strategy: BinStrategy = "width",
) -> float:
    """Expected calibration error: ``sum over bins of (n_bin / n) * |accuracy - confidence|``.

    Args:
        confidences: One confidence per value.
        correct: Whether each value was correct.
        bins: Number of bins.
        strategy: ``width`` (equal-width bins over [0, 1], the classic ECE) or ``mass``
            (quantile bins holding about as many values each; ties share a bin).
    """
    table = reliability_bins(confidences, correct, bins=bins, strategy=strategy)
    n = sum(b.n for b in table)
    return float(sum(b.n / n * b.gap for b in table))


def _average_ranks(values: _Floats) -> _Floats:
    """1-based ranks, ties sharing their mean rank (as `scipy.stats.rankdata`)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    upper = np.cumsum(counts)
    mean_rank = upper - (counts - 1) / 2.0
    ranks: _Floats = mean_rank[inverse].astype(np.float64)
    return ranks


def auroc(confidences: _Confidences, correct: _Correct) -> float:
    """Area under the ROC curve of confidence as a predictor of correctness.

    The probability that a correct value has a higher confidence than a wrong one (ties count
    half), from the Mann-Whitney U statistic. 0.5 is chance, 1.0 perfect ranking.

    Raises:
        ValueError: Every value is correct, or every value is wrong.
    """
    conf, hit = _arrays(confidences, correct)
    n_pos = int(hit.sum())
    n_neg = len(hit) - n_pos
    if not n_pos or not n_neg:
        raise ValueError("AUROC needs both correct and wrong values")
    ranks = _average_ranks(conf)
    u = float(ranks[hit == 1].sum()) - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


@dataclass(frozen=True, slots=True)
class TriagePoint:
    """Reviewing the lowest-confidence ``fraction`` of values catches ``caught`` of the errors.

    Attributes:
        fraction: Share of values reviewed, in [0, 1] (e.g. 0.1).
        n_reviewed: Values reviewed: ``ceil(fraction * n)``.
        caught: Share of the wrong values among those reviewed, in [0, 1]. Where the cut falls
            inside a run of equal confidences, the run counts in proportion (the expectation
            under a random order among ties).
    """

    fraction: float
    n_reviewed: int
    caught: float


def triage(
    confidences: _Confidences, correct: _Correct, fractions: Sequence[float]
) -> tuple[TriagePoint, ...]:
    """For each fraction k: the share of errors caught by reviewing the lowest-confidence k.

    Raises:
        ValueError: No value is wrong, or a fraction is outside [0, 1].
    """
    conf, hit = _arrays(confidences, correct)
    wrong = 1.0 - hit
    n_wrong = float(wrong.sum())
    if not n_wrong:
        raise ValueError("triage needs at least one wrong value")
    levels, inverse = np.unique(conf, return_inverse=True)
    group_n = np.bincount(inverse, minlength=len(levels)).astype(np.float64)
    group_wrong = np.bincount(inverse, weights=wrong, minlength=len(levels))
    before_n = np.concatenate(([0.0], np.cumsum(group_n)))
    before_wrong = np.concatenate(([0.0], np.cumsum(group_wrong)))
    out: list[TriagePoint] = []
    for fraction in fractions:
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"a review fraction must be in [0, 1], got {fraction}")
        k = min(len(conf), math.ceil(fraction * len(conf) - 1e-9))
        # the group the cut falls in: whole groups before it, a proportional share of it
        g = int(np.searchsorted(before_n, k, side="right")) - 1
        caught = before_wrong[g]
        if g < len(levels):
            caught += group_wrong[g] * (k - before_n[g]) / group_n[g]
        out.append(TriagePoint(float(fraction), k, float(caught / n_wrong)))
    return tuple(out)
