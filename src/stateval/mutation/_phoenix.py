"""A mutation test logged to Phoenix, so survivors can be inspected in its UI.

Mutation experiments go to a dataset of their own, ``<dataset>-mutation`` (the suite's cases,
as ``stateval run`` uploads them), so the team's dataset lists only real runs. Each logged
mutant gets a dataset split ``mutation-<id>-<mutant id>`` holding the cases whose output it
changed. The baseline becomes the experiment ``<prefix>-mutation-baseline`` with a run per case;
each logged mutant (survivors by default, killed ones too on request) becomes
``<prefix>-mutant-<operator>-<n>`` (``n`` from its id, ``M007`` -> 7) over its split, with a run
per changed case. Every run carries the evaluations the runner's scoring produced for it
(``state_accuracy``, ``overall_match``, ``field:<path>``, ``check:<path>``...); the experiment's
metadata says what the mutant changed, its operator, severity, status and suggestion. A
survivor's link opens Phoenix's compare view with the mutant first, so it lists only the cases
the mutant changed, each beside the baseline's run. Runs and evaluations are written by the
run's experiment writer (`stateval.run.ExperimentWriter`), as a run's and a rescoring's are.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from stateval.errors import MutationError, PhoenixUnavailableError
from stateval.mutation._experiments import MutationExperiments
from stateval.mutation._score import STATUSES, MutantResult
from stateval.run import CaseScore, PhoenixTarget
from stateval.suite import Suite
from stateval.upload import ExperimentSpec, ExperimentWriter, create_experiment

if TYPE_CHECKING:
    from stateval.mutation._runner import MutationReport
    from stateval.upload import DatasetRef, ExperimentRef, PhoenixUploader

__all__ = []

MUTATION_DATASET_SUFFIX = "-mutation"
"""Mutation experiments go to the dataset ``<suite's dataset><suffix>``."""

LOGGED_STATUSES: dict[str, tuple[str, ...]] = {
    "survivors": ("survived",),
    "all": ("survived", "killed", "equivalent"),
}
"""Which mutants `log_mutation` logs: survivors (the default), or killed and equivalent ones
too."""

_MAX_REQUESTS = 16
_SHOWN_CASES = 50


def mutant_experiment_name(prefix: str, result: MutantResult) -> str:
    """``<prefix>-mutant-<operator>-<n>``, ``n`` being the number in the mutant's id."""
    digits = result.id.lstrip("M")
    number = str(int(digits)) if digits.isdigit() else result.id
    return f"{prefix}-mutant-{result.mutant.operator}-{number}"


class _Log:
    """Uploads one mutation test: dataset, baseline experiment, mutant experiments."""

    def __init__(
        self,
        uploader: PhoenixUploader,
        suite: Suite,
        report: MutationReport,
        chosen: Sequence[MutantResult],
    ) -> None:
        from stateval._version import __version__

        self.uploader = uploader
        self.suite = suite
        self.report = report
        self.chosen = chosen
        self.dataset: DatasetRef | None = None
        self.baseline_ref: ExperimentRef | None = None
        self.done: dict[str, ExperimentRef] = {}
        self.runs = 0
        self.evaluations = 0
        self.error: str | None = None
        self.mutation_id = uuid.uuid4().hex[:12]
        self.common = {
            "stateval_mutation_id": self.mutation_id,
            "suite": suite.name,
            "suite_hash": suite.suite_hash,
            "cases_hash": suite.cases_hash,
            "mutator": suite.mutator_description,
            "seed": report.seed,
            "stateval_version": __version__,
        }

    def split_of(self, result: MutantResult) -> str:
        """The dataset split holding the cases ``result``'s mutant changed."""
        return f"mutation-{self.mutation_id}-{result.id}"

    async def baseline(self) -> None:
        """Upload the mutation dataset (the cases, one split per logged mutant), then log the
        baseline."""
        from stateval.upload import Example

        suite, report = self.suite, self.report
        examples = [Example(c.id, **c.to_example(), span_id=c.source_span_id) for c in suite.cases]
        splits: dict[str, list[str]] = {}
        for result in self.chosen:
            for case_id in result.changed_cases:
                splits.setdefault(case_id, []).append(self.split_of(result))
        self.dataset = await self.uploader.ensure_dataset(
            suite.phoenix.dataset + MUTATION_DATASET_SUFFIX,
            examples,
            description=f"stateval mutate: the cases of suite {suite.name}",
            splits=splits,
        )
        score = report.score
        metadata = {
            **self.common,
            "role": "baseline",
            "operators": list(report.operators),
            "mutation_score": score.value,
            "mutation_score_ci95": [score.low, score.high],
            "counts": {s: report.count(s) for s in STATUSES},
            "survivors": [r.id for r in report.survivors],
            "baseline_failures": list(report.baseline_failures[:_SHOWN_CASES]),
        }
        self.baseline_ref = await self._experiment(
            f"{suite.phoenix.experiment_prefix}-mutation-baseline",
            f"stateval mutate {suite.name}: the baseline ({report.baseline.n_cases} cases)",
            metadata,
            report.baseline.cases,
        )

    async def mutant(self, result: MutantResult) -> None:
        """Log one mutant: its metadata and the cases whose output it changed."""
        if self.baseline_ref is None or result.summary is None:
            return
        changed = set(result.changed_cases)
        metadata = {
            **self.common,
            "role": "mutant",
            "mutant_id": result.id,
            "operator": result.mutant.operator,
            "target": result.mutant.target,
            "description": result.mutant.description,
            "wrote": result.wrote,
            "status": result.status,
            "killed": result.killed,
            "killed_by": list(result.killed_by),
            "severity": result.severity,
            "suggestion": result.suggestion,
            "closest": result.closest,
            "n_changed_cases": result.n_changed,
            "changed_cases": list(result.changed_cases[:_SHOWN_CASES]),
            "baseline_experiment_id": self.baseline_ref.id,
        }
        self.done[result.id] = await self._experiment(
            mutant_experiment_name(self.suite.phoenix.experiment_prefix, result),
            f"{result.id} ({result.status}): {result.description}",
            metadata,
            [s for s in result.summary.cases if s.case_id in changed],
            split=self.split_of(result),
        )

    async def _experiment(
        self,
        name: str,
        description: str,
        metadata: Mapping[str, Any],
        scores: Iterable[CaseScore],
        *,
        split: str | None = None,
    ) -> ExperimentRef:
        """Create the experiment and write each case into it (its run, then its evaluations)
        with the run's experiment writer."""
        assert self.dataset is not None
        spec = ExperimentSpec(name, description, metadata, splits=() if split is None else (split,))
        ref = await create_experiment(self.uploader, self.dataset, spec)
        writer = ExperimentWriter(self.uploader, ref.id, self.dataset.example_ids)
        try:
            await asyncio.gather(*(writer.write(score.case_id, score) for score in scores))
        finally:
            self.runs += writer.runs
            self.evaluations += writer.evaluations
        return ref


async def log_mutation(
    suite: Suite,
    report: MutationReport,
    target: PhoenixTarget,
    *,
    mutants: Literal["survivors", "all"] = "survivors",
) -> MutationExperiments:
    """Log ``report``'s baseline and mutants to ``target`` as experiments on the mutation
    dataset ``<dataset>-mutation`` (the suite's own dataset is left alone).

    Phoenix errors do not raise: what was logged so far is returned with ``error`` set.

    Args:
        suite: The suite the mutation test ran (its cases become the dataset, as in a run).
        report: The finished mutation test.
        target: The Phoenix server.
        mutants: ``"survivors"`` (the default) or ``"all"`` (killed and equivalent ones too);
            inert, skipped and failed mutants have nothing to show and are never logged.

    Raises:
        MutationError: The report kept no case scores of its mutants (it was run without
            `MutationConfig.keep_cases`).
    """
    from stateval.upload import PhoenixUploader

    statuses = LOGGED_STATUSES[mutants]
    chosen = [r for r in report.results if r.status in statuses and r.summary is not None]
    bare = [r.id for r in chosen if r.n_changed and r.summary is not None and not r.summary.cases]
    if bare:
        raise MutationError(
            f"mutants {', '.join(bare[:5])} kept no case scores to log: run the mutation test "
            "with MutationConfig(keep_cases=True)"
        )
    async with PhoenixUploader(
        target.url, api_key=target.api_key, max_concurrency=_MAX_REQUESTS
    ) as uploader:
        log = _Log(uploader, suite, report, chosen)
        try:
            await log.baseline()
            outcomes = await asyncio.gather(
                *(log.mutant(r) for r in chosen), return_exceptions=True
            )
            failure = next((o for o in outcomes if isinstance(o, BaseException)), None)
            if failure is not None:
                raise failure
        except PhoenixUnavailableError as exc:
            log.error = str(exc)
        except Exception as exc:
            log.error = f"logging to Phoenix failed: {type(exc).__name__}: {exc}"
    return MutationExperiments(
        url=target.url,
        dataset_id=None if log.dataset is None else log.dataset.id,
        baseline=log.baseline_ref,
        mutants={r.id: log.done[r.id] for r in chosen if r.id in log.done},
        runs=log.runs,
        evaluations=log.evaluations,
        error=log.error,
    )
