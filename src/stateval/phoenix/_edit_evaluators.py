"""``op:<operation>`` evaluators: of the fields a case expects to keep, add, update or delete
(from its pre-state), the fraction the mutator got right, labelled with the most frequent
update error (``stale``, ``clobber``, ``missed_delete``...). The same scores as ``stateval
run``'s case-level ``op:*`` evaluations (`stateval.compare.CaseScores.edit_ops`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from phoenix.evals import Evaluator, Score

from stateval.compare import SCORED_OPS, EditOp, field_edits
from stateval.errors import EvaluationConfigError, StateError
from stateval.phoenix._evaluators import (
    Policies,
    _json_object,
    _scores,
    as_score,
    code_evaluator,
    error_score,
    read_case,
    read_policies,
)
from stateval.phoenix._judge import FieldJudge
from stateval.wire import pre_state_of

__all__ = ["edit_operation"]


def edit_operation(
    op: str,
    policies: Policies = None,
    *,
    judge: FieldJudge | None = None,
    pre_state_key: str = "pre_state",
) -> Evaluator:
    """``op:<op>`` (``keep``, ``add``, ``update`` or ``delete``): the fraction of the fields the
    case expects that operation of that are right, labelled ``ok`` or with the most frequent
    update error; no score (label ``empty``) when the case expects no such operation.

    Needs the pre-state in ``input[pre_state_key]`` (a null one is the empty state).

    Raises:
        EvaluationConfigError: ``op`` is not one of keep, add, update, delete.
    """
    names = [o.value for o in SCORED_OPS]
    if op not in names:
        raise EvaluationConfigError(f"edit_operation: op must be one of {names}, got {op!r}")
    wanted = EditOp(op)
    name = f"op:{op}"
    resolved = read_policies(policies)

    def evaluate(output: Any, expected: Any, input: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        given = _json_object(input)
        if not isinstance(given, dict) or pre_state_key not in given:
            return error_score(f"{name} needs the pre-state in input[{pre_state_key!r}]")
        try:
            pre = pre_state_of({"pre_state": given[pre_state_key]})
        except StateError as exc:
            return error_score(str(exc))
        scores, _ = _scores(case, resolved, judge, pre=pre)
        edits = field_edits(pre, case.expected, case.actual, resolved, scores.comparison)
        for score in dataclasses.replace(scores, edits=edits).edit_ops():
            if score.name == name:
                return as_score(score)
        return Score(score=None, label="empty", explanation=f"the case expects no {wanted} op")

    return code_evaluator(name, ("output", "expected", "input"), evaluate)
