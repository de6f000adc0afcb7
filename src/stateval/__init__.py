"""stateval: evaluate state mutators per field, and report to Arize Phoenix."""

from __future__ import annotations

from stateval.compare import (
    FieldComparison,
    FieldStatus,
    StateComparison,
    compare_field,
    compare_states,
)
from stateval.errors import (
    ComparisonError,
    InvalidConfidenceError,
    InvalidPathError,
    InvalidValueError,
    MutatorError,
    MutatorOutputError,
    PolicyError,
    StateError,
    StatevalError,
    SuiteError,
)
from stateval.evaluation import EvaluationContext, LLMEvaluator, MutatorEvaluationResult
from stateval.metrics import (
    DeltaComparison,
    FieldAggregate,
    SlotMetrics,
    compare_delta,
    field_aggregates,
    joint_goal_accuracy,
    slot_metrics,
    worst_fields,
)
from stateval.mutators import (
    BaseLLMClient,
    LLMMutator,
    Mutator,
    PythonMutator,
    StructuredInput,
)
from stateval.policy import FieldPolicies, MatchPolicy
from stateval.state import InterpretiveState, ValueConfidence

__version__ = "0.1.0"

__all__ = [
    "BaseLLMClient",
    "ComparisonError",
    "DeltaComparison",
    "EvaluationContext",
    "FieldAggregate",
    "FieldComparison",
    "FieldPolicies",
    "FieldStatus",
    "InterpretiveState",
    "InvalidConfidenceError",
    "InvalidPathError",
    "InvalidValueError",
    "LLMEvaluator",
    "LLMMutator",
    "MatchPolicy",
    "Mutator",
    "MutatorError",
    "MutatorEvaluationResult",
    "MutatorOutputError",
    "PolicyError",
    "PythonMutator",
    "SlotMetrics",
    "StateComparison",
    "StateError",
    "StatevalError",
    "StructuredInput",
    "SuiteError",
    "ValueConfidence",
    "__version__",
    "compare_delta",
    "compare_field",
    "compare_states",
    "field_aggregates",
    "joint_goal_accuracy",
    "slot_metrics",
    "worst_fields",
]
