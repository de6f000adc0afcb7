"""`CheckResult`: what every check returns."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stateval.errors import EvaluationError

__all__ = ["CheckResult"]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of one check on one value.

    Args:
        name: The check's name (``"contains_any"``, ``"levenshtein"``, ``"regex:user.email"``).
        score: A number in [0, 1]; binary checks give 0.0 or 1.0.
        passed: Whether the value passes the check.
        label: A short category: ``"pass"`` / ``"fail"``, or why it failed (``"timeout"``,
            ``"invalid_json"``, ``"missing"``, ...).
        explanation: One human-readable sentence.
        metrics: Extra numbers (counts, parts of a combined score).

    Example:
        >>> CheckResult("exact", 1.0, True, "pass", "the output equals the expected value").score
        1.0
    """

    name: str
    score: float
    passed: bool
    label: str
    explanation: str
    metrics: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        score = self.score
        if isinstance(score, bool) or not isinstance(score, int | float) or math.isnan(score):
            raise EvaluationError(f"check {self.name!r}: score {score!r} is not a number")
        if not 0.0 <= score <= 1.0:
            raise EvaluationError(f"check {self.name!r}: score {score!r} is outside [0, 1]")
        object.__setattr__(self, "score", float(score))
        object.__setattr__(self, "metrics", dict(self.metrics))

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON object."""
        return {
            "name": self.name,
            "score": self.score,
            "passed": self.passed,
            "label": self.label,
            "explanation": self.explanation,
            "metrics": dict(self.metrics),
        }


def binary(name: str, passed: bool, explanation: str, **metrics: float) -> CheckResult:
    """A 0/1 result labelled ``"pass"`` or ``"fail"``."""
    return CheckResult(
        name, float(passed), passed, "pass" if passed else "fail", explanation, metrics
    )


def failed(name: str, label: str, explanation: str, **metrics: float) -> CheckResult:
    """A score-0 result with a specific failure label."""
    return CheckResult(name, 0.0, False, label, explanation, metrics)
