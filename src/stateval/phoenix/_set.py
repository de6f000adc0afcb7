"""`evaluator_set`: the evaluators a suite hands to Phoenix, built from its field policies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from phoenix.evals import LLM, Evaluator

from stateval.phoenix._checks import CheckSpec, check_evaluators
from stateval.phoenix._evaluators import (
    Policies,
    changed_fields_accuracy,
    field_evaluator,
    overall_match,
    preserved_fields_accuracy,
    read_policies,
    slot_accuracy,
    state_accuracy,
)
from stateval.phoenix._judge import FieldJudge, JudgeCache
from stateval.state import validate_path

__all__ = ["evaluator_set"]


def evaluator_set(
    policies: Policies = None,
    fields: Iterable[str] | None = None,
    schema: Sequence[str] | None = None,
    checks: Mapping[str, Sequence[CheckSpec]] | None = None,
    judge_llm: LLM | FieldJudge | None = None,
    *,
    delta: bool = True,
    judge_cache: JudgeCache | None = None,
) -> list[Evaluator]:
    """The ``phoenix.evals`` evaluators for a suite, each giving exactly one named score.

    Every evaluator returns a single `Score`, so each lands as its own named evaluation both in
    ``evaluate_dataframe`` (a ``<name>_score`` column) and in ``run_experiment``.

    Args:
        policies: The suite's field policies (see `Policies`).
        fields: Paths that get a ``field:<path>`` evaluator (typically every path of every
            case's expected post-state); paths whose policy ignores them are skipped.
        schema: When given, adds ``slot_accuracy`` over these slots.
        checks: ``{path: [check spec, ...]}`` adding ``check:<path>:<check>`` evaluators.
        judge_llm: A `phoenix.evals.LLM` (or a ready `FieldJudge`) for ``judge: llm`` fields;
            one judge with one cache serves every evaluator of the set.
        delta: Include ``changed_fields_accuracy`` / ``preserved_fields_accuracy`` (they need
            ``input["pre_state"]``).
        judge_cache: The cache for a judge built from ``judge_llm`` (a fresh one by default).

    Returns:
        ``state_accuracy``, ``overall_match``, the delta pair, ``slot_accuracy``, then one
        ``field:<path>`` per field and the checks, in that order.

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
    out: list[Evaluator] = [
        state_accuracy(resolved, judge=judge),
        overall_match(resolved, judge=judge),
    ]
    if delta:
        out.append(changed_fields_accuracy(resolved, judge=judge))
        out.append(preserved_fields_accuracy(resolved, judge=judge))
    if schema is not None:
        out.append(slot_accuracy(list(schema), resolved))
    out.extend(
        field_evaluator(p, resolved, judge=judge) for p in paths if not resolved.for_path(p).ignore
    )
    if checks:
        out.extend(check_evaluators(checks))
    return out
