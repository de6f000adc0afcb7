"""Scoring: a case's evaluations from its mutator result.

Scores are recomputed from the journaled post-states whenever they are needed, so a run can be
rescored under new policies or thresholds without calling the mutator again. A run's summary
and thresholds are in ``_summary.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from stateval.checks import Criterion, check_criteria, field_value
from stateval.compare import (
    FIELD_PREFIX,
    CaseMetrics,
    CaseScores,
    FieldPolicies,
    MetricOptions,
    MetricsAccumulator,
    SlotInfo,
    StateComparison,
    case_metrics,
    compare_states,
    score_comparison,
    slots_in_play,
    strict_case,
    view_accuracy,
)
from stateval.errors import StatevalError
from stateval.run._judging import apply_judgements, evaluation, judge_errors
from stateval.run._results import CaseResult, CaseScore, Evaluation, Judgement
from stateval.state import InterpretiveState
from stateval.suite import Case, SlotSchema, Suite, ThresholdsSpec

__all__ = ["Scoring", "score_case"]

_GLOB = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Scoring:
    """How a run is scored: field policies, slot schema, checks, thresholds, metric options.

    Attributes:
        policies: How each field is compared.
        slots: The slot schema (joint goal and slot accuracy), or None.
        checks: Path or glob -> criteria the field's value must pass.
        thresholds: What the run must reach to pass.
        schema: The slot schema with services (active services per case), or None.
        services_key: The case metadata key listing the services in play in a case.
        slices: Case metadata keys every metric is broken down by.
        metric_options: Scorer conventions of value precision / recall / F1 and a
            published scorer's figures.
        seen_services: Services seen in training (the ``seen`` slice of frame figures).
    """

    policies: FieldPolicies = field(default_factory=FieldPolicies)
    slots: tuple[str, ...] | None = None
    checks: Mapping[str, tuple[Criterion, ...]] = field(default_factory=dict)
    thresholds: ThresholdsSpec = field(default_factory=ThresholdsSpec)
    schema: SlotSchema | None = None
    services_key: str | None = None
    slices: tuple[str, ...] = ()
    metric_options: MetricOptions = field(default_factory=MetricOptions)
    seen_services: frozenset[str] | None = None
    _scored_slots: tuple[str, ...] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _services: Mapping[str, str | None] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @classmethod
    def from_suite(cls, suite: Suite) -> Scoring:
        """The scoring a suite file describes."""
        return cls(
            suite.policies,
            suite.slots,
            suite.checks,
            suite.thresholds,
            suite.slot_schema,
            suite.services_key,
            suite.slices,
            suite.metric_options,
            suite.seen_services,
        )

    @property
    def scored_slots(self) -> tuple[str, ...] | None:
        """The schema slots whose policy does not ignore them (None without a schema)."""
        if self.slots is None:
            return None
        known = self._scored_slots
        if known is None:
            known = tuple(s for s in self.slots if not self.policies.for_path(s).ignore)
            object.__setattr__(self, "_scored_slots", known)
        return known

    def slots_in_play(self, metadata: Mapping[str, Any]) -> tuple[str, ...] | None:
        """The scored slots of the services a case names under `services_key` (all of them
        when the case names none)."""
        slots = self.scored_slots
        if slots is None or self.schema is None or self.services_key is None:
            return slots
        services = self._services
        if services is None:  # slot -> service, made once per scoring
            services = self.schema.services_of
            object.__setattr__(self, "_services", services)
        return slots_in_play(slots, services, metadata, self.services_key)

    def case_metrics(self, comparison: StateComparison, case: Case) -> CaseMetrics:
        """The case's metric outcomes from its one comparison."""
        return case_metrics(
            comparison,
            slots=self.scored_slots,
            in_play=self.slots_in_play(case.metadata),
            options=self.metric_options,
        )

    def accumulator(self) -> MetricsAccumulator:
        """An empty accumulator of this scoring's run metrics."""
        scored = self.scored_slots
        info = None
        if self.schema is not None and scored is not None:
            kept = frozenset(scored)
            info = [
                SlotInfo(s.path, s.service, s.categorical)
                for s in self.schema.slots
                if s.path in kept
            ]
        return MetricsAccumulator(
            scored,
            self.metric_options,
            self.slices,
            active_slots=None if self.services_key is None else self._in_play,
            slot_info=info,
            services_key=self.services_key,
            seen_services=self.seen_services,
        )

    def _in_play(self, metadata: Mapping[str, Any]) -> tuple[str, ...]:
        return self.slots_in_play(metadata) or ()


def score_case(case: Case, result: CaseResult, scoring: Scoring) -> CaseScore:
    """Compare a case's post-state with its expected state; its evaluations are made when
    first read (`CaseScore.evaluations`), its checks at once. When making the evaluations or
    the metric outcomes raises, the score becomes the case's error (``scoring failed: ...``).

    The scores come from the one scoring core (`stateval.compare.score_comparison`) over one
    comparison per case. A failed mutator call is compared against an empty state (every
    expected field missing); its case-level evaluations are labelled ``error``. Fields judged by
    an LLM take the verdicts journaled in ``result.judgements`` (see `apply_judgements`).
    """
    expected = case.expected_post_state
    actual = result.post_state if result.post_state is not None else InterpretiveState()
    pre = case.pre_state if result.pre_state is None else result.pre_state
    ok = result.ok
    # three flat states of strings under one strict policy: every field decided at once, as
    # columns the tallies and compact scores read (else compared, and judged, field by field)
    strict = strict_case(pre, expected, actual, scoring.policies) if ok else None
    if strict is not None:
        comparison = strict.comparison
    else:
        comparison = compare_states(expected, actual, scoring.policies)
    judged: dict[str, Judgement | None] = {}
    if scoring.policies.has_judge:  # without a judge's policy no field asks for a verdict
        comparison, judged = apply_judgements(comparison, result.judgements)
    checks = _checks(expected, actual, comparison, scoring, ok) if scoring.checks else []

    def scores(score: CaseScore) -> CaseScores:
        # the score is passed in, not captured: no reference cycle, so a case's objects are
        # freed when it is done with, not by the garbage collector
        failure = None if ok else f"mutator failed ({result.error_type}): {result.error}"
        return score_comparison(
            comparison,
            policies=scoring.policies,
            pre=pre,
            expected=expected,
            slots=scoring.scored_slots,
            in_play=scoring.slots_in_play(case.metadata),
            options=scoring.metric_options,
            failure=failure,
            judge_errors=judge_errors(judged),
            judged=[p for p, j in judged.items() if j is not None and j.ok],
            metrics=None if scoring.slots is None else score.metrics_under(scoring, case),
            critical=scoring.thresholds.critical_fields,
            edits=score.edits_under(scoring, case),
            delta=None if strict is None else strict.delta(),
        )

    def evaluate(core: CaseScores | None) -> list[Evaluation]:
        assert core is not None
        evaluations = [evaluation(s) for s in core.case_level() if s.score is not None]
        evaluations.extend(evaluation(s) for s in core.edit_ops())
        if strict is None:
            evaluations.extend(evaluation(s) for s in core.fields())
        else:  # no failure, verdict or records: each read off its field's comparison
            evaluations.extend(
                Evaluation(f"{FIELD_PREFIX}{f.path}", f.score, f.status.value, f.explanation)
                for f in core.comparison.fields
            )
        evaluations.extend(checks)
        return evaluations

    def recover(failed: CaseResult) -> CaseScore:
        return score_case(case, failed, scoring)

    if strict is None:
        # whatever reads a score decides its comparison (the tally, the evaluations): decided
        # first, its counts are read from its statuses instead of being counted apart (a
        # case decided as columns has its counts)
        _ = comparison.statuses
    if strict is not None:
        accuracy = strict.shape.accuracy
    else:
        accuracy = view_accuracy(comparison) if ok else 0.0
    return CaseScore(
        case.id,
        result,
        comparison,
        evaluate,
        checks,
        1.0 if accuracy is None else accuracy,
        recover if ok else None,
        case.source_span_id,
        scores,
        strict,
        scoring.policies,
    )


def _checks(
    expected: InterpretiveState,
    actual: InterpretiveState,
    comparison: StateComparison,
    scoring: Scoring,
    ok: bool,
) -> list[Evaluation]:
    out: list[Evaluation] = []
    names: set[str] = set()
    for pattern, criteria in scoring.checks.items():
        if _GLOB.intersection(pattern):
            paths = [p for p in comparison.paths if fnmatchcase(p, pattern)]
        else:
            paths = [pattern]
        for path in paths:
            name = f"check:{path}"
            if name in names:
                name = f"check:{path}:{pattern}"
            names.add(name)
            if not ok:
                out.append(Evaluation(name, 0.0, "error", "mutator failed; nothing to check"))
                continue
            try:
                value = field_value(actual, path)
            except StatevalError:
                out.append(Evaluation(name, 0.0, "missing", f"field {path!r} has no value"))
                continue
            try:
                reference: Any = field_value(expected, path)
            except StatevalError:
                reference = None
            result = check_criteria(value, criteria, reference)
            out.append(Evaluation(name, result.score, result.label, result.explanation))
    return out
