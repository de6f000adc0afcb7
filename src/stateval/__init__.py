"""stateval: evaluate state mutators per field, and report to Arize Phoenix.

The front door: the state model, comparison and scores, suites, runs and their sinks, the
mutators, the seed 000 evaluation API and the seed 004 harness. Subpackages hold the rest
(`stateval.phoenix` for Phoenix evaluators, `stateval.mutation` for mutation testing, ...).

Example:
    >>> from stateval import InterpretiveState, compare_states, score_comparison
    >>> want = InterpretiveState.from_flat({"hotel.area": "centre"})
    >>> score_comparison(compare_states(want, want)).state_accuracy().score
    1.0
"""

from __future__ import annotations

from stateval._version import __version__
from stateval.checks import CheckResult
from stateval.compare import (
    CaseScores,
    DeltaComparison,
    FieldAggregate,
    FieldComparison,
    FieldPolicies,
    FieldStatus,
    MatchPolicy,
    ScoreValue,
    SlotMetrics,
    StateComparison,
    compare_delta,
    compare_field,
    compare_states,
    field_aggregates,
    joint_goal_accuracy,
    score_comparison,
    slot_metrics,
    worst_fields,
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
from stateval.evaluation import (
    EvaluationContext,
    LLMEvaluator,
    MutatorEvaluationResult,
    MutatorEvaluator,
)
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
from stateval.mutation import EvalOutcome, as_system
from stateval.mutators import (
    BaseLLMClient,
    LLMMutator,
    Mutator,
    OpenAICompatibleClient,
    PythonMutator,
    StructuredInput,
)
from stateval.run import (
    CaseResult,
    CaseScore,
    EpisodeScore,
    Evaluation,
    PhoenixTarget,
    RunOutcome,
    RunSummary,
    UploadSink,
    find_resumable,
    rescore,
    rescore_to_phoenix,
    run_suite,
    start_journal,
)
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import Case, Suite, load_suite

__all__ = [
    "BaseLLMClient",
    "Case",
    "CaseResult",
    "CaseScore",
    "CaseScores",
    "CheckResult",
    "ComparisonError",
    "DatasetError",
    "DeltaComparison",
    "EpisodeScore",
    "EvalOutcome",
    "Evaluation",
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
    "MutatorEvaluator",
    "MutatorOutputError",
    "OpenAICompatibleClient",
    "PhoenixTarget",
    "PhoenixUnavailableError",
    "PolicyError",
    "PythonMutator",
    "RunOutcome",
    "RunReport",
    "RunSummary",
    "ScoreValue",
    "SlotMetrics",
    "StateComparison",
    "StateError",
    "StatevalError",
    "StructuredInput",
    "Suite",
    "SuiteError",
    "UploadSink",
    "ValueConfidence",
    "__version__",
    "as_system",
    "compare_delta",
    "compare_field",
    "compare_states",
    "field_aggregates",
    "find_resumable",
    "joint_goal_accuracy",
    "load_suite",
    "rescore",
    "rescore_to_phoenix",
    "run_suite",
    "score_comparison",
    "slot_metrics",
    "start_journal",
    "worst_fields",
]
