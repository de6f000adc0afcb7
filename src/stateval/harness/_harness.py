"""`EvaluationHarness`: run one evaluator over one dataset into a `RunReport`."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from stateval.checks import as_text
from stateval.config import EvaluationConfig
from stateval.errors import EvaluationConfigError, HarnessError
from stateval.harness._dataset import EvaluationDataset
from stateval.harness._types import (
    EvaluationResult,
    EvaluationSample,
    EvaluatorProtocol,
    RunReport,
    SampleFailure,
    SystemUnderTest,
)

__all__ = ["EvaluationHarness"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Failed:
    error: str
    attempts: int


class EvaluationHarness:
    """Runs an evaluator over a dataset with bounded concurrency, retries and timeouts.

    A sample's output is its recorded ``output``, else ``await system(sample.input)``. A system
    call or evaluation that raises is retried up to ``config.max_retries`` times; one that runs
    past ``config.timeout_seconds`` fails at once. A sample that still fails is recorded in
    `RunReport.failures`; it never stops the run.

    Args:
        pass_threshold: Score a sample needs to pass; None for ``config.default_threshold``.
        max_concurrency: Samples in flight at once; None for ``config.max_concurrency``.
        config: Settings; None reads `EvaluationConfig` from the environment now.

    Raises:
        EvaluationConfigError: The threshold or concurrency is out of range.

    Example:
        >>> from stateval.harness import EvaluationDataset, QAEvaluator
        >>> sample = {"input": "q", "reference": "Paris", "output": "Paris"}
        >>> ds = EvaluationDataset.from_list([sample])
        >>> EvaluationHarness(0.5).run_sync(ds, QAEvaluator()).passed_samples
        1
    """

    def __init__(
        self,
        pass_threshold: float | None = None,
        max_concurrency: int | None = None,
        config: EvaluationConfig | None = None,
    ) -> None:
        self.config = config if config is not None else EvaluationConfig()
        threshold = self.config.default_threshold if pass_threshold is None else pass_threshold
        if isinstance(threshold, bool) or not 0.0 <= threshold <= 1.0:
            raise EvaluationConfigError(f"pass_threshold must be in [0, 1], got {threshold!r}")
        concurrency = self.config.max_concurrency if max_concurrency is None else max_concurrency
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise EvaluationConfigError(
                f"max_concurrency must be a positive integer, got {concurrency!r}"
            )
        self.pass_threshold = float(threshold)
        self.max_concurrency = concurrency

    async def run(
        self,
        dataset: EvaluationDataset,
        evaluator: EvaluatorProtocol,
        system: SystemUnderTest | None = None,
    ) -> RunReport:
        """Evaluate every sample (up to ``config.max_samples``) and aggregate a report.

        Raises:
            HarnessError: The evaluator is not an `EvaluatorProtocol`, the dataset is empty, or a
                sample has no output and no ``system`` was given.
        """
        self._check_inputs(dataset, evaluator, system)
        samples = list(dataset.samples)
        if self.config.max_samples is not None:
            samples = samples[: self.config.max_samples]
        no_output = [s.id for s in samples if s.output is None]
        if no_output and system is None:
            shown = ", ".join(repr(i) for i in no_output[:5])
            more = f" and {len(no_output) - 5} more" if len(no_output) > 5 else ""
            raise HarnessError(
                f"samples {shown}{more} of dataset {dataset.name!r} have no output "
                "and no system was given to produce one"
            )

        started = time.perf_counter()
        semaphore = asyncio.Semaphore(self.max_concurrency)

        async def one(sample: EvaluationSample) -> EvaluationResult | SampleFailure:
            async with semaphore:
                return await self._evaluate_sample(sample, evaluator, system)

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(s)) for s in samples]
        outcomes = [t.result() for t in tasks]
        return self._report(dataset, evaluator, outcomes, time.perf_counter() - started)

    def run_sync(
        self,
        dataset: EvaluationDataset,
        evaluator: EvaluatorProtocol,
        system: SystemUnderTest | None = None,
    ) -> RunReport:
        """`run` from synchronous code (not from inside a running event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(dataset, evaluator, system))
        raise HarnessError("run_sync() was called inside a running event loop; await run()")

    @staticmethod
    def _check_inputs(dataset: Any, evaluator: Any, system: Any) -> None:
        if not isinstance(dataset, EvaluationDataset):
            raise HarnessError(f"expected an EvaluationDataset, got {type(dataset).__name__}")
        if not isinstance(evaluator, EvaluatorProtocol) or not inspect.iscoroutinefunction(
            evaluator.evaluate
        ):
            raise HarnessError(
                f"{type(evaluator).__name__} is not an evaluator: it needs a name and "
                "an async evaluate(input, output, reference)"
            )
        if system is not None and not callable(system):
            raise HarnessError(f"system must be an async callable, got {type(system).__name__}")
        if not dataset.samples:
            raise HarnessError(f"dataset {dataset.name!r} has no samples")

    async def _attempt(self, call: Callable[[], Awaitable[T]]) -> T | _Failed:
        timeout = self.config.timeout_seconds
        attempts = self.config.max_retries + 1
        error = ""
        for attempt in range(1, attempts + 1):
            try:
                async with asyncio.timeout(timeout) as scope:
                    return await call()
            except TimeoutError as exc:
                if scope.expired():
                    return _Failed(f"timed out after {timeout:g}s", attempt)
                error = f"{type(exc).__name__}: {exc}"
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
        return _Failed(error, attempts)

    async def _evaluate_sample(
        self,
        sample: EvaluationSample,
        evaluator: EvaluatorProtocol,
        system: SystemUnderTest | None,
    ) -> EvaluationResult | SampleFailure:
        output = sample.output
        if output is None:
            assert system is not None
            produced = await self._attempt(lambda: system(sample.input))
            if isinstance(produced, _Failed):
                return SampleFailure(sample.id, produced.error, "system", produced.attempts)
            output = as_text(produced)
        text = output
        result = await self._attempt(
            lambda: evaluator.evaluate(sample.input, text, sample.reference)
        )
        if isinstance(result, _Failed):
            return SampleFailure(sample.id, result.error, "evaluator", result.attempts)
        if not isinstance(result, EvaluationResult):
            error = f"evaluator returned a {type(result).__name__}, not an EvaluationResult"
            return SampleFailure(sample.id, error, "evaluator", 1)
        return replace(result, sample_id=sample.id, passed=result.score >= self.pass_threshold)

    def _report(
        self,
        dataset: EvaluationDataset,
        evaluator: EvaluatorProtocol,
        outcomes: list[EvaluationResult | SampleFailure],
        duration: float,
    ) -> RunReport:
        results = [o for o in outcomes if isinstance(o, EvaluationResult)]
        failures = [o for o in outcomes if isinstance(o, SampleFailure)]
        total = len(outcomes)
        metadata: dict[str, Any] = {}
        if self.config.include_metadata:
            metadata = {
                "dataset_metadata": dict(dataset.metadata),
                "dataset_size": len(dataset),
                "pass_threshold": self.pass_threshold,
                "max_concurrency": self.max_concurrency,
                "max_retries": self.config.max_retries,
                "timeout_seconds": self.config.timeout_seconds,
                "max_samples": self.config.max_samples,
                "failed_to_evaluate": len(failures),
                "duration_seconds": duration,
            }
        return RunReport(
            dataset_name=dataset.name,
            evaluator_name=evaluator.name,
            total_samples=total,
            passed_samples=sum(1 for r in results if r.passed),
            average_score=sum(r.score for r in results) / total,
            results=results,
            metadata=metadata,
            failures=failures,
            pass_threshold=self.pass_threshold,
        )
