"""Writing scored cases into a Phoenix experiment: the one place that turns a case's result into
an experiment run (its output, linked to its trace) and its scores into experiment
evaluations, for a run, a rescoring (`stateval.upload._sink.PhoenixSink`, which adds the
journal's acknowledgements and the background queue) and a mutation test's experiments.

Importing it is cheap: the REST client (httpx) is imported when something is written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from stateval.run import CaseScore
from stateval.suite import FieldsAs

if TYPE_CHECKING:
    from stateval.upload._rest import DatasetRef, EvaluationRecord, ExperimentRef, RunRecord
    from stateval.upload._uploader import PhoenixUploader

__all__ = ["ExperimentSpec", "ExperimentWriter", "create_experiment"]


@dataclass(frozen=True, slots=True)
class ExperimentSpec:
    """An experiment to create.

    Attributes:
        name: The experiment's name.
        description: Its description.
        metadata: Its metadata (JSON values).
        shared_key: Set when several processes (the shards of a run) write to this one
            experiment: the first creates it, the others find it by this key.
        repetitions: How many times each example runs (``stateval run --repeat``).
        splits: Run only the examples of these dataset splits (Phoenix's compare view then
            lists just those); all examples when empty.
    """

    name: str
    description: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    shared_key: str | None = None
    repetitions: int = 1
    splits: tuple[str, ...] = ()


async def create_experiment(
    uploader: PhoenixUploader, dataset: DatasetRef, spec: ExperimentSpec
) -> ExperimentRef:
    """Create the experiment ``spec`` describes over ``dataset``'s version."""
    return await uploader.create_experiment(
        dataset,
        name=spec.name,
        description=spec.description,
        metadata=spec.metadata,
        splits=list(spec.splits) or None,
        repetitions=spec.repetitions,
    )


class ExperimentWriter:
    """Writes scored cases into one experiment: each case (repetition) an experiment run with
    its output and trace, and its scores as experiment evaluations.

    Args:
        uploader: The Phoenix REST client.
        experiment_id: The experiment.
        example_ids: Case id -> the dataset example it runs.
        fields_as: Where ``field:<path>`` scores go (`stateval.upload.UPLOAD_MODES`): outside
            ``evaluations`` mode, those of a case with a span are left to span annotations.
        on_evaluation: Called as each evaluation is stored (progress).

    Attributes:
        runs: Runs stored.
        evaluations: Evaluations stored.
    """

    def __init__(
        self,
        uploader: PhoenixUploader,
        experiment_id: str,
        example_ids: Mapping[str, str],
        *,
        fields_as: FieldsAs = "evaluations",
        on_evaluation: Callable[[], None] | None = None,
    ) -> None:
        self.uploader = uploader
        self.experiment_id = experiment_id
        self.example_ids = example_ids
        self.fields_as: FieldsAs = fields_as
        self.on_evaluation = on_evaluation
        self.runs = 0
        self.evaluations = 0

    async def write(self, case_id: str, score: CaseScore) -> str:
        """Store the case's run, then its evaluations; return the run's id."""
        run_id = await self.post_run(case_id, score)
        await self.post_evaluations(run_id, score)
        return run_id

    async def post_run(self, case_id: str, score: CaseScore) -> str:
        """Store the case's experiment run; return its id (Phoenix returns the existing run
        when one is posted twice, and replaces a failed one in place)."""
        run_id = await self.uploader.post_run(
            self.experiment_id, run_record(self.example_ids[case_id], score)
        )
        self.runs += 1
        return run_id

    def evaluation_records(self, run_id: str, score: CaseScore) -> list[EvaluationRecord]:
        """The case's scores that go on its run as evaluations (see ``fields_as``)."""
        from stateval.upload._modes import as_evaluation
        from stateval.upload._rest import EvaluationRecord

        has_span = score.result.span_id is not None
        return [
            EvaluationRecord(
                run_id=run_id,
                name=e.name,
                annotator_kind=e.annotator_kind,
                score=e.score,
                label=e.label,
                explanation=e.explanation,
            )
            for e in score.evaluations
            if as_evaluation(e.name, self.fields_as, has_span=has_span, score=e.score)
        ]

    async def post_evaluations(self, run_id: str, score: CaseScore) -> int:
        """Store the case's evaluations on run ``run_id`` (at once); return how many."""
        records = self.evaluation_records(run_id, score)
        await _gather([self._post(record) for record in records])
        return len(records)

    async def _post(self, record: EvaluationRecord) -> None:
        await self.uploader.post_evaluation(record)
        self.evaluations += 1
        if self.on_evaluation is not None:
            self.on_evaluation()


async def _gather(posts: Sequence[Any]) -> None:
    """Await every post; a failure cancels the others and is raised itself (not as a group)."""
    try:
        async with asyncio.TaskGroup() as group:
            for post in posts:
                group.create_task(post)
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None


def run_record(example_id: str, score: CaseScore) -> RunRecord:
    """A scored case as the experiment run of dataset example ``example_id``."""
    from stateval.upload._rest import RunRecord

    result = score.result
    try:
        start = datetime.fromisoformat(result.started_at or "")
    except ValueError:
        start = datetime.now(UTC)
    post = None if result.post_state is None else result.post_state.to_dict()
    error = None if result.error is None else f"{result.error_type}: {result.error}"
    return RunRecord(
        example_id=example_id,
        output={"post_state": post, "error": error},
        start_time=start,
        end_time=start + timedelta(seconds=result.time_used),
        error=error,
        trace_id=result.trace_id,
        repetition=result.repetition,
    )
