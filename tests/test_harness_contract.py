"""Seed 004's names: the harness protocol, BaseEvaluator, the embedding protocol, the config."""

from __future__ import annotations

import pytest

from stateval import (
    EvaluationConfigError,
    EvaluationDataset,
    EvaluationHarness,
    EvaluationResult,
    EvaluationScoreType,
)
from stateval.checks import EmbeddingClient, EmbeddingClientProtocol
from stateval.harness import BaseEvaluator, EvaluationHarnessProtocol, EvaluatorRegistry


class Length(BaseEvaluator):
    name = "length"

    async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
        ratio = min(len(output), len(reference)) / max(len(output), len(reference), 1)
        return self._create_result(
            ratio, f"length ratio {ratio:.2f}", {"output_length": len(output)}
        )


def test_a_base_evaluator_subclass_runs_in_the_harness() -> None:
    dataset = EvaluationDataset.from_list([{"input": "", "reference": "abcd", "output": "abc"}])
    report = EvaluationHarness(pass_threshold=0.5).run_sync(dataset, Length())
    result = report.results[0]
    assert (result.score, result.score_type) == (0.75, EvaluationScoreType.CUSTOM)
    assert result.metrics == {"output_length": 3}
    assert report.evaluator_name == "length"


async def test_base_evaluator_without_evaluate_says_so() -> None:
    with pytest.raises(NotImplementedError, match="must implement evaluate"):
        await BaseEvaluator().evaluate("", "", "")


def test_the_harness_satisfies_the_harness_protocol() -> None:
    assert isinstance(EvaluationHarness(), EvaluationHarnessProtocol)
    assert EmbeddingClientProtocol is EmbeddingClient


def test_the_embedding_model_setting_reaches_the_default_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STATEVAL_EMBEDDING_MODEL", "no-such-model")
    with pytest.raises(EvaluationConfigError, match="unknown E5 embedding model 'no-such-model'"):
        EvaluatorRegistry().resolve("embedding_distance")
