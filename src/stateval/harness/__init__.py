"""The evaluation harness (seed 004): samples, datasets, evaluators, and a run into a report.

Example:
    >>> from stateval.harness import EvaluationDataset, EvaluationHarness, EvaluatorRegistry
    >>> ds = EvaluationDataset.from_list([{"input": "2+2?", "reference": "4", "output": "4"}])
    >>> report = EvaluationHarness().run_sync(ds, EvaluatorRegistry().resolve("criteria"))
    >>> report.passed_samples, report.average_score
    (1, 1.0)
"""

from __future__ import annotations

from stateval.harness._dataset import EvaluationDataset
from stateval.harness._evaluators import (
    CriteriaEvaluator,
    EmbeddingDistanceEvaluator,
    QAEvaluator,
    StringDistanceEvaluator,
    TrajectoryEvaluator,
)
from stateval.harness._harness import EvaluationHarness
from stateval.harness._registry import BUILTIN_EVALUATORS, EvaluatorFactory, EvaluatorRegistry
from stateval.harness._state_evaluators import STATE_METRICS, StateEvaluator, StateMetric
from stateval.harness._types import (
    BaseEvaluator,
    EvaluationHarnessProtocol,
    EvaluationResult,
    EvaluationSample,
    EvaluationScoreType,
    EvaluatorProtocol,
    RunReport,
    SampleFailure,
    SystemUnderTest,
)

__all__ = [
    "BUILTIN_EVALUATORS",
    "STATE_METRICS",
    "BaseEvaluator",
    "CriteriaEvaluator",
    "EmbeddingDistanceEvaluator",
    "EvaluationDataset",
    "EvaluationHarness",
    "EvaluationHarnessProtocol",
    "EvaluationResult",
    "EvaluationSample",
    "EvaluationScoreType",
    "EvaluatorFactory",
    "EvaluatorProtocol",
    "EvaluatorRegistry",
    "QAEvaluator",
    "RunReport",
    "SampleFailure",
    "StateEvaluator",
    "StateMetric",
    "StringDistanceEvaluator",
    "SystemUnderTest",
    "TrajectoryEvaluator",
]
