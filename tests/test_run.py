"""The local runner: scoring, bounded concurrency, journaling, resume, rescore, thresholds."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from stateval.mutators import BaseLLMClient, LLMMutator, PythonMutator, StructuredInput
from stateval.phoenix import FieldJudge, ScriptedJudgeLLM
from stateval.run import Journal, RunOutcome, find_resumable, rescore, start_journal
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import Suite, load_suite
from stateval.upload import run_suite

MutatorFn = Callable[[InterpretiveState, StructuredInput], Any]

CASES = [
    {
        "id": "right",
        "input": {"prompt": "area north"},
        "expected_post_state": {"hotel.area": "north"},
    },
    {
        "id": "wrong",
        "pre_state": {"hotel.stars": "4"},
        "input": {"prompt": "area south"},
        "expected_post_state": {"hotel.area": "south", "hotel.stars": "4"},
    },
    {"id": "boom", "input": {"prompt": "explode"}, "expected_post_state": {"hotel.area": "east"}},
]


def _suite(
    tmp_path: Path, fn: MutatorFn | None, cases: list[dict[str, Any]] = CASES, **extra: Any
) -> Suite:
    data: dict[str, Any] = {
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": cases},
        **extra,
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    suite = load_suite(path, load_mutator=False)
    return dataclasses.replace(suite, mutator=None if fn is None else PythonMutator(fn))


def _tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    if input.prompt == "explode":
        raise ValueError("cannot parse")
    out = state.copy()
    area = input.prompt.split()[-1]
    out.set_value("hotel.area", ValueConfidence("North" if area == "south" else area, 1.0))
    if area == "south":
        out.set_value("hotel.parking", ValueConfidence("yes", 1.0))
    return out


def _run(suite: Suite, root: Path, concurrency: int = 4, limit: int | None = None) -> RunOutcome:
    journal = start_journal(root, suite, limit=limit)
    return asyncio.run(run_suite(suite, journal, concurrency=concurrency))


def test_a_run_scores_every_field_and_a_failing_mutator_is_data(tmp_path: Path) -> None:
    outcome = _run(_suite(tmp_path, _tracker), tmp_path / ".stateval")
    summary = outcome.summary
    assert summary.n_cases == 3
    assert summary.n_errors == 1
    assert summary.overall_match_rate == pytest.approx(1 / 3)
    # expected fields: right(1 ok) + wrong(area wrong, stars ok) + boom(area missing) = 2/4
    assert summary.accuracy == pytest.approx(2 / 4)
    right, wrong, boom = summary.cases
    assert [c.case_id for c in summary.cases] == ["right", "wrong", "boom"]
    assert right.overall_match
    area = wrong.evaluation("field:hotel.area")
    assert area is not None
    assert (area.score, area.label) == (0.0, "mismatched")
    assert "expected 'south'" in area.explanation
    assert "got 'North'" in area.explanation
    parking = wrong.evaluation("field:hotel.parking")
    assert parking is not None
    assert parking.label == "extra"
    assert wrong.evaluation("preserved_fields_accuracy") is not None
    assert wrong.evaluation("preserved_fields_accuracy").score == 1.0  # type: ignore[union-attr]
    assert wrong.evaluation("changed_fields_accuracy").score == 0.0  # type: ignore[union-attr]
    assert not boom.ok
    state = boom.evaluation("state_accuracy")
    assert state is not None
    assert state.label == "error"
    assert "ValueError" in state.explanation
    assert boom.evaluation("field:hotel.area").label == "missing"  # type: ignore[union-attr]
    rows = {r.path: r for r in summary.fields}
    # worst first: parking is always extra, area right 1 time in 3, stars always right
    assert [r.path for r in summary.fields] == ["hotel.parking", "hotel.area", "hotel.stars"]
    assert (rows["hotel.area"].n, rows["hotel.area"].errors) == (3, 2)
    assert rows["hotel.parking"].extra == 1


def test_a_mutator_setting_a_bare_value_fails_its_case_saying_how_to_fix_it(
    tmp_path: Path,
) -> None:
    def bare(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        out = state.copy()
        out.set_value("hotel.area", input.prompt.split()[-1])  # type: ignore[arg-type]
        return out

    cases = [
        {
            "id": "c",
            "input": {"prompt": "area south"},
            "expected_post_state": {"hotel.area": "south"},
        }
    ]
    (case,) = _run(_suite(tmp_path, bare, cases), tmp_path / ".stateval").summary.cases
    assert not case.ok  # a failure of the case, not a field silently read as missing
    assert case.result.error_type == "InvalidValueError"
    assert "ValueConfidence('south', 1.0)" in (case.result.error or "")
    area = case.evaluation("field:hotel.area")
    assert area is not None
    assert area.explanation.startswith("mutator failed (InvalidValueError)")


def test_concurrency_is_bounded(tmp_path: Path) -> None:
    running = 0
    peak = 0

    async def slow(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return state.copy()

    cases = [{"id": str(i), "input": {"prompt": "p"}, "expected_post_state": {}} for i in range(12)]
    outcome = _run(_suite(tmp_path, slow, cases), tmp_path / ".stateval", concurrency=3)
    assert outcome.summary.n_cases == 12
    assert peak == 3


def test_each_result_is_journaled_and_resume_runs_only_the_missing_cases(tmp_path: Path) -> None:
    root = tmp_path / ".stateval"
    calls: list[str] = []

    def interrupted(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        if input.prompt == "explode":
            raise KeyboardInterrupt
        calls.append(input.message_id)
        return _tracker(state, input)

    suite = _suite(tmp_path, interrupted)
    journal = start_journal(root, suite)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(run_suite(suite, journal, concurrency=1))
    on_disk = Journal.open(root, journal.run_id)
    assert sorted(on_disk.results) == ["right", "wrong"]
    assert on_disk.missing == ["boom"]
    assert not on_disk.complete

    calls.clear()

    def counted(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        calls.append(input.message_id)
        return state.copy()

    resumed = dataclasses.replace(suite, mutator=PythonMutator(counted))
    again = find_resumable(root, resumed)
    assert again.run_id == journal.run_id
    outcome = asyncio.run(run_suite(resumed, again, concurrency=4))
    assert calls == ["boom"]
    assert outcome.summary.n_cases == 3
    assert outcome.summary.complete
    assert Journal.open(root, journal.run_id).complete


def test_rescore_applies_new_policies_without_calling_the_mutator(tmp_path: Path) -> None:
    root = tmp_path / ".stateval"
    cases = [{"id": "c", "input": {"prompt": "p"}, "expected_post_state": {"city": "Cambridge "}}]
    calls = []

    def upper(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        calls.append(1)
        return InterpretiveState.from_flat({"city": "cambridge"})

    suite = _suite(tmp_path, upper, cases, thresholds={"accuracy": 1.0})
    first = _run(suite, root)
    assert not first.summary.passed
    loose = _suite(
        tmp_path,
        None,
        cases,
        thresholds={"accuracy": 1.0},
        policies={"city": {"normalize": ["case", "whitespace"]}},
    )
    summary = rescore(loose, Journal.open(root, "latest"))
    assert calls == [1]
    assert summary.passed
    assert summary.cases[0].evaluation("field:city").label == "matching"  # type: ignore[union-attr]


def test_thresholds_decide_whether_the_run_passes(tmp_path: Path) -> None:
    thresholds = {
        "overall_match_rate": 0.3,
        "max_error_rate": 0.5,
        "fields": {"hotel.*": 0.9, "hotel.stars": 0.5},
    }
    summary = _run(_suite(tmp_path, _tracker, thresholds=thresholds), tmp_path / "r").summary
    results = {t.name: t for t in summary.thresholds}
    assert results["overall_match_rate"].passed
    assert results["error_rate"].passed
    assert results["error_rate"].value == pytest.approx(1 / 3)
    assert not results["fields[hotel.*]"].passed  # hotel.area is right 1 time in 3
    assert results["fields[hotel.stars]"].passed
    assert not summary.passed
    rows = {r.path: r for r in summary.fields}
    assert rows["hotel.stars"].minimum == 0.5  # the exact key wins over the glob
    assert not rows["hotel.area"].passed
    assert rows["hotel.parking"].passed  # never expected: its minimum does not apply


def test_limit_plans_only_the_first_cases(tmp_path: Path) -> None:
    outcome = _run(_suite(tmp_path, _tracker), tmp_path / "r", limit=2)
    assert [c.case_id for c in outcome.summary.cases] == ["right", "wrong"]
    assert outcome.summary.n_planned == 2


def test_checks_and_slot_schema_become_evaluations_and_metrics(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        _tracker,
        checks={"hotel.area": [{"type": "regex", "pattern": "^[a-z]+$"}]},
        slots=["hotel.area", "hotel.stars", "hotel.parking"],
    )
    summary = _run(suite, tmp_path / "r").summary
    right, wrong, boom = summary.cases
    assert right.evaluation("check:hotel.area").score == 1.0  # type: ignore[union-attr]
    failed = wrong.evaluation("check:hotel.area")
    assert failed is not None
    assert failed.score == 0.0
    assert wrong.failed_checks == (failed,)
    assert boom.evaluation("check:hotel.area").label == "error"  # type: ignore[union-attr]
    # slots per case: right 3/3, wrong 1/3 (area wrong, parking extra), boom 2/3 (area missing)
    assert summary.slot_accuracy == pytest.approx(6 / 9)
    assert summary.joint_goal_accuracy == pytest.approx(1 / 3)
    assert wrong.evaluation("slot_accuracy").score == pytest.approx(1 / 3)  # type: ignore[union-attr]


DIET_CASES = [
    {"id": f"d{i}", "input": {"prompt": said}, "expected_post_state": {"diet": "vegetarian"}}
    for i, said in enumerate(["veggie", "vegan", "vegetarian"])
]
DIET_POLICY = {"diet": {"judge": "llm", "rubric": "same diet", "confidence": "ignore"}}


def _says(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    return InterpretiveState.from_flat({"diet": input.prompt})


def _judged_suite(tmp_path: Path, judge: FieldJudge | None) -> Suite:
    suite = _suite(tmp_path, _says, DIET_CASES, policies=DIET_POLICY)
    return dataclasses.replace(suite, judge=judge)


def test_judge_verdicts_land_in_field_evaluations_and_are_journaled(tmp_path: Path) -> None:
    llm = ScriptedJudgeLLM(
        lambda prompt: (
            {"label": "equivalent", "explanation": "veggie means vegetarian"}
            if '"veggie"' in prompt
            else {"label": "different", "explanation": "vegan is stricter"}
        )
    )
    root = tmp_path / ".stateval"
    summary = _run(_judged_suite(tmp_path, FieldJudge(llm)), root).summary
    veggie, vegan, same = (c.evaluation("field:diet") for c in summary.cases)
    assert veggie is not None
    assert vegan is not None
    assert same is not None
    assert (veggie.score, veggie.label, veggie.annotator_kind) == (1.0, "matching", "LLM")
    assert "judge accepts the value (veggie means vegetarian)" in veggie.explanation
    assert (vegan.score, vegan.label, vegan.annotator_kind) == (0.0, "mismatched", "LLM")
    assert "vegan is stricter" in vegan.explanation
    assert (same.label, same.annotator_kind) == ("matching", "CODE")  # the rule matched: no call
    assert llm.calls == 2
    assert summary.accuracy == pytest.approx(2 / 3)
    # Verdicts are journaled: rescoring (or resuming) does not ask the judge again.
    journal = Journal.open(root, "latest")
    assert [j["label"] for j in journal.results["d0"]["judgements"]] == ["equivalent"]
    again = rescore(_judged_suite(tmp_path, None), journal)
    assert llm.calls == 2
    assert again.cases[0].evaluation("field:diet") == veggie
    assert again.accuracy == summary.accuracy


def test_judge_failures_and_a_missing_judge_are_judge_errors_not_crashes(tmp_path: Path) -> None:
    llm = ScriptedJudgeLLM([TimeoutError("no answer in 5s"), {"label": "maybe"}])
    summary = _run(_judged_suite(tmp_path, FieldJudge(llm)), tmp_path / "a", concurrency=1).summary
    first, second, _ = (c.evaluation("field:diet") for c in summary.cases)
    assert first is not None
    assert second is not None
    assert (first.score, first.label, first.annotator_kind) == (0.0, "judge_error", "CODE")
    assert "judge error: judge timed out: no answer in 5s" in first.explanation
    assert second.label == "judge_error"
    assert "invalid label 'maybe'" in second.explanation
    unjudged = _run(_judged_suite(tmp_path, None), tmp_path / "b").summary
    evaluation = unjudged.cases[0].evaluation("field:diet")
    assert evaluation is not None
    assert evaluation.label == "judge_error"
    assert "add a judge: block to the suite" in evaluation.explanation


class _ClosingClient(BaseLLMClient):
    def __init__(self) -> None:
        self.closed = 0

    async def generate(self, prompt: str) -> str:
        return '[{"path": "hotel.area", "value": "north", "confidence": 1}]'

    async def aclose(self) -> None:
        self.closed += 1


class _ClosingJudgeLLM(ScriptedJudgeLLM):
    closed = 0

    async def aclose(self) -> None:
        self.closed += 1


def test_a_run_closes_its_llm_clients_also_when_it_fails(tmp_path: Path) -> None:
    client = _ClosingClient()
    llm = _ClosingJudgeLLM(["equivalent"])
    suite = dataclasses.replace(
        _suite(tmp_path, None, CASES[:1]), mutator=LLMMutator(client), judge=FieldJudge(llm)
    )
    assert _run(suite, tmp_path / "a").summary.n_cases == 1
    assert (client.closed, llm.closed) == (1, 1)

    def explode(score: object) -> None:
        raise RuntimeError("progress bar broke")

    journal = start_journal(tmp_path / "b", suite)
    with pytest.raises(RuntimeError, match="progress bar broke"):  # itself, not a group
        asyncio.run(run_suite(suite, journal, concurrency=1, on_case=explode))
    assert (client.closed, llm.closed) == (2, 2)
