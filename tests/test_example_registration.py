"""The registration judge check (examples/registration/judge.yaml) with a scripted judge."""

from __future__ import annotations

import asyncio
import dataclasses
import doctest
import importlib
import re
from pathlib import Path

import pytest

from stateval.phoenix import FieldJudge, ScriptedJudgeLLM
from stateval.run import RunSummary, start_journal
from stateval.suite import load_suite
from stateval.upload import run_suite

JUDGE_CHECK = Path(__file__).resolve().parents[1] / "examples" / "registration" / "judge.yaml"
HUMANS_SAY_SAME = {"veggie", "no gluten", "no restrictions", "plant-based"}


def _check(tmp_path: Path, reply: object) -> RunSummary:
    suite = load_suite(JUDGE_CHECK)
    judge = FieldJudge(ScriptedJudgeLLM(reply))  # type: ignore[arg-type]
    suite = dataclasses.replace(suite, judge=judge)
    journal = start_journal(tmp_path / ".stateval", suite)
    return asyncio.run(run_suite(suite, journal, concurrency=2)).summary


def _actual(prompt: str) -> str:
    match = re.search(r'^ACTUAL value \(JSON\): "(.*)"$', prompt, re.M)
    assert match is not None, prompt
    return match.group(1)


def test_a_judge_that_agrees_with_the_people_passes(tmp_path: Path) -> None:
    def reply(prompt: str) -> str:
        return "equivalent" if _actual(prompt) in HUMANS_SAY_SAME else "different"

    summary = _check(tmp_path, reply)
    agreement = summary.agreement
    assert agreement is not None
    overall = agreement.overall
    assert (overall.tp, overall.fn, overall.fp, overall.tn) == (4, 0, 0, 5)
    assert overall.kappa == 1.0
    assert agreement.disagreements == ()
    # "Vegetarian" for "vegetarian" matches by rule: the judge is never asked
    assert [(c, why) for c, _, why in agreement.not_judged] == [
        ("diet-10", "the rule matched the values; the judge was not asked")
    ]
    assert summary.passed
    # the recorded confidences against the judged values: 5 right, 5 wrong
    calibration = summary.calibration
    assert calibration is not None
    assert (calibration.overall.n, calibration.overall.n_wrong) == (10, 5)
    assert calibration.overall.auroc == pytest.approx(20.5 / 25)


def test_a_judge_that_accepts_everything_has_kappa_zero_and_fails(tmp_path: Path) -> None:
    summary = _check(tmp_path, lambda prompt: "equivalent")
    agreement = summary.agreement
    assert agreement is not None
    assert agreement.overall.kappa == pytest.approx(0.0)
    assert (agreement.overall.tpr, agreement.overall.tnr) == (1.0, 0.0)
    assert sorted(d.case_id for d in agreement.disagreements) == [
        "diet-05",
        "diet-06",
        "diet-07",
        "diet-08",
        "diet-09",
    ]
    (kappa,) = [t for t in summary.thresholds if t.name == "judge_kappa"]
    assert not kappa.passed
    assert not summary.passed
    # the recorded confidences: the judge decides which values were right
    calibration = summary.calibration
    assert calibration is not None
    assert calibration.overall.n == 10
    assert calibration.overall.n_wrong == 0  # the judge accepted every value
    assert calibration.overall.reason == "no wrong values"


def test_recorded_docstring_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(JUDGE_CHECK.parent))
    result = doctest.testmod(importlib.import_module("recorded"))
    assert result.attempted > 0
    assert result.failed == 0
