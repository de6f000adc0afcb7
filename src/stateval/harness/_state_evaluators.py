"""State evaluators for the harness: a sample's output and reference are states.

A state may be given as an `InterpretiveState`, its JSON form ``{"fields": ...}``, a wrapper
``{"post_state": ...}``, a flat ``{path: value}`` object (confidence 1.0), or a JSON string of any
of those. For the delta metrics, the sample's ``input`` carries the pre-state (the same shapes, or
``{"pre_state": ...}``); an input that is plain text means an empty pre-state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, TypeAlias

from stateval.compare import (
    FieldPolicies,
    MatchPolicy,
    StateComparison,
    compare_delta,
    compare_states,
    slot_metrics,
)
from stateval.errors import EvaluationConfigError, StateError
from stateval.harness._types import EvaluationResult, EvaluationScoreType
from stateval.state import InterpretiveState
from stateval.wire import coerce_state

__all__ = ["STATE_METRICS", "StateEvaluator", "StateMetric"]

StateMetric: TypeAlias = Literal[
    "state_accuracy",
    "overall_match",
    "changed_fields_accuracy",
    "preserved_fields_accuracy",
    "slot_accuracy",
]

#: The metric names a `StateEvaluator` computes, which are also its registry names.
STATE_METRICS: tuple[StateMetric, ...] = (
    "state_accuracy",
    "overall_match",
    "changed_fields_accuracy",
    "preserved_fields_accuracy",
    "slot_accuracy",
)


def _state(value: object, what: str) -> InterpretiveState:
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise StateError(f"{what}: not a state (JSON does not parse: {exc.msg})") from exc
    if isinstance(value, Mapping) and not {"fields", "_fields", "post_state"} & set(value):
        return InterpretiveState.from_flat(value)
    return coerce_state(value, what=what)


def _pre_state(value: object) -> InterpretiveState:
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return InterpretiveState()  # a plain-text input: nothing was there before
    if isinstance(value, Mapping) and "pre_state" in value:
        pre = value["pre_state"]
        return InterpretiveState() if pre is None else _state(pre, "input.pre_state")
    if value is None or isinstance(value, str):
        return InterpretiveState()
    return _state(value, "input")


class StateEvaluator:
    """Scores a post-state against the expected one with stateval's comparison.

    Args:
        metric: Which score: ``state_accuracy`` (the seed's accuracy_score), ``overall_match``
            (1 or 0), ``changed_fields_accuracy`` / ``preserved_fields_accuracy`` (the delta view,
            against the pre-state in the input), or ``slot_accuracy`` (needs ``schema``).
        policies: How fields are compared (`FieldPolicies`, one `MatchPolicy`, or a mapping of
            path or glob to policy options as in a suite file).
        schema: The slot list, for ``slot_accuracy``.
        name: The evaluator's name (default: the metric).

    Raises:
        EvaluationConfigError: Unknown metric, bad policies, or ``slot_accuracy`` without a schema.

    Example:
        >>> import asyncio
        >>> ev = StateEvaluator("state_accuracy")
        >>> result = asyncio.run(ev.evaluate("", '{"a": 1, "b": 2}', '{"a": 1, "b": 3}'))
        >>> result.score, result.metrics["mismatched"]
        (0.5, 1)
    """

    score_types: ClassVar[Mapping[str, EvaluationScoreType]] = {
        "state_accuracy": EvaluationScoreType.PARTIAL_MATCH,
        "overall_match": EvaluationScoreType.EXACT_MATCH,
        "changed_fields_accuracy": EvaluationScoreType.PARTIAL_MATCH,
        "preserved_fields_accuracy": EvaluationScoreType.PARTIAL_MATCH,
        "slot_accuracy": EvaluationScoreType.PARTIAL_MATCH,
    }

    def __init__(
        self,
        metric: StateMetric = "state_accuracy",
        *,
        policies: FieldPolicies | MatchPolicy | Mapping[str, Any] | None = None,
        schema: Sequence[str] | None = None,
        name: str | None = None,
    ) -> None:
        if metric not in STATE_METRICS:
            known = ", ".join(STATE_METRICS)
            raise EvaluationConfigError(f"unknown state metric {metric!r}; known: {known}")
        if metric == "slot_accuracy" and not schema:
            raise EvaluationConfigError("slot_accuracy needs a schema (the list of slot paths)")
        self.metric: StateMetric = metric
        self.name = name or metric
        self.schema = list(schema or ())
        self.policies = self._policies(policies)

    @staticmethod
    def _policies(
        policies: FieldPolicies | MatchPolicy | Mapping[str, Any] | None,
    ) -> FieldPolicies | MatchPolicy | None:
        if policies is None or isinstance(policies, FieldPolicies | MatchPolicy):
            return policies
        try:
            return FieldPolicies.from_mapping(policies)
        except Exception as exc:  # SuiteError / PolicyError: a configuration problem here
            raise EvaluationConfigError(f"state evaluator policies: {exc}") from exc

    async def evaluate(self, input: Any, output: Any, reference: Any) -> EvaluationResult:
        """Compare ``output`` (the actual post-state) with ``reference`` (the expected one)."""
        actual = _state(output, "output")
        expected = _state(reference, "reference")
        score_type = self.score_types[self.metric]
        if self.metric == "slot_accuracy":
            slots = slot_metrics([(expected, actual)], self.schema, self.policies)
            return EvaluationResult(
                slots.slot_accuracy,
                score_type,
                f"slot accuracy {slots.slot_accuracy:.3f} over {len(self.schema)} slots",
                {"precision": slots.precision, "recall": slots.recall, "f1": slots.f1},
            )
        if self.metric in ("changed_fields_accuracy", "preserved_fields_accuracy"):
            delta = compare_delta(_pre_state(input), expected, actual, self.policies)
            changed = self.metric == "changed_fields_accuracy"
            side = delta.changed if changed else delta.preserved
            score = delta.changed_accuracy if changed else delta.preserved_accuracy
            what = "changed" if changed else "preserved"
            return EvaluationResult(
                score, score_type, f"{what} fields: {_summary(side)}", _counts(side)
            )
        comparison = compare_states(expected, actual, self.policies)
        if self.metric == "overall_match":
            score = 1.0 if comparison.overall_match else 0.0
        else:
            score = comparison.accuracy_score
        return EvaluationResult(score, score_type, _summary(comparison), _counts(comparison))


def _counts(comparison: StateComparison) -> dict[str, Any]:
    return {**comparison.counts, "accuracy": comparison.accuracy_score}


def _summary(comparison: StateComparison) -> str:
    wrong = [f"{f.path}: {f.explanation}" for f in comparison.fields if not f.matched]
    counts = ", ".join(f"{n} {status}" for status, n in comparison.counts.items() if n)
    head = counts or "no fields"
    return head if not wrong else f"{head}; " + "; ".join(wrong[:5])
