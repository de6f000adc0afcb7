"""The regression gate: a diff checked against a suite's ``thresholds.regressions`` block."""

from __future__ import annotations

from stateval.regressions._diff import RunDiff
from stateval.run import ThresholdResult
from stateval.suite import RegressionsSpec

__all__ = ["DEFAULT_GATE", "gate_result"]

DEFAULT_GATE = RegressionsSpec()
"""No field may regress, at alpha 0.05 (``--fail-on-regression`` without a suite block)."""


def gate_result(diff: RunDiff, spec: RegressionsSpec = DEFAULT_GATE) -> ThresholdResult:
    """The gate as a threshold: regressed fields at most ``spec.max_regressed_fields``.

    Example:
        >>> from stateval.regressions import Observation, ScoredRun, diff_runs
        >>> def run(right):
        ...     return ScoredRun("r", {f"c{i}": (Observation({"field:a": float(x)}),)
        ...                            for i, x in enumerate(right)})
        >>> gate_result(diff_runs(run([1] * 20), run([0] * 20))).describe()
        'regressed_fields 1.000 <= 0.000 FAILED'
    """
    regressed = len(diff.regressed_fields)
    return ThresholdResult(
        "regressed_fields",
        float(regressed),
        float(spec.max_regressed_fields),
        "max",
        regressed <= spec.max_regressed_fields,
    )
