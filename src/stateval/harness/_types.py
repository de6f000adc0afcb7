"""The harness's data: samples, results, the run report, and the evaluator protocol (seed 004)."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeAlias, runtime_checkable

from stateval.errors import EvaluationError

__all__ = [
    "BaseEvaluator",
    "EvaluationHarnessProtocol",
    "EvaluationResult",
    "EvaluationSample",
    "EvaluationScoreType",
    "EvaluatorProtocol",
    "RunReport",
    "SampleFailure",
    "SystemUnderTest",
]


class EvaluationScoreType(StrEnum):
    """The metric family an `EvaluationResult` belongs to."""

    EXACT_MATCH = "exact_match"
    PARTIAL_MATCH = "partial_match"
    SEMANTIC_SIMILARITY = "semantic_similarity"
    STRING_DISTANCE = "string_distance"
    TRAJECTORY_FIDELITY = "trajectory_fidelity"
    CUSTOM = "custom"


@dataclass(frozen=True, slots=True)
class EvaluationSample:
    """One input with its reference answer.

    Args:
        id: Unique within its dataset.
        input: The prompt or query given to the system under test.
        reference: The expected output.
        metadata: Free-form data about the sample.
        output: A recorded output; when None, the harness asks the system under test.

    Example:
        >>> EvaluationSample("q1", "Capital of France?", "Paris").output is None
        True
    """

    id: str
    input: str
    reference: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    output: str | None = None


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    """One evaluator's verdict on one sample.

    Args:
        score: In [0, 1].
        score_type: The metric family.
        feedback: A human-readable explanation.
        metrics: Extra numbers (parts of the score, counts).
        sample_id: Set by the harness: the sample this result belongs to.
        passed: Set by the harness: whether ``score`` reached the pass threshold.

    Raises:
        EvaluationError: ``score`` is not a number in [0, 1].

    Example:
        >>> EvaluationResult(0.5, EvaluationScoreType.CUSTOM, "half right").score
        0.5
    """

    score: float
    score_type: EvaluationScoreType
    feedback: str = ""
    metrics: Mapping[str, Any] = field(default_factory=dict)
    sample_id: str | None = None
    passed: bool | None = None

    def __post_init__(self) -> None:
        score = self.score
        if isinstance(score, bool) or not isinstance(score, int | float) or math.isnan(score):
            raise EvaluationError(f"evaluation score {score!r} is not a number")
        if not 0.0 <= score <= 1.0:
            raise EvaluationError(f"evaluation score {score!r} is outside [0, 1]")
        object.__setattr__(self, "score", float(score))
        object.__setattr__(self, "score_type", EvaluationScoreType(self.score_type))

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON object."""
        return {
            "sample_id": self.sample_id,
            "score": self.score,
            "score_type": self.score_type.value,
            "passed": self.passed,
            "feedback": self.feedback,
            "metrics": dict(self.metrics),
        }


@dataclass(frozen=True, slots=True)
class SampleFailure:
    """A sample whose system call or evaluation failed after every attempt.

    Args:
        sample_id: The sample.
        error: One line: the exception type and message, or the timeout.
        stage: ``"system"`` (producing the output) or ``"evaluator"``.
        attempts: How many attempts were made.
    """

    sample_id: str
    error: str
    stage: str
    attempts: int

    def to_dict(self) -> dict[str, Any]:
        """The failure as a JSON object."""
        return {
            "sample_id": self.sample_id,
            "error": self.error,
            "stage": self.stage,
            "attempts": self.attempts,
        }


@dataclass(frozen=True, slots=True)
class RunReport:
    """The outcome of running one evaluator over one dataset.

    ``results`` hold the evaluated samples in dataset order; ``failures`` the samples that could
    not be evaluated. ``average_score`` is over all ``total_samples``, a failed sample counting
    as 0, so failures never raise the average.
    """

    dataset_name: str
    evaluator_name: str
    total_samples: int
    passed_samples: int
    average_score: float
    results: list[EvaluationResult]
    metadata: dict[str, Any] = field(default_factory=dict)
    failures: list[SampleFailure] = field(default_factory=list)
    pass_threshold: float = 0.8

    @property
    def failed_samples(self) -> int:
        """Samples that did not pass: scored below the threshold, or failed to evaluate."""
        return self.total_samples - self.passed_samples

    @property
    def pass_rate(self) -> float:
        """``passed_samples / total_samples`` (0.0 for an empty run)."""
        return self.passed_samples / self.total_samples if self.total_samples else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON object."""
        return {
            "dataset_name": self.dataset_name,
            "evaluator_name": self.evaluator_name,
            "total_samples": self.total_samples,
            "passed_samples": self.passed_samples,
            "average_score": self.average_score,
            "pass_threshold": self.pass_threshold,
            "results": [r.to_dict() for r in self.results],
            "failures": [f.to_dict() for f in self.failures],
            "metadata": dict(self.metadata),
        }


@runtime_checkable
class EvaluatorProtocol(Protocol):
    """An evaluator the harness can run: a ``name`` and an async ``evaluate``."""

    @property
    def name(self) -> str:
        """The evaluator's name, shown in reports."""
        ...

    async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
        """Score ``output`` for ``input`` against ``reference``."""
        ...


@runtime_checkable
class EvaluationHarnessProtocol(Protocol):
    """Runs one evaluator over one dataset into a `RunReport` (seed 004's harness contract)."""

    async def run(self, dataset: Any, evaluator: EvaluatorProtocol) -> RunReport:
        """Evaluate every sample of ``dataset`` with ``evaluator``."""
        ...


class BaseEvaluator:
    """A convenience base for evaluators (seed 004): set ``name`` and ``score_type``, implement
    ``evaluate``, and build results with `_create_result`.

    Example:
        >>> import asyncio
        >>> class Length(BaseEvaluator):
        ...     name = "length"
        ...     async def evaluate(self, input, output, reference):
        ...         ratio = min(len(output), len(reference)) / max(len(output), len(reference), 1)
        ...         return self._create_result(ratio, f"length ratio {ratio:.2f}")
        >>> asyncio.run(Length().evaluate("", "abc", "abcd")).score
        0.75
    """

    name: str = "custom"
    score_type: EvaluationScoreType = EvaluationScoreType.CUSTOM

    async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
        """Score ``output`` for ``input`` against ``reference``."""
        raise NotImplementedError(f"{type(self).__name__} must implement evaluate()")

    def _create_result(
        self, score: float, feedback: str = "", metrics: Mapping[str, Any] | None = None
    ) -> EvaluationResult:
        return EvaluationResult(score, self.score_type, feedback, dict(metrics or {}))


#: The system under test: the output for one sample input.
SystemUnderTest: TypeAlias = Callable[[str], Awaitable[str]]
