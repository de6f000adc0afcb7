"""Phoenix integration: stateval's evaluators as real ``phoenix.evals`` evaluators.

Every evaluator here is built with ``phoenix.evals.create_evaluator(kind="code")`` (or, for
LLM-judged fields, drives a ``ClassificationEvaluator``), so it can be passed unchanged to
``phoenix.evals.evaluate_dataframe`` or to ``phoenix.client``'s ``run_experiment``.

Example:
    >>> from stateval.state import InterpretiveState
    >>> want = InterpretiveState.from_flat({"hotel.area": "centre", "hotel.stars": 4})
    >>> got = InterpretiveState.from_flat({"hotel.area": "centre"})
    >>> case = {"output": task_output(got), "expected": {"post_state": want.to_dict()}}
    >>> state_accuracy().evaluate(case)[0].score
    0.5
"""

from __future__ import annotations

from stateval.phoenix._checks import (
    CheckSpec,
    check_evaluator,
    check_evaluators,
    contains_all_keywords,
    contains_any_keyword,
    contains_keyword,
    exact_match,
    json_parseable,
    json_schema,
    matches_regex,
)
from stateval.phoenix._edit_evaluators import edit_operation
from stateval.phoenix._evaluators import (
    FIELD_PREFIX,
    Policies,
    changed_fields_accuracy,
    critical_fields,
    field_evaluator,
    field_scores,
    overall_match,
    preserved_fields_accuracy,
    read_policies,
    slot_accuracy,
    state_accuracy,
    weighted_state_accuracy,
)
from stateval.phoenix._judge import (
    DEFAULT_JUDGE_TEMPLATE,
    JUDGE_CHOICES,
    FieldJudge,
    JudgeCache,
    JudgedComparison,
    JudgeVerdict,
    judge_comparison,
)
from stateval.phoenix._llm import OPENAI_COMPATIBLE_PROVIDER, OpenAICompatibleLLM
from stateval.phoenix._scripted import SCRIPTED_PROVIDER, JudgeReply, ScriptedJudgeLLM
from stateval.phoenix._set import SuiteEvaluator, evaluator_set
from stateval.wire import coerce_state, pre_state_of, task_error, task_output

__all__ = [
    "DEFAULT_JUDGE_TEMPLATE",
    "FIELD_PREFIX",
    "JUDGE_CHOICES",
    "OPENAI_COMPATIBLE_PROVIDER",
    "SCRIPTED_PROVIDER",
    "CheckSpec",
    "FieldJudge",
    "JudgeCache",
    "JudgeReply",
    "JudgeVerdict",
    "JudgedComparison",
    "OpenAICompatibleLLM",
    "Policies",
    "ScriptedJudgeLLM",
    "SuiteEvaluator",
    "changed_fields_accuracy",
    "check_evaluator",
    "check_evaluators",
    "coerce_state",
    "contains_all_keywords",
    "contains_any_keyword",
    "contains_keyword",
    "critical_fields",
    "edit_operation",
    "evaluator_set",
    "exact_match",
    "field_evaluator",
    "field_scores",
    "json_parseable",
    "json_schema",
    "judge_comparison",
    "matches_regex",
    "overall_match",
    "pre_state_of",
    "preserved_fields_accuracy",
    "read_policies",
    "slot_accuracy",
    "state_accuracy",
    "task_error",
    "task_output",
    "weighted_state_accuracy",
]
