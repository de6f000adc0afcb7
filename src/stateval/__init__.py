"""stateval: evaluate state mutators per field, and report to Arize Phoenix.

The front door: the state model, comparison and scores, suites, runs and their sinks, the
mutators, the seed 000 evaluation API and the seed 004 harness. Subpackages hold the rest
(`stateval.phoenix` for Phoenix evaluators, `stateval.mutation` for mutation testing, ...).

Example:
    >>> from stateval import InterpretiveState, compare_states, score_comparison
    >>> want = InterpretiveState.from_flat({"hotel.area": "centre"})
    >>> score_comparison(compare_states(want, want)).state_accuracy().score
    1.0

Everything here is imported on first use (PEP 562), so ``import stateval`` loads neither
numpy nor the run machinery until a name that needs them is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stateval._lazy import lazy_names
from stateval._version import __version__

if TYPE_CHECKING:
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
        start_journal,
    )
    from stateval.state import InterpretiveState, ValueConfidence
    from stateval.suite import (
        Case,
        Suite,
        load_suite,
    )
    from stateval.upload import rescore_to_phoenix, run_suite

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

_WHERE = {
    "CheckResult": "stateval.checks",
    "CaseScores": "stateval.compare",
    "DeltaComparison": "stateval.compare",
    "FieldAggregate": "stateval.compare",
    "FieldComparison": "stateval.compare",
    "FieldPolicies": "stateval.compare",
    "FieldStatus": "stateval.compare",
    "MatchPolicy": "stateval.compare",
    "ScoreValue": "stateval.compare",
    "SlotMetrics": "stateval.compare",
    "StateComparison": "stateval.compare",
    "compare_delta": "stateval.compare",
    "compare_field": "stateval.compare",
    "compare_states": "stateval.compare",
    "field_aggregates": "stateval.compare",
    "joint_goal_accuracy": "stateval.compare",
    "score_comparison": "stateval.compare",
    "slot_metrics": "stateval.compare",
    "worst_fields": "stateval.compare",
    "EvaluationConfig": "stateval.config",
    "ComparisonError": "stateval.errors",
    "DatasetError": "stateval.errors",
    "EvaluationConfigError": "stateval.errors",
    "EvaluationError": "stateval.errors",
    "EvaluatorNotFoundError": "stateval.errors",
    "HarnessError": "stateval.errors",
    "InvalidConfidenceError": "stateval.errors",
    "InvalidPathError": "stateval.errors",
    "InvalidValueError": "stateval.errors",
    "LLMClientError": "stateval.errors",
    "MutatorError": "stateval.errors",
    "MutatorOutputError": "stateval.errors",
    "PhoenixUnavailableError": "stateval.errors",
    "PolicyError": "stateval.errors",
    "StateError": "stateval.errors",
    "StatevalError": "stateval.errors",
    "SuiteError": "stateval.errors",
    "EvaluationContext": "stateval.evaluation",
    "LLMEvaluator": "stateval.evaluation",
    "MutatorEvaluationResult": "stateval.evaluation",
    "MutatorEvaluator": "stateval.evaluation",
    "EvaluationDataset": "stateval.harness",
    "EvaluationHarness": "stateval.harness",
    "EvaluationResult": "stateval.harness",
    "EvaluationSample": "stateval.harness",
    "EvaluationScoreType": "stateval.harness",
    "EvaluatorProtocol": "stateval.harness",
    "EvaluatorRegistry": "stateval.harness",
    "RunReport": "stateval.harness",
    "EvalOutcome": "stateval.mutation",
    "as_system": "stateval.mutation",
    "BaseLLMClient": "stateval.mutators",
    "LLMMutator": "stateval.mutators",
    "Mutator": "stateval.mutators",
    "OpenAICompatibleClient": "stateval.mutators",
    "PythonMutator": "stateval.mutators",
    "StructuredInput": "stateval.mutators",
    "CaseResult": "stateval.run",
    "CaseScore": "stateval.run",
    "EpisodeScore": "stateval.run",
    "Evaluation": "stateval.run",
    "PhoenixTarget": "stateval.run",
    "RunOutcome": "stateval.run",
    "RunSummary": "stateval.run",
    "UploadSink": "stateval.run",
    "find_resumable": "stateval.run",
    "rescore": "stateval.run",
    "rescore_to_phoenix": "stateval.upload",
    "run_suite": "stateval.upload",
    "start_journal": "stateval.run",
    "InterpretiveState": "stateval.state",
    "ValueConfidence": "stateval.state",
    "Case": "stateval.suite",
    "Suite": "stateval.suite",
    "load_suite": "stateval.suite",
}
"""The module each public name is imported from on first use."""


__getattr__ = lazy_names(__name__, _WHERE, globals())


def __dir__() -> list[str]:
    return sorted(__all__)
