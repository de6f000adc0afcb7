"""LLM-judged fields in a run: ask the judge once per case, journal its verdicts, score with them.

A field whose policy says ``judge: llm`` goes to the judge only when the rule calls its values
different. The runner asks right after the mutator call (`judge_result`) and the verdicts are
journaled with the case's result; scoring (`apply_judgements`, `judge_errors`) only reads
them, so resuming or rescoring never asks again. A verdict lands in the field's evaluation
``field:<path>`` with annotator kind ``LLM``; a judge that failed, or was never asked (no
``judge:`` block, or a policy or value that changed since the run), gives label ``judge_error``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from stateval.compare import (
    FieldComparison,
    FieldPolicies,
    ScoreValue,
    StateComparison,
    compare_states,
)
from stateval.run._results import CaseResult, Evaluation, Judgement
from stateval.suite import Case

if TYPE_CHECKING:
    from stateval.phoenix import FieldJudge

__all__ = ["apply_judgements", "evaluation", "judge_errors", "judge_result"]

NO_JUDGE = "no judge configured for a judge: llm policy (add a judge: block to the suite)"
NOT_JUDGED = "not judged in this run (the field's policy or values changed since)"


async def judge_result(
    case: Case, result: CaseResult, policies: FieldPolicies, judge: FieldJudge | None
) -> CaseResult:
    """``result`` with the judge's verdict on every field that asks for one (never raises)."""
    if not result.ok or result.post_state is None or not policies.has_judge:
        return result
    comparison = compare_states(case.expected_post_state, result.post_state, policies)
    requests = comparison.judge_requests
    if not requests:
        return result
    judgements = await asyncio.gather(*(_judge(request, judge) for request in requests))
    return replace(result, judgements=tuple(judgements))


async def _judge(request: FieldComparison, judge: FieldJudge | None) -> Judgement:
    assert request.expected is not None
    assert request.actual is not None
    rubric = request.policy.rubric if request.policy is not None else None
    expected, actual = request.expected.value, request.actual.value
    if judge is None:
        return Judgement(request.path, rubric, expected, actual, "judge_error", NO_JUDGE)
    try:
        verdict = await judge.ajudge(request.path, rubric, expected, actual)
    except Exception as exc:  # FieldJudge never raises; a user's judge might
        reason = f"judge failed: {type(exc).__name__}: {exc}"
        return Judgement(request.path, rubric, expected, actual, "judge_error", reason)
    return Judgement(request.path, rubric, expected, actual, verdict.label, verdict.explanation)


def apply_judgements(
    comparison: StateComparison, judgements: Sequence[Judgement]
) -> tuple[StateComparison, dict[str, Judgement | None]]:
    """``comparison`` with the journaled verdicts applied, and the verdict per judged field.

    A field that asks for the judge but has no verdict for its current rubric and values maps
    to None and keeps its rule status.
    """
    used: dict[str, Judgement | None] = {}
    for request in comparison.judge_requests:
        judgement = next((j for j in judgements if j.answers(request)), None)
        used[request.path] = judgement
        if judgement is not None and judgement.ok:
            comparison = comparison.with_judgement(
                request.path,
                matched=judgement.label == "equivalent",
                explanation=judgement.explanation or None,
            )
    return comparison, used


def judge_errors(judged: Mapping[str, Judgement | None]) -> dict[str, str]:
    """Path -> why the judge could not rule on it, for fields without a usable verdict."""
    return {
        path: NOT_JUDGED if j is None else j.explanation
        for path, j in judged.items()
        if j is None or not j.ok
    }


def evaluation(score: ScoreValue) -> Evaluation:
    """A core score as a run's `Evaluation` (an LLM verdict makes its annotator ``LLM``)."""
    assert score.score is not None  # the caller leaves out what has nothing to score
    kind: Literal["CODE", "LLM"] = "LLM" if score.judged else "CODE"
    return Evaluation(score.name, score.score, score.label, score.explanation, kind)
