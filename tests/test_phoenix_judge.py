"""LLM-judged fields, against a scripted phoenix.evals LLM."""

from __future__ import annotations

from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pytest
from phoenix.evals import LLM, async_evaluate_dataframe, evaluate_dataframe

from stateval.compare import FieldPolicies
from stateval.errors import EvaluationConfigError
from stateval.phoenix import (
    FieldJudge,
    JudgeCache,
    ScriptedJudgeLLM,
    evaluator_set,
    field_evaluator,
    field_scores,
    state_accuracy,
    task_output,
)
from stateval.state import InterpretiveState, ValueConfidence

POLICIES = FieldPolicies.from_mapping(
    {"hotel.area": {"judge": "llm", "rubric": "British and US spellings are the same area"}}
)


def row(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    return {
        "output": task_output(InterpretiveState.from_flat(actual)),
        "expected": {"post_state": InterpretiveState.from_flat(expected).to_dict()},
    }


def scores(rows: list[dict[str, Any]], evaluators: list[Any]) -> list[dict[str, dict[str, Any]]]:
    df = evaluate_dataframe(dataframe=pd.DataFrame(rows), evaluators=evaluators, hide_tqdm_bar=True)
    return [{ev.name: df.iloc[i][f"{ev.name}_score"] for ev in evaluators} for i in range(len(df))]


def test_scripted_llm_is_a_phoenix_llm() -> None:
    llm = ScriptedJudgeLLM(["equivalent", ValueError("boom")])
    assert isinstance(llm, LLM)
    reply = llm.generate_classification("same?", labels=["equivalent", "different"])
    assert reply["label"] == "equivalent"
    assert llm.prompts == ["same?"]
    assert llm.remaining == 1


def test_judge_accepts_a_value_the_rule_calls_different() -> None:
    llm = ScriptedJudgeLLM([{"label": "equivalent", "explanation": "center is US for centre"}])
    judge = FieldJudge(llm)
    (result,) = scores(
        [row({"hotel.area": "centre"}, {"hotel.area": "center"})],
        [field_evaluator("hotel.area", POLICIES, judge=judge)],
    )
    field = result["field:hotel.area"]
    assert (field["score"], field["label"]) == (1.0, "matching")
    assert "judge accepts the value" in field["explanation"]
    assert "center is US for centre" in field["explanation"]
    assert field["metadata"]["judge"] == "equivalent"
    (prompt,) = llm.prompts
    assert "Field: hotel.area" in prompt
    assert "British and US spellings are the same area" in prompt
    assert 'EXPECTED value (JSON): "centre"' in prompt
    assert 'ACTUAL value (JSON): "center"' in prompt


def test_judge_rejects_and_rule_matches_never_call_the_llm() -> None:
    llm = ScriptedJudgeLLM(["different"])
    judge = FieldJudge(llm)
    ev = field_evaluator("hotel.area", POLICIES, judge=judge)
    rejected, same = scores(
        [
            row({"hotel.area": "centre"}, {"hotel.area": "north"}),
            row({"hotel.area": "centre"}, {"hotel.area": "centre"}),
        ],
        [ev],
    )
    assert (rejected["field:hotel.area"]["score"], rejected["field:hotel.area"]["label"]) == (
        0.0,
        "mismatched",
    )
    assert "judge rejects the value" in rejected["field:hotel.area"]["explanation"]
    assert same["field:hotel.area"]["label"] == "matching"
    assert llm.calls == 1


def test_judge_cannot_fix_a_differing_confidence() -> None:
    expected = InterpretiveState()
    expected.add_value("hotel.area", ValueConfidence("centre", 0.9))
    actual = InterpretiveState()
    actual.add_value("hotel.area", ValueConfidence("center", 0.5))
    judge = FieldJudge(ScriptedJudgeLLM(["equivalent"]))
    (score,) = field_evaluator("hotel.area", POLICIES, judge=judge).evaluate(
        {"output": task_output(actual), "expected": expected.to_dict()}
    )
    assert (score.score, score.label) == (0.0, "mismatched")
    assert "confidence differs" in (score.explanation or "")


def test_judge_failures_are_recorded_per_field() -> None:
    llm = ScriptedJudgeLLM(
        [
            {"label": "maybe", "explanation": "unsure"},
            {"refusal": "I cannot help with that"},
            TimeoutError("read timed out after 30s"),
            "I think they are the same",
        ]
    )
    judge = FieldJudge(llm)
    rows = [row({"hotel.area": "centre"}, {"hotel.area": f"centre {i}"}) for i in range(5)]
    results = scores(rows, [field_evaluator("hotel.area", POLICIES, judge=judge)])
    fields = [r["field:hotel.area"] for r in results]
    assert [(f["score"], f["label"]) for f in fields] == [(0.0, "judge_error")] * 5
    reasons = [f["explanation"].split("judge error: ", 1)[1] for f in fields]
    assert "maybe" in reasons[0]
    assert "refused or unparseable" in reasons[1]
    assert reasons[2] == "judge timed out: read timed out after 30s"
    assert "I think they are the same" in reasons[3]
    assert "ScriptExhaustedError" in reasons[4]
    assert len(judge.cache) == 0


def test_verdicts_are_cached_per_rubric_expected_and_actual() -> None:
    llm = ScriptedJudgeLLM(["equivalent", "different"])
    cache = JudgeCache()
    evaluators = evaluator_set(
        POLICIES,
        fields=["hotel.area"],
        judge_llm=llm,
        judge_cache=cache,
        delta=False,
        every_field=True,  # evaluate_dataframe: one evaluator per field
    )
    rows = [
        row({"hotel.area": "centre"}, {"hotel.area": "center"}),
        row({"hotel.area": "centre", "x": 1}, {"hotel.area": "center", "x": 1}),
        row({"hotel.area": "centre"}, {"hotel.area": "downtown"}),
    ]
    results = scores(rows, evaluators)
    assert llm.calls == 2
    assert cache.misses == 2
    assert cache.hits == 3 * 3 - 2  # three evaluators judge each of three rows
    assert [r["field:hotel.area"]["label"] for r in results] == [
        "matching",
        "matching",
        "mismatched",
    ]
    assert [r["state_accuracy"]["score"] for r in results] == [1.0, 1.0, 0.0]
    assert results[1]["field:hotel.area"]["metadata"]["judge_cached"] is True


def test_a_judged_field_without_a_judge_is_a_judge_error() -> None:
    with pytest.raises(EvaluationConfigError, match="no judge is given"):
        field_evaluator("hotel.area", POLICIES)
    result = field_scores(POLICIES)(**row({"hotel.area": "centre"}, {"hotel.area": "center"}))
    assert [(r["name"], r["score"], r["label"]) for r in result] == [
        ("field:hotel.area", 0.0, "judge_error")
    ]
    assert "no judge LLM configured" in result[0]["explanation"]


async def test_judge_works_under_async_evaluate_dataframe() -> None:
    llm = ScriptedJudgeLLM(lambda prompt: "equivalent" if "center" in prompt else "different")
    judge = FieldJudge(llm)
    rows = [
        row({"hotel.area": "centre"}, {"hotel.area": "center"}),
        row({"hotel.area": "centre"}, {"hotel.area": "north"}),
    ]
    evaluators = [state_accuracy(POLICIES, judge=judge)]
    df = await async_evaluate_dataframe(
        dataframe=pd.DataFrame(rows), evaluators=evaluators, hide_tqdm_bar=True
    )
    assert [s["score"] for s in df["state_accuracy_score"]] == [1.0, 0.0]
    assert llm.calls == 2
