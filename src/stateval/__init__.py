"""stateval: evaluate state mutators per field, and report to Arize Phoenix."""

from __future__ import annotations

from stateval.checks import CheckResult
from stateval.compare import (
    FieldComparison,
    FieldStatus,
    StateComparison,
    compare_field,
    compare_states,
)
from stateval.config import EvaluationConfig
from stateval.errors import (
    ComparisonError,
    DatasetError,
    EvaluationConfigError,
    EvaluationError,
    EvaluatorNotFoundError,
    HarnessError,
    InvalidConfidenceError,
    InvalidPathError,
    InvalidValueError,
    LLMClientError,
    MutatorError,
    MutatorOutputError,
    PhoenixUnavailableError,
    PolicyError,
    StateError,
    StatevalError,
    SuiteError,
)
from stateval.evaluation import EvaluationContext, LLMEvaluator, MutatorEvaluationResult
from stateval.harness import (
    EvaluationDataset,
    EvaluationHarness,
    EvaluationResult,
    EvaluationSample,
    EvaluationScoreType,
    EvaluatorProtocol,
    EvaluatorRegistry,
    RunReport,
)
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
from stateval.mutation import EvalOutcome, as_system
from stateval.mutators import (
    BaseLLMClient,
    LLMMutator,
    Mutator,
    OpenAICompatibleClient,
    PythonMutator,
    StructuredInput,
)
from stateval.policy import FieldPolicies, MatchPolicy
from stateval.state import InterpretiveState, ValueConfidence

__version__ = "0.1.0"

__all__ = [
    "BaseLLMClient",
    "CheckResult",
    "ComparisonError",
    "DatasetError",
    "DeltaComparison",
    "EvalOutcome",
    "EvaluationConfig",
    "EvaluationConfigError",
    "EvaluationContext",
    "EvaluationDataset",
    "EvaluationError",
    "EvaluationHarness",
    "EvaluationResult",
    "EvaluationSample",
    "EvaluationScoreType",
    "EvaluatorNotFoundError",
    "EvaluatorProtocol",
    "EvaluatorRegistry",
    "FieldAggregate",
    "FieldComparison",
    "FieldPolicies",
    "FieldStatus",
    "HarnessError",
    "InterpretiveState",
    "InvalidConfidenceError",
    "InvalidPathError",
    "InvalidValueError",
    "LLMClientError",
    "LLMEvaluator",
    "LLMMutator",
    "MatchPolicy",
    "Mutator",
    "MutatorError",
    "MutatorEvaluationResult",
    "MutatorOutputError",
    "OpenAICompatibleClient",
    "PhoenixUnavailableError",
    "PolicyError",
    "PythonMutator",
    "RunReport",
    "SlotMetrics",
    "StateComparison",
    "StateError",
    "StatevalError",
    "StructuredInput",
    "SuiteError",
    "ValueConfidence",
    "__version__",
    "as_system",
    "compare_delta",
    "compare_field",
    "compare_states",
    "field_aggregates",
    "joint_goal_accuracy",
    "slot_metrics",
    "worst_fields",
]
