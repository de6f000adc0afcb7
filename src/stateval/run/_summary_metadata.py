"""What calibration and judge agreement add to a run's Phoenix experiment's metadata.

Phoenix shows an experiment's metadata beside it and returns it over REST
(``GET /v1/experiments/{id}``), so these figures land with the per-field evaluations they
summarise. Values are rounded to 4 digits; figures that are not measurable are null with a
``reason``.
"""

from __future__ import annotations

from typing import Any

from stateval.calibration import Agreement, AgreementReport, Calibration, CalibrationReport

__all__ = ["quality_metadata"]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _calibration(c: Calibration) -> dict[str, Any]:
    out: dict[str, Any] = {"n": c.n, "n_wrong": c.n_wrong, "n_missing": c.n_missing}
    if not c.measurable:
        out["reason"] = c.reason
        return out
    out |= {
        "brier": _round(c.brier),
        "ece": _round(c.ece),
        "ece_equal_mass": _round(c.ece_mass),
        "auroc": _round(c.auroc),
        "errors_caught": {f"{p.fraction:.0%}": _round(p.caught) for p in c.triage},
    }
    return out


def _agreement(a: Agreement) -> dict[str, Any]:
    return {
        "n": a.n,
        "kappa": _round(a.kappa),
        "tpr": _round(a.tpr),
        "tnr": _round(a.tnr),
        "confusion": {"tp": a.tp, "fn": a.fn, "fp": a.fp, "tn": a.tn},
    }


def quality_metadata(
    calibration: CalibrationReport | None, agreement: AgreementReport | None
) -> dict[str, Any]:
    """``stateval_calibration`` and (with human verdicts) ``stateval_judge_agreement``."""
    out: dict[str, Any] = {}
    if calibration is not None:
        out["stateval_calibration"] = {
            "overall": _calibration(calibration.overall),
            "fields": {f.path: _calibration(f) for f in calibration.fields},
        }
    if agreement is not None:
        out["stateval_judge_agreement"] = {
            "overall": _agreement(agreement.overall),
            "fields": {a.path: _agreement(a) for a in agreement.fields},
            "disagreements": [
                {"case_id": d.case_id, "path": d.path, "human": d.human, "judge": d.judge}
                for d in agreement.disagreements
            ],
            "not_judged": len(agreement.not_judged),
        }
    return out
