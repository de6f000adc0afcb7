"""The five built-in evaluators of seed 004, each a thin async wrapper around a check."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal

from stateval.checks import (
    CheckResult,
    Criterion,
    EmbeddingClient,
    check_criteria,
    cosine,
    embedding_similarity,
    jaccard,
    keyword_overlap,
    levenshtein,
    parse_criteria,
    trajectory_fidelity,
)
from stateval.errors import EvaluationConfigError
from stateval.harness._types import EvaluationResult, EvaluationScoreType

__all__ = [
    "CriteriaEvaluator",
    "EmbeddingDistanceEvaluator",
    "QAEvaluator",
    "StringDistanceEvaluator",
    "TrajectoryEvaluator",
]


def _result(check: CheckResult, score_type: EvaluationScoreType) -> EvaluationResult:
    metrics: dict[str, Any] = {**check.metrics, "check": check.name, "label": check.label}
    return EvaluationResult(check.score, score_type, check.explanation, metrics)


class CriteriaEvaluator:
    """Rule-based: every criterion must pass; with none, the output must equal the reference.

    Args:
        criteria: Criterion dicts such as ``{"type": "contains", "value": "x"}`` (see
            `stateval.checks.parse_criteria`), validated here.
        name: The evaluator's name.

    Raises:
        EvaluationConfigError: A criterion is invalid (names its index).

    Example:
        >>> import asyncio
        >>> ev = CriteriaEvaluator([{"type": "regex", "pattern": r"\\d+"}])
        >>> asyncio.run(ev.evaluate("How many?", "42", "")).score
        1.0
    """

    def __init__(
        self,
        criteria: Sequence[Mapping[str, Any] | Criterion] | None = None,
        name: str = "criteria",
    ) -> None:
        self.name = name
        self.criteria: list[Criterion] = parse_criteria(list(criteria or []))

    async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
        """Score 1.0 when every criterion passes, else 0.0."""
        check = check_criteria(output, self.criteria, reference)
        return _result(check, EvaluationScoreType.EXACT_MATCH)


class QAEvaluator:
    """Keyword overlap: the share of the reference's non-stopword keywords found in the output.

    Example:
        >>> import asyncio
        >>> ev = QAEvaluator()
        >>> r = asyncio.run(ev.evaluate("q", "Paris, in France", "France's capital is Paris"))
        >>> round(r.score, 2)
        0.67
    """

    def __init__(self, name: str = "qa") -> None:
        self.name = name

    async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
        """Score with `stateval.checks.keyword_overlap`."""
        return _result(keyword_overlap(output, reference), EvaluationScoreType.PARTIAL_MATCH)


class StringDistanceEvaluator:
    """String similarity: ``"levenshtein"`` (characters), ``"jaccard"`` or ``"cosine"`` (words).

    Raises:
        EvaluationConfigError: ``metric`` is not one of the three.

    Example:
        >>> import asyncio
        >>> asyncio.run(StringDistanceEvaluator("jaccard").evaluate("", "a b", "a c")).score
        0.3333333333333333
    """

    _METRICS: ClassVar[dict[str, Callable[..., CheckResult]]] = {
        "levenshtein": levenshtein,
        "jaccard": jaccard,
        "cosine": cosine,
    }

    def __init__(
        self,
        metric: Literal["levenshtein", "jaccard", "cosine"] = "levenshtein",
        *,
        case_sensitive: bool = True,
        name: str = "string_distance",
    ) -> None:
        if metric not in self._METRICS:
            known = ", ".join(self._METRICS)
            raise EvaluationConfigError(f"unknown string distance metric {metric!r}; use {known}")
        self.name = name
        self.metric = metric
        self.case_sensitive = case_sensitive

    async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
        """Score with the chosen metric."""
        check = self._METRICS[self.metric](output, reference, case_sensitive=self.case_sensitive)
        return _result(check, EvaluationScoreType.STRING_DISTANCE)


class EmbeddingDistanceEvaluator:
    """Cosine similarity of output and reference embeddings (clamped to [0, 1]).

    Args:
        client: Any `EmbeddingClient`; `stateval.checks.e5.E5EmbeddingClient` runs offline.
        name: The evaluator's name.
    """

    def __init__(self, client: EmbeddingClient, name: str = "embedding_distance") -> None:
        if not isinstance(client, EmbeddingClient):
            raise EvaluationConfigError(
                f"{type(client).__name__} is not an embedding client (needs async embed(texts))"
            )
        self.name = name
        self.client = client

    async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
        """Score with `stateval.checks.embedding_similarity`."""
        check = await embedding_similarity(output, reference, self.client)
        return _result(check, EvaluationScoreType.SEMANTIC_SIMILARITY)


class TrajectoryEvaluator:
    """Agent trajectory fidelity: in-order step actions and final-state fields.

    Args:
        step_weight: Weight of the step part when the reference has both parts.
        name: The evaluator's name.

    Example:
        >>> import asyncio
        >>> ref = '{"steps": [{"action": "search"}], "final_state": {"done": true}}'
        >>> asyncio.run(TrajectoryEvaluator().evaluate("", ref, ref)).score
        1.0
    """

    def __init__(self, step_weight: float = 0.5, name: str = "trajectory") -> None:
        if not 0.0 <= step_weight <= 1.0:
            raise EvaluationConfigError(f"step_weight must be in [0, 1], got {step_weight!r}")
        self.name = name
        self.step_weight = step_weight

    async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
        """Score with `stateval.checks.trajectory_fidelity`."""
        check = trajectory_fidelity(output, reference, step_weight=self.step_weight)
        return _result(check, EvaluationScoreType.TRAJECTORY_FIDELITY)
