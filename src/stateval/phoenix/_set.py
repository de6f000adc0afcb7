"""`evaluator_set`: the evaluators a suite hands to Phoenix, built from its field policies."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeAlias

from phoenix.client.resources.experiments.types import ExperimentEvaluation
from phoenix.evals import LLM, Evaluator

from stateval.errors import EvaluationConfigError
from stateval.phoenix._checks import CheckSpec, check_evaluators
from stateval.phoenix._evaluators import (
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
from stateval.phoenix._judge import FieldJudge, JudgeCache
from stateval.state import validate_path

__all__ = ["SuiteEvaluator", "evaluator_set"]

SuiteEvaluator: TypeAlias = Evaluator | Callable[..., list[ExperimentEvaluation]]
"""What `evaluator_set` returns: ``phoenix.evals`` evaluators, and the `field_scores` function
that gives the listed fields' evaluations."""


def evaluator_set(
    policies: Policies = None,
    fields: Iterable[str] | None = None,
    schema: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    checks: Mapping[str, Sequence[CheckSpec]] | None = None,
    judge_llm: LLM | FieldJudge | None = None,
    *,
    services_key: str | None = None,
    delta: bool = True,
    pre_state_key: str = "pre_state",
    judge_cache: JudgeCache | None = None,
    every_field: bool = False,
    critical: Sequence[str] = (),
) -> list[SuiteEvaluator]:
    """The evaluators for a suite: each gives named scores for ``run_experiment``.

    The case-level ones are ``phoenix.evals`` evaluators, each giving one `Score`. The listed
    fields are scored only where a field is present on either side: one `field_scores` function
    gives a ``field:<path>`` evaluation for each listed path the expected or the actual state
    holds, so a tracker whose schema lists many slots does not post an ``absent`` evaluation for
    every empty slot of every case. ``every_field=True`` is the strict form: one
    ``phoenix.evals`` evaluator per listed field, giving ``absent`` where neither state holds it
    (what ``evaluate_dataframe`` needs: a ``field:<path>_score`` column per field).

    Args:
        policies: The suite's field policies (see `Policies`).
        fields: Paths that get ``field:<path>`` evaluations (typically every path of every
            case's expected post-state); paths whose policy ignores them are skipped.
        schema: When given, adds ``slot_accuracy`` over these slots (a list, or service ->
            its slots).
        checks: ``{path: [check spec, ...]}`` adding ``check:<path>:<check>`` evaluators.
        judge_llm: A `phoenix.evals.LLM` (or a ready `FieldJudge`) for ``judge: llm`` fields;
            one judge with one cache serves every evaluator of the set.
        services_key: With a schema by service, ``slot_accuracy`` counts only the slots of
            the services this example metadata key lists (see `slot_accuracy`).
        delta: Include ``changed_fields_accuracy`` / ``preserved_fields_accuracy`` (they need
            the pre-state in ``input[pre_state_key]``; an input without it scores ``error``).
        pre_state_key: The example input key holding the pre-state.
        judge_cache: The cache for a judge built from ``judge_llm`` (a fresh one by default).
        every_field: One evaluator per listed field, scoring absent fields too.
        critical: The suite's ``thresholds.critical_fields``: adds ``critical_fields``.

    Returns:
        ``state_accuracy``, ``weighted_state_accuracy`` (when some policy sets a ``weight``),
        ``overall_match``, the delta pair, ``slot_accuracy``, ``critical_fields``, then the
        ``field_scores`` function (with ``every_field``: one ``field:<path>`` evaluator per
        field) and the checks, in that order.

    Raises:
        EvaluationConfigError: A listed field's policy asks for an LLM judge but no
            ``judge_llm`` is given, or a check spec is invalid.
    """
    resolved = read_policies(policies)
    judge: FieldJudge | None
    if judge_llm is None or isinstance(judge_llm, FieldJudge):
        judge = judge_llm
    else:
        judge = FieldJudge(judge_llm, cache=judge_cache)
    paths = [validate_path(p) for p in dict.fromkeys(fields or ())]
    scored = [p for p in paths if not resolved.for_path(p).ignore]
    out: list[SuiteEvaluator] = [state_accuracy(resolved, judge=judge)]
    if resolved.has_weights:
        out.append(weighted_state_accuracy(resolved, judge=judge))
    out.append(overall_match(resolved, judge=judge))
    if delta:
        out.append(changed_fields_accuracy(resolved, judge=judge, pre_state_key=pre_state_key))
        out.append(preserved_fields_accuracy(resolved, judge=judge, pre_state_key=pre_state_key))
    if schema is not None:
        slots = schema if isinstance(schema, Mapping) else list(schema)
        out.append(slot_accuracy(slots, resolved, services_key=services_key, judge=judge))
    if critical:
        out.append(critical_fields(critical, resolved, judge=judge))
    if every_field:
        out.extend(field_evaluator(p, resolved, judge=judge) for p in scored)
    elif scored:
        judged = [p for p in scored if resolved.for_path(p).judge is not None]
        if judge is None and judged:
            raise EvaluationConfigError(
                f"the policy of field {judged[0]!r} asks for judge='llm' but no judge is given"
            )
        out.append(field_scores(resolved, judge=judge, paths=scored))
    if checks:
        out.extend(check_evaluators(checks))
    return out
