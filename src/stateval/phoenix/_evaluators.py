"""State evaluators as real `phoenix.evals` code evaluators.

Each factory returns an evaluator built with ``phoenix.evals.create_evaluator(kind="code")``. It
binds Phoenix's parameters (``output``: the task output, ``expected``: the example output,
``input``: the example input) and returns one `Score`, so it works in
``phoenix.evals.evaluate_dataframe`` and in ``phoenix.client``'s ``run_experiment`` alike. The
states are read with `coerce_state` (see ``_coerce`` for the wire format).

A task output that reports an error (``{"error": "..."}``), or that holds no readable state, scores
0.0 with label ``"error"`` and the reason as explanation: an evaluator never raises on a bad case.

Per-field evaluators (``field:<path>``) score 1.0 when the field matches and 0.0 otherwise, with
label ``matching`` / ``mismatched`` / ``missing`` / ``extra``; a path neither state holds gets no
score and label ``absent``, a path whose policy ignores it label ``ignored``, and a field the LLM
judge could not rule on scores 0.0 with label ``judge_error``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from phoenix.client.resources.experiments.types import ExperimentEvaluation
from phoenix.evals import Evaluator, Score, create_evaluator

from stateval.compare import (
    FieldPolicies,
    MatchPolicy,
    StateComparison,
    compare_delta,
    compare_states,
    slot_metrics,
)
from stateval.errors import EvaluationConfigError, StateError
from stateval.phoenix._judge import FieldJudge, JudgedComparison, judge_comparison
from stateval.state import InterpretiveState, validate_path
from stateval.wire import coerce_state, pre_state_of, task_error

__all__ = [
    "FIELD_PREFIX",
    "Policies",
    "changed_fields_accuracy",
    "field_evaluator",
    "field_scores",
    "overall_match",
    "preserved_fields_accuracy",
    "read_policies",
    "slot_accuracy",
    "state_accuracy",
]

#: Per-field evaluations are named ``field:<path>``.
FIELD_PREFIX = "field:"

Policies: TypeAlias = "FieldPolicies | MatchPolicy | Mapping[str, Any] | None"
"""Field policies as a `FieldPolicies`, one `MatchPolicy` for all paths, suite-file data
(``{pattern: {option: value}}``), or None for the seed rule."""

_LIST_LIMIT = 5


def read_policies(policies: Policies) -> FieldPolicies:
    """``policies`` as `FieldPolicies` (see `Policies`)."""
    if isinstance(policies, FieldPolicies | MatchPolicy) or policies is None:
        return FieldPolicies.of(policies)
    return FieldPolicies.from_mapping(policies)


def code_evaluator(name: str, params: tuple[str, ...], fn: Callable[..., Score]) -> Evaluator:
    """``create_evaluator(name=name, kind="code")`` over ``fn`` taking exactly ``params``.

    The signature is set explicitly (Phoenix builds its input schema from it, resolving string
    annotations in its own module).
    """
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=Any) for p in params]
    )
    evaluator: Evaluator = create_evaluator(name=name, kind="code")(fn)
    return evaluator


def error_score(reason: str) -> Score:
    """The score of a case that cannot be evaluated: 0.0, label ``error``."""
    return Score(score=0.0, label="error", explanation=reason)


@dataclass(frozen=True, slots=True)
class CaseStates:
    """The expected and actual post-states of one case."""

    expected: InterpretiveState
    actual: InterpretiveState


def read_case(output: Any, expected: Any) -> CaseStates | Score:
    """The case's states, or an ``error`` score saying why they cannot be read."""
    error = task_error(output)
    if error is not None:
        return error_score(f"task failed: {error}")
    try:
        actual = coerce_state(output, what="output")
        wanted = coerce_state(expected, what="expected")
    except StateError as exc:
        return error_score(str(exc))
    return CaseStates(wanted, actual)


def _judged(
    case: CaseStates,
    policies: FieldPolicies,
    judge: FieldJudge | None,
    paths: list[str] | None = None,
) -> JudgedComparison:
    comparison = compare_states(case.expected, case.actual, policies, paths=paths)
    return judge_comparison(comparison, judge)


def _listed(label: str, paths: tuple[str, ...]) -> str:
    shown = ", ".join(paths[:_LIST_LIMIT])
    if len(paths) > _LIST_LIMIT:
        shown += f" (+{len(paths) - _LIST_LIMIT} more)"
    return f"{label}: {shown}"


def _summary(comparison: StateComparison, judged: JudgedComparison | None = None) -> str:
    n = comparison.n_expected
    parts = [f"{len(comparison.matching)} of {n} expected fields match"]
    for label, paths in (
        ("mismatched", comparison.mismatched),
        ("missing", comparison.missing),
        ("extra", comparison.extra),
    ):
        if paths:
            parts.append(_listed(label, paths))
    if judged is not None and judged.judge_errors:
        parts.append(_listed("judge_error", tuple(judged.judge_errors)))
    return "; ".join(parts)


def _counts_metadata(judged: JudgedComparison) -> dict[str, Any]:
    meta: dict[str, Any] = dict(judged.comparison.counts)
    if judged.verdicts:
        meta["judged"] = {p: v.label for p, v in judged.verdicts.items()}
    return meta


def state_accuracy(policies: Policies = None, *, judge: FieldJudge | None = None) -> Evaluator:
    """``state_accuracy``: matching / (matching + mismatched + missing) expected fields.

    The seed's ``accuracy_score`` (0.0 when the expected state is empty). Fields whose policy
    asks for an LLM judge are judged first when ``judge`` is given.
    """
    resolved = read_policies(policies)

    def evaluate(output: Any, expected: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        judged = _judged(case, resolved, judge)
        comparison = judged.comparison
        return Score(
            score=comparison.accuracy_score,
            explanation=_summary(comparison, judged),
            metadata=_counts_metadata(judged),
        )

    return code_evaluator("state_accuracy", ("output", "expected"), evaluate)


def overall_match(policies: Policies = None, *, judge: FieldJudge | None = None) -> Evaluator:
    """``overall_match``: 1.0 / label ``match`` when no field is mismatched, missing or extra."""
    resolved = read_policies(policies)

    def evaluate(output: Any, expected: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        judged = _judged(case, resolved, judge)
        ok = judged.comparison.overall_match
        return Score(
            score=float(ok),
            label="match" if ok else "mismatch",
            explanation=_summary(judged.comparison, judged),
            metadata=_counts_metadata(judged),
        )

    return code_evaluator("overall_match", ("output", "expected"), evaluate)


def _delta_evaluator(
    name: str, view: str, policies: Policies, judge: FieldJudge | None
) -> Evaluator:
    resolved = read_policies(policies)

    def evaluate(output: Any, expected: Any, input: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        try:
            pre = pre_state_of(input)
        except StateError as exc:
            return error_score(str(exc))
        delta = compare_delta(pre, case.expected, case.actual, resolved)
        part: StateComparison = delta.changed if view == "changed" else delta.preserved
        judged = judge_comparison(part, judge)
        comparison = judged.comparison
        if comparison.n_expected == 0:
            what = "change" if view == "changed" else "keep"
            extra = f"; {_listed('extra', comparison.extra)}" if comparison.extra else ""
            return Score(
                label="empty",
                explanation=f"the case expects the mutator to {what} no field{extra}",
                metadata=_counts_metadata(judged),
            )
        return Score(
            score=comparison.accuracy_score,
            explanation=f"{view}: {_summary(comparison, judged)}",
            metadata=_counts_metadata(judged),
        )

    return code_evaluator(name, ("output", "expected", "input"), evaluate)


def changed_fields_accuracy(
    policies: Policies = None, *, judge: FieldJudge | None = None
) -> Evaluator:
    """``changed_fields_accuracy``: accuracy over the fields the case expects to change.

    Needs the pre-state in ``input["pre_state"]``. A case that expects no change gets no score
    and label ``empty``.
    """
    return _delta_evaluator("changed_fields_accuracy", "changed", policies, judge)


def preserved_fields_accuracy(
    policies: Policies = None, *, judge: FieldJudge | None = None
) -> Evaluator:
    """``preserved_fields_accuracy``: accuracy over the fields the case expects to be kept.

    Needs the pre-state in ``input["pre_state"]``. A case that keeps no field gets no score and
    label ``empty``.
    """
    return _delta_evaluator("preserved_fields_accuracy", "preserved", policies, judge)


def slot_accuracy(
    schema: list[str] | tuple[str, ...], policies: Policies = None, *, name: str = "slot_accuracy"
) -> Evaluator:
    """``slot_accuracy``: the fraction of ``schema`` slots that are right in this case.

    A slot absent from both states is right (dialogue-state-tracking convention). The judge is
    not consulted (slots use the deterministic rule).
    """
    if isinstance(schema, str):
        raise TypeError("schema must be a sequence of slot paths, not a string")
    slots = [validate_path(s) for s in schema]
    resolved = read_policies(policies)

    def evaluate(output: Any, expected: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        metrics = slot_metrics([(case.expected, case.actual)], slots, resolved)
        wrong = tuple(s for s, acc in metrics.per_slot.items() if acc < 1.0)
        right = metrics.n_slots - len(wrong)
        explanation = f"{right} of {metrics.n_slots} slots right"
        if wrong:
            explanation += f"; {_listed('wrong', wrong)}"
        return Score(
            score=metrics.slot_accuracy,
            label="all_right" if not wrong else "some_wrong",
            explanation=explanation,
            metadata={
                "n_slots": metrics.n_slots,
                "tp": metrics.tp,
                "fp": metrics.fp,
                "fn": metrics.fn,
            },
        )

    return code_evaluator(name, ("output", "expected"), evaluate)


# -- per field ------------------------------------------------------------------------------


def _field_payload(path: str, judged: JudgedComparison, policies: FieldPolicies) -> Score:
    if policies.for_path(path).ignore:
        return Score(label="ignored", explanation=f"the policy of {path!r} ignores it")
    fc = judged.comparison.field(path)
    if fc is None:
        return Score(label="absent", explanation=f"neither state holds {path!r}")
    metadata: dict[str, Any] = {
        "path": path,
        "status": fc.status.value,
        "expected": None if fc.expected is None else fc.expected.to_dict(),
        "actual": None if fc.actual is None else fc.actual.to_dict(),
    }
    if fc.similarity is not None:
        metadata["similarity"] = fc.similarity
    verdict = judged.verdicts.get(path)
    if verdict is not None:
        metadata["judge"] = verdict.label
        metadata["judge_cached"] = verdict.cached
        if not verdict.ok:
            return Score(
                score=0.0,
                label="judge_error",
                explanation=f"{fc.explanation}; judge error: {verdict.explanation}",
                metadata=metadata,
            )
    return Score(
        score=fc.score,
        label=fc.status.value,
        explanation=fc.explanation,
        metadata=metadata,
    )


def field_evaluator(
    path: str, policies: Policies = None, *, judge: FieldJudge | None = None
) -> Evaluator:
    """``field:<path>``: 1.0 when the field matches, 0.0 when it is mismatched, missing or extra.

    The label is the status; the explanation shows the expected and actual best candidates.
    See the module docstring for ``absent``, ``ignored``, ``judge_error`` and ``error``.

    Raises:
        EvaluationConfigError: The field's policy asks for an LLM judge and ``judge`` is None.

    Example:
        >>> from stateval.state import InterpretiveState
        >>> ev = field_evaluator("hotel.area")
        >>> expected = InterpretiveState.from_flat({"hotel.area": "centre"}).to_dict()
        >>> score = ev.evaluate({"output": {"post_state": expected}, "expected": expected})[0]
        >>> (score.name, score.score, score.label)
        ('field:hotel.area', 1.0, 'matching')
    """
    validate_path(path)
    resolved = read_policies(policies)
    if judge is None and resolved.for_path(path).judge is not None:
        raise EvaluationConfigError(
            f"the policy of field {path!r} asks for judge='llm' but no judge is given"
        )

    def evaluate(output: Any, expected: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        return _field_payload(path, _judged(case, resolved, judge, [path]), resolved)

    return code_evaluator(f"{FIELD_PREFIX}{path}", ("output", "expected"), evaluate)


def _as_evaluation(name: str, score: Score) -> ExperimentEvaluation:
    out = ExperimentEvaluation(name=name)
    if score.score is not None:
        out["score"] = float(score.score)
    if score.label:
        out["label"] = score.label
    if score.explanation:
        out["explanation"] = score.explanation
    if score.metadata:
        out["metadata"] = score.metadata
    return out


def field_scores(
    policies: Policies = None,
    *,
    judge: FieldJudge | None = None,
    paths: Iterable[str] | None = None,
) -> Callable[..., list[ExperimentEvaluation]]:
    """A ``phoenix.client`` experiment evaluator giving one ``field:<path>`` evaluation per field.

    Phoenix's experiment runner logs only the first `Score` of a ``phoenix.evals`` evaluator, but
    a plain function evaluator may return a list of named results, and each is posted as its own
    evaluation. This one returns ``[{"name": "field:<path>", "score", "label", "explanation",
    "metadata"}, ...]`` for every path of the expected or actual state (only ``paths``, when
    given), so a field neither state holds gets no evaluation at all (use `field_evaluator` per
    path for ``evaluate_dataframe``). A failed task gives an ``error`` result for each expected
    path.
    """
    resolved = read_policies(policies)
    wanted = None if paths is None else [validate_path(p) for p in dict.fromkeys(paths)]

    def field_scores(output: Any, expected: Any) -> list[ExperimentEvaluation]:
        case = read_case(output, expected)
        if isinstance(case, Score):
            try:
                listed = coerce_state(expected, what="expected").paths()
            except StateError:
                return [_as_evaluation("field_scores", case)]
            if wanted is not None:
                listed = [p for p in listed if p in wanted]
            return [_as_evaluation(f"{FIELD_PREFIX}{p}", case) for p in listed]
        judged = _judged(case, resolved, judge, wanted)
        return [
            _as_evaluation(f"{FIELD_PREFIX}{f.path}", _field_payload(f.path, judged, resolved))
            for f in judged.comparison.fields
        ]

    return field_scores
