"""Comparison: match policies, field and state comparison, the delta view, metrics and scores.

This is where a field's expected and actual values are judged, and where every score comes from:

- a new match-policy option is one field of `MatchPolicy` (``_policy.py``: the suite-file
  model is derived from it) and its rule in ``_match.py``; ``_field_policies.py`` maps path
  patterns to policies; value normalisers live in ``_normalize.py``; typed comparators (dates,
  phones, money, e-mail, units) are a table in ``_typed.py``; ``_records.py`` pairs the items of
  lists of records (``list_mode: align``) and ``_record_scores.py`` scores their sub-fields;
- ``_field_comparison.py`` compares one field, ``_comparison.py`` whole states; ``_delta.py``
  splits a comparison into the fields to change and the fields to keep; ``_metrics.py``
  aggregates many comparisons (slot metrics, per-field aggregates); ``_field_metrics.py`` gives
  each field of a case its outcome (correct, wrong, missing, extra, absent) and value credit;
  ``_run_metrics.py`` counts them into run, field and slice figures;
- ``_conventions.py`` is the table of published scorers' conventions (``metrics: {convention:
  sgd}``: scope, matching, aggregation, reported names; one entry per convention) and of slot
  matchings; ``_unit_metrics.py`` counts a convention's figures over turns or service frames;
  ``_fuzzywuzzy.py`` gives fuzzywuzzy's scores as those scorers call them, ``_mwzeval.py``
  mwzeval's slot value normaliser;
- ``_edits.py`` names each field's expected and actual edit operation (keep, add, update,
  delete) and the error when they differ (stale, clobber, missed delete...);
  ``_edit_matrix.py`` counts them into a run's matrix and rates;
- ``_scores.py`` is the one scoring core: every state-level and per-field score of a case,
  derived from one comparison. The runner, the Phoenix evaluators and the harness adapt it.
"""

from __future__ import annotations

from stateval.compare._comparison import (
    FieldComparison,
    FieldStatus,
    StateComparison,
    compare_field,
    compare_states,
)
from stateval.compare._conventions import (
    CONVENTIONS,
    SLOT_SCORERS,
    Convention,
    SlotPair,
    SlotScorer,
    report_prefix,
    resolve_options,
)
from stateval.compare._delta import DeltaComparison, compare_delta, split_delta
from stateval.compare._edit_matrix import EDIT_OPS, EditCounts, EditMatrix, EditTally
from stateval.compare._edits import (
    CELLS,
    SCORED_OPS,
    EditError,
    EditOp,
    FieldEdit,
    field_edits,
    op_counts,
    op_explanation,
)
from stateval.compare._field_metrics import (
    CaseMetrics,
    FieldMetrics,
    MetricOptions,
    Outcome,
    SlotOutcome,
    case_metrics,
    case_outcomes,
    list_f1,
    prf,
)
from stateval.compare._field_policies import FieldPolicies, path_matches
from stateval.compare._metrics import (
    FieldAggregate,
    SlotMetrics,
    field_aggregates,
    joint_goal_accuracy,
    slot_metrics,
    worst_fields,
)
from stateval.compare._normalize import json_equal, normalize_text, parse_number
from stateval.compare._policy import (
    NORMALIZERS,
    ConfidenceMode,
    DateOrder,
    ListMode,
    MatchPolicy,
    MatchPolicyModel,
    Normalizer,
    policy_options,
)
from stateval.compare._record_scores import sub_scores
from stateval.compare._records import (
    ItemResult,
    RecordAlignment,
    SubOutcome,
    align_records,
    is_item_path,
)
from stateval.compare._run_metrics import (
    MetricsAccumulator,
    RunMetrics,
    lookup,
    slice_values,
)
from stateval.compare._score_value import FIELD_PREFIX, ScoreValue
from stateval.compare._scores import STATE_SCORES, CaseScores, score_comparison, view_accuracy
from stateval.compare._slots import slot_counts, slots_in_play
from stateval.compare._strict_case import EDIT_CODE_OPS, StrictCase, strict_case
from stateval.compare._strict_shape import Shape
from stateval.compare._typed import COMPARATORS
from stateval.compare._unit_metrics import (
    FIGURES,
    ConventionMetrics,
    SlotInfo,
    SlotScore,
    UnitAccumulator,
    reported_figures,
)

__all__ = [
    "CELLS",
    "COMPARATORS",
    "CONVENTIONS",
    "EDIT_CODE_OPS",
    "EDIT_OPS",
    "FIELD_PREFIX",
    "FIGURES",
    "NORMALIZERS",
    "SCORED_OPS",
    "SLOT_SCORERS",
    "STATE_SCORES",
    "CaseMetrics",
    "CaseScores",
    "ConfidenceMode",
    "Convention",
    "ConventionMetrics",
    "DateOrder",
    "DeltaComparison",
    "EditCounts",
    "EditError",
    "EditMatrix",
    "EditOp",
    "EditTally",
    "FieldAggregate",
    "FieldComparison",
    "FieldEdit",
    "FieldMetrics",
    "FieldPolicies",
    "FieldStatus",
    "ItemResult",
    "ListMode",
    "MatchPolicy",
    "MatchPolicyModel",
    "MetricOptions",
    "MetricsAccumulator",
    "Normalizer",
    "Outcome",
    "RecordAlignment",
    "RunMetrics",
    "ScoreValue",
    "Shape",
    "SlotInfo",
    "SlotMetrics",
    "SlotOutcome",
    "SlotPair",
    "SlotScore",
    "SlotScorer",
    "StateComparison",
    "StrictCase",
    "SubOutcome",
    "UnitAccumulator",
    "align_records",
    "case_metrics",
    "case_outcomes",
    "compare_delta",
    "compare_field",
    "compare_states",
    "field_aggregates",
    "field_edits",
    "is_item_path",
    "joint_goal_accuracy",
    "json_equal",
    "list_f1",
    "lookup",
    "normalize_text",
    "op_counts",
    "op_explanation",
    "parse_number",
    "path_matches",
    "policy_options",
    "prf",
    "report_prefix",
    "reported_figures",
    "resolve_options",
    "score_comparison",
    "slice_values",
    "slot_counts",
    "slot_metrics",
    "slots_in_play",
    "split_delta",
    "strict_case",
    "sub_scores",
    "view_accuracy",
    "worst_fields",
]
