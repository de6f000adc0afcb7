"""A run's calibration and judge agreement, from its scored cases (see `stateval.calibration`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from stateval.calibration import (
    AgreementReport,
    AgreementSample,
    CalibrationReport,
    CalibrationSample,
    HumanVerdict,
    calibrate,
    calibration_samples,
    judge_agreement,
)
from stateval.run._results import CaseScore

__all__ = ["run_agreement", "run_calibration"]


def run_calibration(scores: Sequence[CaseScore]) -> CalibrationReport:
    """Calibration of the values the mutator produced; failed calls add nothing."""
    samples: list[CalibrationSample] = []
    missing: list[str] = []
    for score in scores:
        if score.ok:
            samples.extend(calibration_samples(score.comparison))
            missing.extend(score.comparison.missing)
    return calibrate(samples, missing)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _why_not_judged(score: CaseScore, path: str, verdict: HumanVerdict) -> str | None:
    if not score.ok:
        return "the mutator failed"
    field = score.comparison.field(path)
    if field is None or field.actual is None:
        return "the mutator left the field out"
    if verdict.pinned and _canonical(verdict.actual) != _canonical(field.actual.value):
        shown = _canonical(verdict.actual)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        return f"the human verdict is on another value ({shown})"
    if field.expected is None:
        return "the field was not expected"
    evaluation = score.evaluation(f"field:{path}")
    if evaluation is not None and evaluation.annotator_kind == "LLM":
        return None
    if evaluation is not None and evaluation.label == "judge_error":
        return "the judge failed"
    return "the rule matched the values; the judge was not asked"


def run_agreement(
    scores: Sequence[CaseScore], human: Mapping[str, Mapping[str, HumanVerdict]]
) -> AgreementReport | None:
    """The judge's agreement with the human verdicts, or None when no case has any.

    Args:
        scores: The scored cases.
        human: Case id -> judged path -> the human verdict.
    """
    if not any(human.get(s.case_id) for s in scores):
        return None
    samples: list[AgreementSample] = []
    not_judged: list[tuple[str, str, str]] = []
    for score in scores:
        for path, verdict in (human.get(score.case_id) or {}).items():
            why = _why_not_judged(score, path, verdict)
            if why is not None:
                not_judged.append((score.case_id, path, why))
                continue
            field = score.comparison.field(path)
            assert field is not None
            assert field.expected is not None
            assert field.actual is not None
            judgement = next(
                (j for j in score.result.judgements if j.ok and j.answers(field)), None
            )
            samples.append(
                AgreementSample(
                    score.case_id,
                    path,
                    human=verdict.same,
                    judge=bool(field.value_matched),
                    expected=field.expected.value,
                    actual=field.actual.value,
                    explanation="" if judgement is None else judgement.explanation,
                )
            )
    return judge_agreement(samples, not_judged)
