"""Calibration of a mutator's confidences, per field and over all fields.

A *value* here is one field the mutator set in one case: its best candidate's confidence, and
whether its value was right. "Right" is the value half of the suite's policy for the field
(normalisers, synonyms, tolerances, fuzzy, the LLM judge) with the confidence ignored, even
though the seed rule a field is *scored* by asks for value and confidence both equal:
calibration asks whether the confidence predicts the value, so the confidence cannot be part
of the outcome. A field the mutator set but was not expected (extra) is a wrong value; a field
it left out (missing) has no confidence and is counted apart (``n_missing``).

Example:
    >>> from stateval.state import InterpretiveState, ValueConfidence
    >>> from stateval.compare import compare_states
    >>> expected = InterpretiveState.from_flat({"name": "Ada", "city": "Paris"})
    >>> actual = InterpretiveState()
    >>> actual.add_value("name", ValueConfidence("Ada", 0.9))
    >>> actual.add_value("city", ValueConfidence("Rome", 0.4))
    >>> report = calibrate(calibration_samples(compare_states(expected, actual)))
    >>> round(report.overall.brier, 3)
    0.085
    >>> report.overall.auroc
    1.0
    >>> report.field("name").reason
    'every value has confidence 0.9'
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from stateval.calibration._metrics import (
    ReliabilityBin,
    TriagePoint,
    auroc,
    brier_score,
    expected_calibration_error,
    reliability_bins,
    triage,
)
from stateval.compare import StateComparison

__all__ = [
    "OVERALL",
    "TRIAGE_FRACTIONS",
    "Calibration",
    "CalibrationReport",
    "CalibrationSample",
    "calibrate",
    "calibrate_grouped",
    "calibrate_values",
    "calibration_samples",
]

TRIAGE_FRACTIONS: tuple[float, ...] = (0.05, 0.10, 0.20)
"""The review shares reported: the lowest-confidence 5%, 10% and 20% of values."""

OVERALL = "(all fields)"
"""The ``path`` of the calibration pooled over every field."""

_CURVE = tuple(i / 20 for i in range(21))


@dataclass(frozen=True, slots=True)
class CalibrationSample:
    """One value the mutator produced.

    Attributes:
        path: The field.
        confidence: The confidence of its best candidate.
        correct: Whether the value was right under the field's policy (confidence ignored).
    """

    path: str
    confidence: float
    correct: bool


def calibration_samples(comparison: StateComparison) -> list[CalibrationSample]:
    """The values of one compared state: matching and mismatched fields by the value half of
    their policy, extra fields as wrong; missing fields have no confidence and are left out."""
    return [CalibrationSample(*outcome) for outcome in comparison.value_outcomes()]


@dataclass(frozen=True, slots=True)
class Calibration:
    """How well one field's confidences (or all fields' pooled) predict its values being right.

    When the figures cannot mean anything — no values, a single confidence for every value, or
    no wrong value — `measurable` is False, `reason` says why, and the figures are None.

    Attributes:
        path: The field, or `OVERALL`.
        n: Values with a confidence.
        n_wrong: Of those, values that were wrong.
        n_missing: Expected values the mutator left out (no confidence; not in the figures).
        reason: Why the figures are not measurable, or None.
        brier: Brier score (0 best).
        ece: Expected calibration error over 10 equal-width bins.
        ece_mass: Expected calibration error over 10 equal-mass (quantile) bins.
        auroc: AUROC of confidence for correctness (None when every value was wrong).
        mean_confidence: Mean confidence.
        accuracy: Share of values that were right.
        reliability: The equal-width reliability bins (non-empty ones).
        triage: Errors caught reviewing the lowest-confidence 5%, 10%, 20% of values.
        triage_curve: The same at every 5% from 0 to 100% (for charts).
    """

    path: str
    n: int
    n_wrong: int
    n_missing: int = 0
    reason: str | None = None
    brier: float | None = None
    ece: float | None = None
    ece_mass: float | None = None
    auroc: float | None = None
    mean_confidence: float | None = None
    accuracy: float | None = None
    reliability: tuple[ReliabilityBin, ...] = ()
    triage: tuple[TriagePoint, ...] = ()
    triage_curve: tuple[TriagePoint, ...] = ()

    @property
    def measurable(self) -> bool:
        """True when the figures are set."""
        return self.reason is None

    def caught(self, fraction: float) -> float | None:
        """Share of errors caught reviewing the lowest-confidence ``fraction`` (a reported
        fraction such as 0.1), or None."""
        return next((p.caught for p in self.triage if abs(p.fraction - fraction) < 1e-9), None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "path": self.path,
            "n": self.n,
            "n_wrong": self.n_wrong,
            "n_missing": self.n_missing,
            "measurable": self.measurable,
            "reason": self.reason,
            "brier": self.brier,
            "ece": self.ece,
            "ece_mass": self.ece_mass,
            "auroc": self.auroc,
            "mean_confidence": self.mean_confidence,
            "accuracy": self.accuracy,
            "triage": [
                {"fraction": p.fraction, "n_reviewed": p.n_reviewed, "caught": p.caught}
                for p in self.triage
            ],
            "reliability": [
                {
                    "lower": b.lower,
                    "upper": b.upper,
                    "n": b.n,
                    "mean_confidence": b.mean_confidence,
                    "accuracy": b.accuracy,
                }
                for b in self.reliability
            ],
        }


_Column = Sequence[float] | npt.NDArray[Any]
"""A column of values: a sequence, or a numpy array (a run's tally hands over its columns as
arrays: not turned into lists of a Python object per value; the metrics take arrays)."""
_Flags = Sequence[bool] | npt.NDArray[Any]
"""Whether each value was correct: a sequence, or a numpy array."""


def _unmeasurable(confidences: _Column, n_wrong: int) -> str | None:
    if not len(confidences):
        return "no values with a confidence"
    first = float(confidences[0])
    if isinstance(confidences, np.ndarray):
        one_level = bool((confidences == first).all())
    else:  # one level (a C loop, no set of them)
        one_level = confidences.count(first) == len(confidences)
    if one_level:
        return f"every value has confidence {first:g}"
    if not n_wrong:
        return "no wrong values"
    return None


def _n_wrong(correct: _Flags) -> int:
    if isinstance(correct, np.ndarray):
        return len(correct) - int(np.count_nonzero(correct))
    return sum(map(operator.not_, correct))


def _mean(confidences: _Column) -> float:
    """The mean of the confidences, summed in order as the built-in ``sum`` of floats does."""
    values = confidences.tolist() if isinstance(confidences, np.ndarray) else confidences
    return float(sum(values)) / len(values)


def calibrate_values(
    path: str,
    confidences: _Column,
    correct: _Flags,
    *,
    n_missing: int = 0,
) -> Calibration:
    """The `Calibration` of one set of values (``path`` names it): a confidence and whether
    it was correct per value, as sequences or numpy arrays."""
    if len(confidences) != len(correct):
        raise ValueError(f"{len(confidences)} confidences but {len(correct)} correctness flags")
    n_wrong = _n_wrong(correct)
    reason = _unmeasurable(confidences, n_wrong)
    if reason is not None:
        return Calibration(path, len(confidences), n_wrong, n_missing, reason)
    return Calibration(
        path,
        len(confidences),
        n_wrong,
        n_missing,
        brier=brier_score(confidences, correct),
        ece=expected_calibration_error(confidences, correct, strategy="width"),
        ece_mass=expected_calibration_error(confidences, correct, strategy="mass"),
        auroc=auroc(confidences, correct) if n_wrong < len(correct) else None,
        mean_confidence=_mean(confidences),
        accuracy=1 - n_wrong / len(correct),
        reliability=reliability_bins(confidences, correct),
        triage=triage(confidences, correct, TRIAGE_FRACTIONS),
        triage_curve=triage(confidences, correct, _CURVE),
    )


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    """Calibration over a run: pooled over all fields, and per field.

    Attributes:
        overall: Every value of every field.
        fields: One per field that had a value or a missing one, measurable ones worst (highest
            ECE) first, then the rest by path.
    """

    overall: Calibration
    fields: tuple[Calibration, ...]

    @property
    def measurable(self) -> bool:
        """True when the pooled figures are measurable."""
        return self.overall.measurable

    def field(self, path: str) -> Calibration | None:
        """The calibration of ``path``, or None."""
        return next((f for f in self.fields if f.path == path), None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"overall": self.overall.to_dict(), "fields": [f.to_dict() for f in self.fields]}


def calibrate(
    samples: Iterable[CalibrationSample], missing: Iterable[str] = ()
) -> CalibrationReport:
    """Calibration per field and pooled.

    Args:
        samples: The values (see `calibration_samples`).
        missing: The path of each expected value the mutator left out (one entry per case).
    """
    by_path: dict[str, tuple[list[float], list[bool]]] = {}
    pooled: tuple[list[float], list[bool]] = ([], [])
    for s in samples:
        confidences, correct = by_path.setdefault(s.path, ([], []))
        confidences.append(s.confidence)
        correct.append(s.correct)
        pooled[0].append(s.confidence)
        pooled[1].append(s.correct)
    n_missing: dict[str, int] = {}
    for path in missing:
        n_missing[path] = n_missing.get(path, 0) + 1
    return calibrate_grouped(by_path, n_missing, pooled)


def calibrate_grouped(
    values: Mapping[str, tuple[_Column, _Flags]],
    missing: Mapping[str, int],
    pooled: tuple[_Column, _Flags],
) -> CalibrationReport:
    """`calibrate` of values already grouped: path -> (confidences, correctness) in the order
    produced, path -> how many expected values the mutator left out, and every value pooled in
    the order produced (a run collects them case by case in compact arrays, without a sample
    object per value, and hands them over as numpy arrays; the order decides ties in
    equal-mass bins and triage)."""
    paths = list(values) + [p for p in missing if p not in values]
    fields = [
        calibrate_values(
            path,
            values[path][0] if path in values else [],
            values[path][1] if path in values else [],
            n_missing=missing.get(path, 0),
        )
        for path in paths
    ]
    fields.sort(key=lambda c: (not c.measurable, -(c.ece or 0.0), c.path))
    overall = calibrate_values(OVERALL, pooled[0], pooled[1], n_missing=sum(missing.values()))
    return CalibrationReport(overall, tuple(fields))
