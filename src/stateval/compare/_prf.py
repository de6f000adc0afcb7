"""Precision, recall and F1 from counts, and a case's share of them (read by the field
metrics and the run metrics)."""

from __future__ import annotations

from typing import TypeAlias

from stateval.compare._metric_options import Averaging, MetricOptions

__all__ = ["Ratio", "prf", "strict_figures", "value_shares"]

Ratio: TypeAlias = tuple[float, float]
"""A ``(numerator, denominator)`` share of a run-level ratio."""


def prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    """Precision, recall and F1 of counts; 1.0 each when all three are zero.

    >>> prf(3, 1, 0)
    (0.75, 1.0, 0.8571428571428571)
    >>> prf(0, 0, 0), prf(0, 0, 2)
    ((1.0, 1.0, 1.0), (0.0, 0.0, 0.0))
    """
    if tp + fp + fn <= 0:
        return 1.0, 1.0, 1.0
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def value_shares(
    tp: float, fp: float, fn: float, averaging: Averaging = "micro"
) -> tuple[Ratio, Ratio, Ratio]:
    """`CaseMetrics.value_shares` of a case's counts."""
    if averaging == "case":
        p, r, f1 = prf(tp, fp, fn)
        return (p, 1.0), (r, 1.0), (f1, 1.0)
    return (tp, tp + fp), (tp, tp + fn), (2 * tp, 2 * tp + fp + fn)


def strict_figures(counts: tuple[int, ...], options: MetricOptions) -> tuple[float, float, float]:
    """``(tp, fp, fn)`` of a case whose every field is binary (decided by a strict policy,
    or wrong without partial list credit), from its ``(matching, mismatched, missing, extra)``
    counts."""
    matching, mismatched, missing, extra = counts
    missed = missing if options.wrong_value == "fp" else mismatched + missing
    return float(matching), float(mismatched + extra), float(missed)
