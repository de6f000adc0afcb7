"""State evaluators as real `phoenix.evals` code evaluators.

Each factory returns an evaluator built with ``phoenix.evals.create_evaluator(kind="code")``. It
binds Phoenix's parameters (``output``: the task output, ``expected``: the example output,
``input``: the example input) and returns one `Score`, so it works in
``phoenix.evals.evaluate_dataframe`` and in ``phoenix.client``'s ``run_experiment`` alike. The
states are read with `coerce_state` (see `stateval.wire` for the wire format). The numbers,
labels and explanations come from the one scoring core, `stateval.compare.score_comparison`, so
they are the ones ``stateval run`` reports.

A task output that reports an error (``{"error": "..."}``), or that holds no readable state, scores
0.0 with label ``"error"`` and the reason as explanation: an evaluator never raises on a bad case.

Per-field evaluators (``field:<path>``) score 1.0 when the field matches and 0.0 otherwise, with
label ``matching`` / ``mismatched`` / ``missing`` / ``extra``; a path neither state holds gets no
score and label ``absent``, a path whose policy ignores it label ``ignored``, and a field the LLM
judge could not rule on scores 0.0 with label ``judge_error``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from phoenix.client.resources.experiments.types import ExperimentEvaluation
from phoenix.evals import Evaluator, Score, create_evaluator

from stateval.compare import (
    FIELD_PREFIX,
    CaseScores,
    FieldPolicies,
    MatchPolicy,
    ScoreValue,
    compare_states,
    score_comparison,
    slots_in_play,
    sub_scores,
)
from stateval.errors import EvaluationConfigError, StateError
from stateval.phoenix._judge import FieldJudge, JudgedComparison, judge_comparison
from stateval.state import InterpretiveState, validate_path
from stateval.wire import coerce_state, pre_state_of, task_error

__all__ = [
    "FIELD_PREFIX",
    "Policies",
    "changed_fields_accuracy",
    "critical_fields",
    "field_evaluator",
    "field_scores",
    "overall_match",
    "preserved_fields_accuracy",
    "read_policies",
    "slot_accuracy",
    "state_accuracy",
    "weighted_state_accuracy",
]

Policies: TypeAlias = "FieldPolicies | MatchPolicy | Mapping[str, Any] | None"
"""Field policies as a `FieldPolicies`, one `MatchPolicy` for all paths, suite-file data
(``{pattern: {option: value}}``), or None for the seed rule."""


def read_policies(policies: Policies) -> FieldPolicies:
    """``policies`` as `FieldPolicies` (see `Policies`)."""
    if isinstance(policies, FieldPolicies | MatchPolicy) or policies is None:
        return FieldPolicies.of(policies)
    return FieldPolicies.from_mapping(policies)


def code_evaluator(
    name: str,
    params: tuple[str, ...],
    fn: Callable[..., Score],
    optional: tuple[str, ...] = (),
) -> Evaluator:
    """``create_evaluator(name=name, kind="code")`` over ``fn`` taking exactly ``params``.

    The signature is set explicitly (Phoenix builds its input schema from it, resolving string
    annotations in its own module). Parameters in ``optional`` default to None, so an
    evaluation input without them (no gold: no ``expected``) still binds instead of failing
    with Phoenix's ``Path not found``.
    """
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                p,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Any,
                **({"default": None} if p in optional else {}),
            )
            for p in params
        ]
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


def _scores(
    case: CaseStates,
    policies: FieldPolicies,
    judge: FieldJudge | None,
    *,
    paths: list[str] | None = None,
    pre: InterpretiveState | None = None,
    slots: list[str] | None = None,
    in_play: Sequence[str] | None = None,
    critical: Sequence[str] = (),
) -> tuple[CaseScores, JudgedComparison]:
    """The case's scores from one comparison, judged by ``judge`` where a policy asks."""
    judged = judge_comparison(
        compare_states(case.expected, case.actual, policies, paths=paths), judge
    )
    scores = score_comparison(
        judged.comparison,
        policies=policies,
        pre=pre,
        expected=case.expected if pre is not None else None,
        slots=slots,
        in_play=in_play,
        judge_errors={p: v.explanation for p, v in judged.verdicts.items() if not v.ok},
        judged=[p for p, v in judged.verdicts.items() if v.ok],
        critical=critical,
    )
    return scores, judged


def as_score(value: ScoreValue) -> Score:
    """A core score as a Phoenix `Score`."""
    return Score(
        score=value.score,
        label=value.label,
        explanation=value.explanation,
        metadata=dict(value.metadata),
    )


def state_accuracy(policies: Policies = None, *, judge: FieldJudge | None = None) -> Evaluator:
    """``state_accuracy``: matching / (matching + mismatched + missing) expected fields.

    The seed's ``accuracy_score``, except on the empty turn (nothing expected, nothing
    produced), which scores 1.0 with label ``empty``. Fields whose policy asks for an LLM judge
    are judged first when ``judge`` is given.
    """
    resolved = read_policies(policies)

    def evaluate(output: Any, expected: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        return as_score(_scores(case, resolved, judge)[0].state_accuracy())

    return code_evaluator("state_accuracy", ("output", "expected"), evaluate)


def weighted_state_accuracy(
    policies: Policies = None, *, judge: FieldJudge | None = None
) -> Evaluator:
    """``weighted_state_accuracy``: the expected fields' scores weighted by their policy's
    ``weight`` over the summed weights (an aligned list of records under ``score: similarity``
    counts its list score)."""
    resolved = read_policies(policies)

    def evaluate(output: Any, expected: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        value = _scores(case, resolved, judge)[0].weighted_state_accuracy(always=True)
        assert value is not None  # always
        return as_score(value)

    return code_evaluator("weighted_state_accuracy", ("output", "expected"), evaluate)


def critical_fields(
    critical: Sequence[str], policies: Policies = None, *, judge: FieldJudge | None = None
) -> Evaluator:
    """``critical_fields``: 1.0 / ``ok`` when none of the ``critical`` paths or globs (fields,
    or sub-fields of lists of records such as ``line_items[].quantity``) is wrong, missing or
    extra; 0.0 / ``failed`` naming them otherwise."""
    if isinstance(critical, str) or not critical:
        raise EvaluationConfigError("critical_fields needs a list of paths or globs")
    resolved = read_policies(policies)
    patterns = tuple(critical)

    def evaluate(output: Any, expected: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        value = _scores(case, resolved, judge, critical=patterns)[0].critical_fields()
        assert value is not None  # patterns are given
        return as_score(value)

    return code_evaluator("critical_fields", ("output", "expected"), evaluate)


def overall_match(policies: Policies = None, *, judge: FieldJudge | None = None) -> Evaluator:
    """``overall_match``: 1.0 / label ``match`` when no field is mismatched, missing or extra."""
    resolved = read_policies(policies)

    def evaluate(output: Any, expected: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        return as_score(_scores(case, resolved, judge)[0].overall_match())

    return code_evaluator("overall_match", ("output", "expected"), evaluate)


def _delta_evaluator(
    name: str, view: str, policies: Policies, judge: FieldJudge | None, pre_state_key: str
) -> Evaluator:
    resolved = read_policies(policies)

    def evaluate(output: Any, expected: Any, input: Any) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        given = _json_object(input)
        if not isinstance(given, Mapping) or pre_state_key not in given:
            return error_score(
                f"{name} needs the pre-state in input[{pre_state_key!r}] and the input has "
                "no such key (pass pre_state_key= to name another)"
            )
        try:
            pre = pre_state_of({"pre_state": given[pre_state_key]})
        except StateError as exc:
            return error_score(str(exc))
        scores = _scores(case, resolved, judge, pre=pre)[0]
        score = scores.metric(name)
        assert score is not None  # the pre-state is given
        return as_score(score)

    return code_evaluator(name, ("output", "expected", "input"), evaluate)


def _json_object(value: Any) -> Any:
    if isinstance(value, str | bytes):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def changed_fields_accuracy(
    policies: Policies = None,
    *,
    judge: FieldJudge | None = None,
    pre_state_key: str = "pre_state",
) -> Evaluator:
    """``changed_fields_accuracy``: accuracy over the fields the case expects to change.

    Needs the pre-state in ``input[pre_state_key]`` (a null one is the empty state); an input
    without that key scores 0.0 with label ``error`` saying so. A case that expects no change
    gets no score and label ``empty`` when the mutator changed nothing either, 0.0 when it set
    a field.
    """
    return _delta_evaluator("changed_fields_accuracy", "changed", policies, judge, pre_state_key)


def preserved_fields_accuracy(
    policies: Policies = None,
    *,
    judge: FieldJudge | None = None,
    pre_state_key: str = "pre_state",
) -> Evaluator:
    """``preserved_fields_accuracy``: accuracy over the fields the case expects to be kept.

    Needs the pre-state in ``input[pre_state_key]`` (a null one is the empty state); an input
    without that key scores 0.0 with label ``error`` saying so. A case that keeps no field gets
    no score and label ``empty``.
    """
    return _delta_evaluator(
        "preserved_fields_accuracy", "preserved", policies, judge, pre_state_key
    )


def slot_accuracy(
    schema: Sequence[str] | Mapping[str, Sequence[str]],
    policies: Policies = None,
    *,
    services_key: str | None = None,
    name: str = "slot_accuracy",
    judge: FieldJudge | None = None,
) -> Evaluator:
    """``slot_accuracy``: the fraction of ``schema`` slots that are right in this case.

    A slot absent from both states is right (dialogue-state-tracking convention). A slot whose
    policy asks for an LLM judge counts as ``judge`` rules (as in ``stateval run``); without a
    judge, by the deterministic rule.

    Args:
        schema: The slot paths, or service -> its slot paths (``SlotSchema.by_service()`` of a
            suite's slot schema file).
        policies: Field policies (see `Policies`).
        services_key: With a schema by service, the example metadata key listing the services
            in play (``metadata.services``): only their slots are counted, as ``stateval run``
            counts them with the suite's ``slots.services_key``. A case naming none counts
            every slot.
        name: The evaluator's name.
        judge: Rules on the fields whose policy says ``judge: llm``.

    Raises:
        EvaluationConfigError: ``services_key`` without a schema by service.

    Example:
        >>> evaluator = slot_accuracy(
        ...     {"hotel": ["hotel.area", "hotel.stars"], "taxi": ["taxi.dest"]},
        ...     services_key="metadata.services",
        ... )
        >>> score = evaluator.evaluate({
        ...     "output": {"hotel.area": "south"},
        ...     "expected": {"hotel.area": "north"},
        ...     "metadata": {"services": ["hotel"]},
        ... })[0]
        >>> score.score, score.explanation  # taxi.dest is not in play: not counted as right
        (0.5, '1 of 2 schema slots right; wrong: hotel.area')
    """
    if isinstance(schema, str):
        raise TypeError("schema must be a sequence of slot paths, not a string")
    services: dict[str, str | None] = {}
    if isinstance(schema, Mapping):
        for service, paths in schema.items():
            if isinstance(paths, str):
                raise TypeError(f"the slots of service {service!r} must be a sequence of paths")
            services.update((validate_path(p), str(service)) for p in paths)
        slots = list(services)
    else:
        slots = [validate_path(s) for s in schema]
    if services_key is not None and not services:
        raise EvaluationConfigError(
            "slot_accuracy: services_key needs the schema by service ({service: [slot, ...]})"
        )
    resolved = read_policies(policies)
    scored = [s for s in slots if not resolved.for_path(s).ignore]

    def score(output: Any, expected: Any, metadata: Mapping[str, Any] | None) -> Score:
        case = read_case(output, expected)
        if isinstance(case, Score):
            return case
        in_play = (
            None
            if services_key is None
            else slots_in_play(
                scored, services, metadata if isinstance(metadata, Mapping) else None, services_key
            )
        )
        value = _scores(case, resolved, judge, paths=slots, slots=slots, in_play=in_play)[
            0
        ].slot_accuracy()
        assert value is not None  # the schema is given
        return as_score(value)

    if services_key is None:

        def evaluate(output: Any, expected: Any) -> Score:
            return score(output, expected, None)

        return code_evaluator(name, ("output", "expected"), evaluate)

    def evaluate_in_play(output: Any, expected: Any, metadata: Any) -> Score:
        return score(output, expected, metadata)

    return code_evaluator(name, ("output", "expected", "metadata"), evaluate_in_play)


# -- per field ------------------------------------------------------------------------------


def _field_payload(path: str, scores: CaseScores, judged: JudgedComparison) -> Score:
    score = as_score(scores.field(path))
    verdict = judged.verdicts.get(path)
    if verdict is not None and score.metadata is not None:
        score.metadata["judge"] = verdict.label
        score.metadata["judge_cached"] = verdict.cached
    return score


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
        scores, judged = _scores(case, resolved, judge, paths=[path])
        return _field_payload(path, scores, judged)

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
        scores, judged = _scores(case, resolved, judge, paths=wanted)
        out = []
        for f in judged.comparison.fields:
            out.append(
                _as_evaluation(f"{FIELD_PREFIX}{f.path}", _field_payload(f.path, scores, judged))
            )
            if f.records is not None:  # a list of records: one evaluation per sub-field
                out.extend(_as_evaluation(s.name, as_score(s)) for s in sub_scores(f.records))
        return out

    return field_scores
