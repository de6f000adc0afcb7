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

from stateval.compare import FieldPolicies, MatchPolicy, compare_states, score_comparison
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


_DETAILS = 5


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
        """Compare ``output`` (the actual post-state) with ``reference`` (the expected one).

        The score, explanation and counts come from the one scoring core
        (`stateval.compare.score_comparison`), so they equal ``stateval run``'s.
        """
        actual = _state(output, "output")
        expected = _state(reference, "reference")
        delta = self.metric in ("changed_fields_accuracy", "preserved_fields_accuracy")
        scores = score_comparison(
            compare_states(expected, actual, self.policies),
            policies=self.policies,
            pre=_pre_state(input) if delta else None,
            expected=expected,
            slots=self.schema if self.metric == "slot_accuracy" else None,
        )
        score = scores.metric(self.metric)
        assert score is not None  # the pre-state and the schema are given
        wrong = [f"{f.name}: {f.explanation}" for f in scores.fields() if f.score != 1.0]
        feedback = "; ".join([score.explanation, *wrong[:_DETAILS]])
        # an empty delta view has nothing to score: it passes (Phoenix leaves it unscored)
        value = 1.0 if score.score is None else score.score
        return EvaluationResult(
            value, self.score_types[self.metric], feedback, dict(score.metadata)
        )
