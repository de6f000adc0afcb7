"""A run's calibration and judge agreement: in the summary, its thresholds, reports, Phoenix."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml

from stateval.errors import SuiteProblemsError
from stateval.reports import markdown_report, write_json_report
from stateval.run import PhoenixTarget, RunOutcome, Scoring, start_journal, summarize
from stateval.suite import Suite, load_suite
from stateval.upload import run_suite


def _run(suite: Suite, root: Path, url: str | None = None) -> RunOutcome:
    journal = start_journal(root, suite, phoenix_url=url)
    target = None if url is None else PhoenixTarget(url)
    return asyncio.run(run_suite(suite, journal, concurrency=2, phoenix=target))


def test_judge_agreement_with_human_verdicts(
    judged_suite: Callable[..., Suite], tmp_path: Path
) -> None:
    summary = _run(judged_suite(), tmp_path / ".stateval").summary
    agreement = summary.agreement
    assert agreement is not None
    overall = agreement.overall
    assert (overall.tp, overall.fn, overall.fp, overall.tn) == (2, 0, 1, 1)
    assert overall.kappa == pytest.approx(0.5)
    assert (overall.tpr, overall.tnr) == (1.0, 0.5)
    assert [a.path for a in agreement.fields] == ["user.name"]
    (disagreement,) = agreement.disagreements
    assert (disagreement.case_id, disagreement.expected, disagreement.actual) == (
        "c3",
        "Ann",
        "Anna",
    )
    assert (disagreement.human, disagreement.judge) == (False, True)
    assert disagreement.explanation == "a short form of the name"
    assert agreement.not_judged == (
        ("c5", "user.name", "the rule matched the values; the judge was not asked"),
    )


def test_a_verdict_on_one_value_is_compared_only_when_the_mutator_gives_it(
    judged_suite: Callable[..., Suite], tmp_path: Path
) -> None:
    human = {
        "c1": {"user.name": {"verdict": "same", "actual": "Cy"}},  # the value given: compared
        "c3": {"user.name": {"verdict": "different", "actual": "Annie"}},  # another value
    }
    summary = _run(judged_suite(human=human), tmp_path / ".stateval").summary
    agreement = summary.agreement
    assert agreement is not None
    assert agreement.overall.n == 3  # c1, c2, c4 (c5 is matched by rule)
    assert agreement.disagreements == ()
    why = {case_id: reason for case_id, _, reason in agreement.not_judged}
    assert why["c3"] == 'the human verdict is on another value ("Annie")'


def test_calibration_uses_the_judged_value_and_ignores_the_confidence_rule(
    judged_suite: Callable[..., Suite], tmp_path: Path
) -> None:
    summary = _run(judged_suite(), tmp_path / ".stateval").summary
    calibration = summary.calibration
    assert calibration is not None
    name = calibration.field("user.name")
    assert name is not None
    # Cy 0.6, Bob 0.5, Anna 0.7 accepted by the judge, Eve 0.9 equal: right; Dave 0.4: wrong
    assert (name.n, name.n_wrong) == (5, 1)
    assert name.brier == pytest.approx((0.4**2 + 0.5**2 + 0.3**2 + 0.4**2 + 0.1**2) / 5)
    assert name.auroc == 1.0
    # user.city is right in every case, though the seed rule scores it mismatched (0.8 != 1.0)
    city = calibration.field("user.city")
    assert city is not None
    assert city.reason == "every value has confidence 0.8"
    assert next(r for r in summary.fields if r.path == "user.city").accuracy == 0.0
    assert calibration.overall.n == 10


@pytest.mark.parametrize(("minimum", "passed"), [(0.4, True), (0.6, False)])
def test_a_minimum_kappa_decides_the_verdict(
    judged_suite: Callable[..., Suite], tmp_path: Path, minimum: float, passed: bool
) -> None:
    suite = judged_suite(thresholds={"judge_kappa": minimum, "max_error_rate": 0})
    summary = _run(suite, tmp_path / ".stateval").summary
    (kappa,) = [t for t in summary.thresholds if t.name == "judge_kappa"]
    assert kappa.value == pytest.approx(0.5)
    assert kappa.passed is passed
    assert summary.passed is passed


def test_a_minimum_kappa_fails_when_nothing_was_judged(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    data = {
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": [{"id": "a", "input": {"prompt": "x"}, "expected_post_state": {}}]},
        "thresholds": {"judge_kappa": 0.2},
    }
    path.write_text(yaml.safe_dump(data))
    suite = load_suite(path, load_mutator=False)
    summary = summarize(
        [], Scoring.from_suite(suite), cases=suite.cases, suite_name="s", run_id="r"
    )
    assert summary.agreement is None
    (kappa,) = [t for t in summary.thresholds if t.name == "judge_kappa"]
    assert (kappa.value, kappa.passed) == (None, False)


def test_a_human_verdict_on_a_field_no_llm_judges_is_a_suite_problem(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    case = {
        "id": "a",
        "input": {"prompt": "x"},
        "expected_post_state": {"user.name": "Ada"},
        "human": {"user.name": "same"},
    }
    data = {
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": [case]},
    }
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SuiteProblemsError, match=r"human\.user\.name.*no LLM judges"):
        load_suite(path, load_mutator=False)
    case["human"] = {"user.name": {"verdict": "same"}}  # a pinned verdict needs its value
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SuiteProblemsError, match="actual"):
        load_suite(path, load_mutator=False)
    case["human"] = {"user.name": "maybe"}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SuiteProblemsError, match="human"):
        load_suite(path, load_mutator=False)


def test_reports_carry_calibration_and_agreement(
    judged_suite: Callable[..., Suite], tmp_path: Path
) -> None:
    summary = _run(judged_suite(), tmp_path / ".stateval").summary
    write_json_report(summary, tmp_path / "report.json")
    report = json.loads((tmp_path / "report.json").read_text())
    schema = json.loads((Path(__file__).parents[1] / "docs" / "report-schema.json").read_text())
    jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
    assert report["judge_agreement"]["overall"]["confusion"] == {"tp": 2, "fn": 0, "fp": 1, "tn": 1}
    assert report["judge_agreement"]["disagreements"][0]["case_id"] == "c3"
    name = next(f for f in report["calibration"]["fields"] if f["path"] == "user.name")
    assert name["auroc"] == 1.0
    assert [p["fraction"] for p in name["triage"]] == [0.05, 0.1, 0.2]
    text = markdown_report(summary)
    assert (
        "judge vs humans: kappa 0.500 over 4 verdicts (TPR 100%, TNR 50%), 1 disagreements" in text
    )
    assert "calibration of confidences: Brier" in text


@pytest.mark.phoenix
def test_agreement_and_calibration_land_in_the_experiment_metadata(
    judged_suite: Callable[..., Suite], tmp_path: Path, phoenix_url: str
) -> None:
    outcome = _run(judged_suite(), tmp_path / ".stateval", phoenix_url)
    assert outcome.upload is not None
    assert outcome.upload.error is None
    experiment_id = outcome.journal.ack("experiment")["experiment_id"]  # type: ignore[index]
    response = httpx.get(f"{phoenix_url}/v1/experiments/{experiment_id}", timeout=30)
    response.raise_for_status()
    metadata: dict[str, Any] = response.json()["data"]["metadata"]
    assert metadata["stateval_run_id"] == outcome.journal.run_id  # kept from creation
    agreement = metadata["stateval_judge_agreement"]
    assert agreement["overall"]["kappa"] == 0.5
    assert agreement["fields"]["user.name"]["confusion"] == {"tp": 2, "fn": 0, "fp": 1, "tn": 1}
    assert agreement["disagreements"] == [
        {"case_id": "c3", "path": "user.name", "human": False, "judge": True}
    ]
    calibration = metadata["stateval_calibration"]
    assert calibration["fields"]["user.name"]["auroc"] == 1.0
    assert calibration["fields"]["user.city"]["reason"] == "every value has confidence 0.8"
    assert set(calibration["overall"]["errors_caught"]) == {"5%", "10%", "20%"}
