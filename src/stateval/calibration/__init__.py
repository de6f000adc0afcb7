"""Calibration of a mutator's confidences, and agreement of the LLM judge with humans.

`calibrate` measures, per field and pooled, whether the confidences a mutator gives its values
predict which values are right (Brier score, ECE with equal-width and equal-mass bins, AUROC,
a reliability curve, review triage). `judge_agreement` measures the LLM judge against human
verdicts (Cohen's kappa, TPR/TNR, confusion counts, the disagreements). `estimate_error_rate`
turns a monitor's flags and a human-labelled sample into a production error rate with a valid
interval. The statistics are numpy; see docs/calibration.md.
"""

from __future__ import annotations

from stateval.calibration._agreement import (
    HUMAN_LABELS,
    Agreement,
    AgreementReport,
    AgreementSample,
    HumanVerdict,
    cohen_kappa,
    judge_agreement,
)
from stateval.calibration._calibration import (
    OVERALL,
    TRIAGE_FRACTIONS,
    Calibration,
    CalibrationReport,
    CalibrationSample,
    calibrate,
    calibrate_grouped,
    calibrate_values,
    calibration_samples,
)
from stateval.calibration._error_rate import (
    ErrorRates,
    RateEstimate,
    estimate_error_rate,
)
from stateval.calibration._intervals import Z_95, wilson_interval
from stateval.calibration._metrics import (
    BinStrategy,
    ReliabilityBin,
    TriagePoint,
    auroc,
    brier_score,
    expected_calibration_error,
    reliability_bins,
    triage,
)
from stateval.calibration._reliability import pass_hat_k, pass_k_curve

__all__ = [
    "HUMAN_LABELS",
    "OVERALL",
    "TRIAGE_FRACTIONS",
    "Z_95",
    "Agreement",
    "AgreementReport",
    "AgreementSample",
    "BinStrategy",
    "Calibration",
    "CalibrationReport",
    "CalibrationSample",
    "ErrorRates",
    "HumanVerdict",
    "RateEstimate",
    "ReliabilityBin",
    "TriagePoint",
    "auroc",
    "brier_score",
    "calibrate",
    "calibrate_grouped",
    "calibrate_values",
    "calibration_samples",
    "cohen_kappa",
    "estimate_error_rate",
    "expected_calibration_error",
    "judge_agreement",
    "pass_hat_k",
    "pass_k_curve",
    "reliability_bins",
    "triage",
    "wilson_interval",
]
