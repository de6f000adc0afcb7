"""The evaluation harness: runs, reports, concurrency, failures, retries, registry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from stateval.config import EvaluationConfig
from stateval.errors import EvaluationConfigError, EvaluatorNotFoundError, HarnessError
from stateval.harness import (
    CriteriaEvaluator,
    EmbeddingDistanceEvaluator,
    EvaluationDataset,
    EvaluationHarness,
    EvaluationResult,
    EvaluationScoreType,
    EvaluatorProtocol,
    EvaluatorRegistry,
    QAEvaluator,
    StringDistanceEvaluator,
    TrajectoryEvaluator,
)


class FixedScore:
    """An evaluator that scores each output as the float it spells."""

    name = "fixed"

    async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
        return EvaluationResult(float(output), EvaluationScoreType.CUSTOM, f"scored {output}")


def dataset(*outputs: str | None, name: str = "ds") -> EvaluationDataset:
    return EvaluationDataset.from_list(
        [{"id": f"s{i}", "input": f"in{i}", "output": o} for i, o in enumerate(outputs)], name=name
    )


def harness(**config: object) -> EvaluationHarness:
    return EvaluationHarness(config=EvaluationConfig(**config))


async def test_report_counts_passes_against_the_threshold() -> None:
    report = await harness(default_threshold=0.8).run(dataset("0.5", "0.8", "1.0"), FixedScore())
    assert (report.total_samples, report.passed_samples) == (3, 2)
    assert report.average_score == pytest.approx((0.5 + 0.8 + 1.0) / 3)
    assert [r.sample_id for r in report.results] == ["s0", "s1", "s2"]
    assert [r.passed for r in report.results] == [False, True, True]
    assert (report.dataset_name, report.evaluator_name) == ("ds", "fixed")
    assert report.failed_samples == 1


async def test_explicit_threshold_overrides_config() -> None:
    report = await EvaluationHarness(pass_threshold=0.4, config=EvaluationConfig()).run(
        dataset("0.5"), FixedScore()
    )
    assert report.passed_samples == 1
    assert report.pass_threshold == 0.4


def test_harness_reads_config_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEVAL_DEFAULT_THRESHOLD", "0.3")
    monkeypatch.setenv("STATEVAL_MAX_CONCURRENCY", "2")
    h = EvaluationHarness()
    assert (h.pass_threshold, h.max_concurrency) == (0.3, 2)


def test_invalid_threshold_or_concurrency_is_a_config_error() -> None:
    with pytest.raises(EvaluationConfigError, match="pass_threshold"):
        EvaluationHarness(pass_threshold=1.5, config=EvaluationConfig())
    with pytest.raises(EvaluationConfigError, match="max_concurrency"):
        EvaluationHarness(max_concurrency=0, config=EvaluationConfig())


async def test_system_produces_missing_outputs() -> None:
    calls: list[str] = []

    async def system(text: str) -> str:
        calls.append(text)
        return "1.0"

    report = await harness().run(dataset(None, "0.0"), FixedScore(), system)
    assert calls == ["in0"]
    assert [r.score for r in report.results] == [1.0, 0.0]


async def test_concurrency_is_bounded() -> None:
    in_flight = peak = 0

    async def system(text: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        for _ in range(5):
            await asyncio.sleep(0)
        in_flight -= 1
        return "1"

    report = await EvaluationHarness(max_concurrency=3, config=EvaluationConfig()).run(
        dataset(*[None] * 20), FixedScore(), system
    )
    assert report.total_samples == 20
    assert peak == 3


async def test_evaluator_failures_are_recorded_after_retries() -> None:
    attempts: dict[str, int] = {}

    class Exploding:
        name = "exploding"

        async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
            attempts[input] = attempts.get(input, 0) + 1
            if output == "boom":
                raise ValueError("no score for boom")
            return EvaluationResult(1.0, EvaluationScoreType.CUSTOM)

    report = await harness(max_retries=2).run(dataset("ok", "boom"), Exploding())
    assert report.total_samples == 2
    assert report.passed_samples == 1
    assert report.average_score == 0.5  # a failed sample counts as 0
    [failure] = report.failures
    assert (failure.sample_id, failure.stage, failure.attempts) == ("s1", "evaluator", 3)
    assert failure.error == "ValueError: no score for boom"
    assert attempts == {"in0": 1, "in1": 3}


async def test_flaky_system_succeeds_within_retries() -> None:
    calls = 0

    async def flaky(text: str) -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise ConnectionError("transient")
        return "1"

    report = await harness(max_retries=3).run(dataset(None), FixedScore(), flaky)
    assert (report.passed_samples, report.failures, calls) == (1, [], 3)


async def test_system_failure_without_retries_left() -> None:
    async def broken(text: str) -> str:
        raise RuntimeError("model down")

    report = await harness(max_retries=0).run(dataset(None), FixedScore(), broken)
    [failure] = report.failures
    assert (failure.stage, failure.attempts, failure.error) == (
        "system",
        1,
        "RuntimeError: model down",
    )


async def test_timeouts_are_recorded_and_not_retried() -> None:
    calls = 0

    async def hangs(text: str) -> str:
        nonlocal calls
        calls += 1
        await asyncio.Event().wait()
        return "never"

    report = await harness(timeout_seconds=0.01, max_retries=3).run(
        dataset(None), FixedScore(), hangs
    )
    [failure] = report.failures
    assert failure.error == "timed out after 0.01s"
    assert (failure.attempts, calls) == (1, 1)


async def test_evaluator_returning_the_wrong_type_is_a_sample_failure() -> None:
    class Wrong:
        name = "wrong"

        async def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
            return 0.5  # type: ignore[return-value]

    report = await harness().run(dataset("x"), Wrong())
    assert "returned a float" in report.failures[0].error


async def test_evaluator_returning_an_out_of_range_score_is_a_sample_failure() -> None:
    report = await harness(max_retries=0).run(dataset("1.5"), FixedScore())
    assert "outside [0, 1]" in report.failures[0].error


async def test_max_samples_limits_the_run() -> None:
    report = await harness(max_samples=2).run(dataset("1", "1", "1"), FixedScore())
    assert report.total_samples == 2
    assert report.metadata["dataset_size"] == 3


async def test_metadata_can_be_left_out() -> None:
    report = await harness(include_metadata=False).run(dataset("1"), FixedScore())
    assert report.metadata == {}


async def test_infrastructure_problems_raise_harness_error() -> None:
    class SyncEvaluator:
        name = "sync"

        def evaluate(self, input: str, output: str, reference: str) -> EvaluationResult:
            return EvaluationResult(1.0, EvaluationScoreType.CUSTOM)

    h = harness()
    with pytest.raises(HarnessError, match="SyncEvaluator is not an evaluator"):
        await h.run(dataset("1"), SyncEvaluator())  # type: ignore[arg-type]
    with pytest.raises(HarnessError, match="have no output and no system"):
        await h.run(dataset("1", None), FixedScore())
    with pytest.raises(HarnessError, match="has no samples"):
        await h.run(EvaluationDataset("empty", []), FixedScore())
    with pytest.raises(HarnessError, match="expected an EvaluationDataset"):
        await h.run([], FixedScore())  # type: ignore[arg-type]


async def test_run_sync_refuses_a_running_loop() -> None:
    with pytest.raises(HarnessError, match="inside a running event loop"):
        harness().run_sync(dataset("1"), FixedScore())


def test_run_sync_runs_a_dataset() -> None:
    report = harness().run_sync(dataset("1", "0"), FixedScore())
    assert report.passed_samples == 1
    data = report.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["results"][0] == {
        "sample_id": "s0",
        "score": 1.0,
        "score_type": "custom",
        "passed": True,
        "feedback": "scored 1",
        "metrics": {},
    }


# -- built-in evaluators -------------------------------------------------------------------------


async def test_builtin_evaluators_score_their_metric_family() -> None:
    traj = json.dumps({"steps": ["a", "b"], "final_state": {"x": 1}})
    cases = [
        (CriteriaEvaluator([{"type": "contains", "value": "Paris"}]), "Paris!", "", 1.0),
        (CriteriaEvaluator(), "42", "42", 1.0),
        (QAEvaluator(), "Paris is the capital", "capital of France: Paris", 2 / 3),
        (StringDistanceEvaluator(), "kitten", "sitting", 1 - 3 / 7),
        (StringDistanceEvaluator("jaccard"), "a b", "b c", 1 / 3),
        (StringDistanceEvaluator("cosine"), "a b", "a b", 1.0),
        (TrajectoryEvaluator(), traj, traj, 1.0),
        (TrajectoryEvaluator(), "not json", traj, 0.0),
    ]
    for evaluator, output, reference, expected in cases:
        assert isinstance(evaluator, EvaluatorProtocol)
        result = await evaluator.evaluate("q", output, reference)
        assert result.score == pytest.approx(expected), evaluator.name
    qa = await QAEvaluator().evaluate("q", "x", "y")
    assert qa.score_type is EvaluationScoreType.PARTIAL_MATCH
    assert qa.metrics["label"] == "fail"


async def test_embedding_evaluator_with_a_scripted_client() -> None:
    class Scripted:
        async def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0, 0.0] if t == "a" else [0.6, 0.8] for t in texts]

    result = await EmbeddingDistanceEvaluator(Scripted()).evaluate("q", "a", "b")
    assert result.score == pytest.approx(0.6)
    assert result.score_type is EvaluationScoreType.SEMANTIC_SIMILARITY
    with pytest.raises(EvaluationConfigError, match="not an embedding client"):
        EmbeddingDistanceEvaluator(object())  # type: ignore[arg-type]


def test_evaluator_options_are_validated() -> None:
    with pytest.raises(EvaluationConfigError, match="unknown string distance metric 'hamming'"):
        StringDistanceEvaluator("hamming")  # type: ignore[arg-type]
    with pytest.raises(EvaluationConfigError, match="criterion 0"):
        CriteriaEvaluator([{"type": "regex"}])
    with pytest.raises(EvaluationConfigError, match="step_weight"):
        TrajectoryEvaluator(step_weight=2)


# -- registry ---------------------------------------------------------------------------------


def test_registry_resolves_builtins_by_name() -> None:
    registry = EvaluatorRegistry()
    assert registry.names() == [
        "changed_fields_accuracy",
        "criteria",
        "embedding_distance",
        "overall_match",
        "preserved_fields_accuracy",
        "qa",
        "slot_accuracy",
        "state_accuracy",
        "string_distance",
        "trajectory",
    ]
    ev = registry.resolve("criteria", criteria=[{"type": "json_parseable"}])
    assert isinstance(ev, CriteriaEvaluator)
    assert isinstance(registry.resolve("qa"), QAEvaluator)


def test_registry_unknown_name_lists_known_names() -> None:
    with pytest.raises(
        EvaluatorNotFoundError,
        match="no evaluator named 'bleu'; known: changed_fields_accuracy, criteria,",
    ):
        EvaluatorRegistry().resolve("bleu")


def test_registry_rejects_duplicates_and_accepts_user_factories() -> None:
    registry = EvaluatorRegistry({"fixed": lambda **_: FixedScore()})
    assert registry.resolve("fixed").name == "fixed"
    with pytest.raises(EvaluationConfigError, match="'qa' is already registered"):
        registry.register("qa", QAEvaluator)
    with pytest.raises(EvaluationConfigError, match="'fixed' is already registered"):
        registry.register("fixed", lambda **_: FixedScore())
    empty = EvaluatorRegistry(builtins=False)
    assert empty.names() == []


def test_registry_translates_bad_options_and_bad_factories() -> None:
    registry = EvaluatorRegistry({"bogus": lambda **_: object()})  # type: ignore[dict-item]
    with pytest.raises(EvaluationConfigError, match="cannot build evaluator 'qa'"):
        registry.resolve("qa", metric="x")
    with pytest.raises(EvaluationConfigError, match="returned a object, not an evaluator"):
        registry.resolve("bogus")


def test_registry_embedding_distance_takes_a_client() -> None:
    class Scripted:
        async def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0] for _ in texts]

    ev = EvaluatorRegistry().resolve("embedding_distance", client=Scripted())
    assert isinstance(ev, EmbeddingDistanceEvaluator)


def test_registry_embedding_distance_defaults_to_the_offline_e5_client() -> None:
    ev = EvaluatorRegistry().resolve("embedding_distance")
    assert isinstance(ev, EmbeddingDistanceEvaluator)
    assert type(ev.client).__name__ == "E5EmbeddingClient"
