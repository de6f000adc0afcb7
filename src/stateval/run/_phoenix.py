"""A run reported to Phoenix: dataset, experiment, traced mutator calls, runs and evaluations.

The cases become a dataset (a new version only when they changed) and the run an experiment
before the first mutator call. Each mutator call is a CHAIN span exported in batches to the
suite's Phoenix project (``phoenix.project``, default: the suite name). Scored cases go
through a queue to a few upload workers, so mutator calls and uploads overlap and the mutator
loop never waits on Phoenix. Every accepted upload is
acknowledged in the journal; a resumed run skips what was acknowledged, and Phoenix itself
returns the existing run when one is posted twice and replaces an evaluation posted twice, so
nothing is recorded twice even after a crash between an upload and its acknowledgement.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from stateval.errors import PhoenixUnavailableError
from stateval.mutators import LLMMutator, Mutator
from stateval.run._journal import Journal
from stateval.run._results import CaseScore
from stateval.run._runner import CaseSpan, execute
from stateval.run._scoring import RunSummary, Scoring, summarize
from stateval.run._session import PhoenixTarget, RunOutcome, UploadStatus
from stateval.suite import Case, Suite
from stateval.upload import EvaluationRecord, Example, PhoenixUploader, RunRecord

if TYPE_CHECKING:
    from stateval.tracing import MutationSpan, Tracing

__all__ = ["ExperimentSpec", "PhoenixSink", "run_experiment", "run_with_phoenix"]

_UPLOAD_WORKERS = 8
_SHARD_WRITES = 4
_SHARD_SETTLE = 0.5
_MAX_REQUESTS = 16


@dataclass(frozen=True, slots=True)
class ExperimentSpec:
    """The experiment a `PhoenixSink` creates.

    Attributes:
        name: The experiment's name.
        description: Its description.
        metadata: Its metadata (JSON values).
        shared_key: Set when several processes (the shards of a run) write to this one
            experiment: the first creates it, the others find it by this key.
    """

    name: str
    description: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    shared_key: str | None = None


def run_experiment(journal: Journal) -> ExperimentSpec:
    """The experiment of the run ``journal`` records (named after its header)."""
    header = journal.header
    if header.shared_run is not None:
        shards = (header.shard or "1/1").partition("/")[2]
        return ExperimentSpec(
            name=header.experiment_name or header.shared_run,
            description=f"stateval run of {header.suite_name} in {shards} shards",
            metadata={
                "suite": header.suite_name,
                "suite_hash": header.suite_hash,
                "cases_hash": header.cases_hash,
                "mutator": header.mutator,
                "stateval_version": header.stateval_version,
                "git_commit": header.git_commit,
                "shards": int(shards),
            },
            shared_key=header.shared_run,
        )
    return ExperimentSpec(
        name=header.experiment_name or header.run_id,
        description=f"stateval run {header.run_id} of {header.suite_name}",
        metadata={
            "stateval_run_id": header.run_id,
            "suite": header.suite_name,
            "suite_path": header.suite_path,
            "suite_hash": header.suite_hash,
            "cases_hash": header.cases_hash,
            "mutator": header.mutator,
            "stateval_version": header.stateval_version,
            "git_commit": header.git_commit,
            "cases": len(header.case_ids),
        },
    )


class PhoenixSink:
    """Uploads scored cases as experiment runs with their evaluations, in the background.

    Args:
        uploader: The Phoenix REST client.
        journal: Where acknowledgements are recorded.
        url: The Phoenix server (acknowledgements from another server are not trusted).
        scope: Prefix of the experiment's acknowledgement kinds (``experiment``, ``run``,
            ``evaluations``): empty for the run's own experiment, ``rescore-<n>:`` for the
            experiment of a rescoring, so each keeps its own acknowledgements.
    """

    def __init__(
        self, uploader: PhoenixUploader, journal: Journal, url: str, *, scope: str = ""
    ) -> None:
        self.uploader = uploader
        self.journal = journal
        self.url = url
        self.scope = scope
        self.error: str | None = None
        self.runs = 0
        self.evaluations = 0
        self.skipped = 0
        self.dataset_id: str | None = None
        self.example_ids: dict[str, str] = {}
        self.experiment_id: str | None = None
        self.experiment_url: str | None = None
        self.project_name: str | None = None
        self._queue: asyncio.Queue[tuple[Case, CaseScore] | None] = asyncio.Queue()
        self._workers: list[asyncio.Task[None]] = []
        self._done: set[str] = set()

    @property
    def ready(self) -> bool:
        """True when the experiment exists and nothing has failed."""
        return self.experiment_id is not None and self.error is None

    async def prepare(self, suite: Suite, experiment: ExperimentSpec | None = None) -> None:
        """Make sure the dataset and the experiment exist (reusing acknowledged ones).

        Args:
            suite: The suite whose cases are the dataset.
            experiment: Name, description and metadata of the experiment to create (default:
                the run's own, from the journal header).
        """
        ack = self.journal.ack("dataset")
        if ack is not None and ack.get("url") == self.url:
            self.dataset_id = str(ack["dataset_id"])
            version_id = str(ack["version_id"])
            self.example_ids = dict(ack["example_ids"])
        else:
            examples = [Example(c.id, **c.to_example()) for c in suite.cases]
            ref = await self.uploader.ensure_dataset(
                suite.phoenix.dataset, examples, description=suite.model.description
            )
            self.dataset_id, version_id = ref.id, ref.version_id
            self.example_ids = dict(ref.example_ids)
            await asyncio.to_thread(
                self.journal.append_ack,
                "dataset",
                url=self.url,
                dataset_id=ref.id,
                version_id=ref.version_id,
                example_ids=self.example_ids,
                uploaded=ref.uploaded,
            )
        ack = self.journal.ack(self.scope + "experiment")
        if ack is not None and ack.get("dataset_id") == self.dataset_id:
            self.experiment_id = str(ack["experiment_id"])
            self.experiment_url = ack.get("experiment_url")
            self.project_name = ack.get("project_name")
            self._done = {
                case_id
                for case_id, rec in self.journal.acked(self.scope + "evaluations").items()
                if rec.get("experiment_id") == self.experiment_id
            }
            return
        from stateval.upload import DatasetRef

        dataset = DatasetRef(
            id=self.dataset_id,
            name=suite.phoenix.dataset,
            version_id=version_id,
            example_ids=self.example_ids,
            content_hash="",
            uploaded=False,
        )
        spec = experiment or run_experiment(self.journal)
        if spec.shared_key is None:
            created = await self.uploader.create_experiment(
                dataset, name=spec.name, description=spec.description, metadata=spec.metadata
            )
        else:
            created, _ = await self.uploader.shared_experiment(
                dataset,
                key=spec.shared_key,
                name=spec.name,
                description=spec.description,
                metadata=spec.metadata,
            )
        self.experiment_id = created.id
        self.experiment_url = created.url
        self.project_name = created.project_name
        await asyncio.to_thread(
            self.journal.append_ack,
            self.scope + "experiment",
            url=self.url,
            dataset_id=self.dataset_id,
            experiment_id=created.id,
            experiment_url=created.url,
            project_name=created.project_name,
        )

    async def record_summary(self, summary: RunSummary) -> None:
        """Store the run's figures on the experiment's metadata (see
        `RunSummary.experiment_metadata`), so experiments can be compared on them. A failure
        is kept in `error` (the run's results are safe in the journal).

        The shard of a sharded run stores its own figures under ``shard_figures[<I/N>]``
        instead, leaving the shared experiment's top level alone (a shard's figures are not the
        run's). Shards finish concurrently and Phoenix replaces metadata as a whole, so each
        shard reads, writes, and checks after a pause that its entry survived, rewriting it if
        another shard's write replaced it.
        """
        if self.experiment_id is None:
            return
        shard = self.journal.header.shard
        try:
            if shard is None:
                await self.uploader.update_experiment_metadata(
                    self.experiment_id, summary.experiment_metadata()
                )
            else:
                await self._record_shard(self.experiment_id, shard, summary)
        except PhoenixUnavailableError as exc:
            self.error = self.error or str(exc)

    async def _record_shard(self, experiment_id: str, shard: str, summary: RunSummary) -> None:
        figures = summary.experiment_metadata()
        for attempt in range(_SHARD_WRITES):
            current = dict((await self.uploader.get_experiment(experiment_id)).metadata)
            entries = dict(current.get("shard_figures") or {})
            if entries.get(shard) != figures:
                entries[shard] = figures
                current["shard_figures"] = entries
                await self.uploader.replace_experiment_metadata(experiment_id, current)
            elif attempt:
                return
            await asyncio.sleep(_SHARD_SETTLE * (1 + random.random()))

    def start(self, workers: int = _UPLOAD_WORKERS) -> None:
        """Start the upload workers."""
        self._workers = [asyncio.create_task(self._work()) for _ in range(workers)]

    def submit(self, case: Case, score: CaseScore) -> None:
        """Queue a scored case (already uploaded ones are skipped)."""
        if case.id in self._done:
            self.skipped += 1
            return
        self._queue.put_nowait((case, score))

    async def finish(self, *, drain: bool = True) -> None:
        """Wait for the queue to empty (``drain``) or drop it, then stop the workers."""
        if drain:
            for _ in self._workers:
                self._queue.put_nowait(None)
            await asyncio.gather(*self._workers, return_exceptions=True)
        else:
            for task in self._workers:
                task.cancel()
            await asyncio.gather(*self._workers, return_exceptions=True)

    def status(self, planned: list[str]) -> UploadStatus:
        """What was uploaded in this invocation and what is still missing."""
        pending = sum(1 for c in planned if c not in self._done)
        return UploadStatus(
            runs=self.runs,
            evaluations=self.evaluations,
            skipped=self.skipped,
            pending=pending,
            error=self.error,
            experiment_url=self.experiment_url,
        )

    async def _work(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            if self.error is not None or self.experiment_id is None:
                continue
            try:
                await self._upload(*item)
            except* PhoenixUnavailableError as group:
                self.error = str(group.exceptions[0])
            except* Exception as group:
                first = group.exceptions[0]
                self.error = f"upload failed: {type(first).__name__}: {first}"

    async def _upload(self, case: Case, score: CaseScore) -> None:
        assert self.experiment_id is not None
        experiment_id = self.experiment_id
        ack = self.journal.ack(self.scope + "run", case.id)
        if ack is not None and ack.get("experiment_id") == experiment_id:
            run_id = str(ack["run_id"])
        else:
            run_id = await self.uploader.post_run(experiment_id, _run_record(case, score, self))
            await asyncio.to_thread(
                self.journal.append_ack,
                self.scope + "run",
                case.id,
                experiment_id=experiment_id,
                run_id=run_id,
            )
            self.runs += 1
        records = [
            EvaluationRecord(
                run_id=run_id,
                name=e.name,
                annotator_kind=e.annotator_kind,
                score=e.score,
                label=e.label,
                explanation=e.explanation,
            )
            for e in score.evaluations
        ]
        async with asyncio.TaskGroup() as group:
            for record in records:
                group.create_task(self.uploader.post_evaluation(record))
        await asyncio.to_thread(
            self.journal.append_ack,
            self.scope + "evaluations",
            case.id,
            experiment_id=experiment_id,
            run_id=run_id,
            count=len(records),
        )
        self.evaluations += len(records)
        self._done.add(case.id)


def _run_record(case: Case, score: CaseScore, sink: PhoenixSink) -> RunRecord:
    result = score.result
    try:
        start = datetime.fromisoformat(result.started_at or "")
    except ValueError:
        start = datetime.now(UTC)
    post = None if result.post_state is None else result.post_state.to_dict()
    error = None if result.error is None else f"{result.error_type}: {result.error}"
    return RunRecord(
        example_id=sink.example_ids[case.id],
        output={"post_state": post, "error": error},
        start_time=start,
        end_time=start + timedelta(seconds=result.time_used),
        error=error,
        trace_id=result.trace_id,
    )


class _TracedCase:
    """A case's mutation span that the judge's LLM spans can be parented to after it ended."""

    __slots__ = ("_span",)

    def __init__(self, span: MutationSpan) -> None:
        self._span = span

    @property
    def trace_id(self) -> str | None:
        return self._span.trace_id

    def set_output(self, value: object) -> None:
        self._span.set_output(value)

    def reenter(self) -> AbstractContextManager[object]:
        from opentelemetry import trace

        return trace.use_span(self._span.span, end_on_exit=False)


def _span_factory(tracing: Tracing) -> Callable[[Case], AbstractContextManager[CaseSpan]]:
    from opentelemetry import context as otel_context

    from stateval.tracing import mutation_span

    @contextlib.contextmanager
    def open_span(case: Case) -> Iterator[CaseSpan]:
        # Each mutator call is the root of its own trace (what its experiment run links to),
        # even when the run itself happens inside someone else's span.
        token = otel_context.attach(otel_context.Context())
        try:
            with mutation_span(
                tracing.tracer,
                case_id=case.id,
                input=case.input,
                pre_state=case.pre_state,
                message_id=case.input.message_id,
            ) as span:
                yield _TracedCase(span)
        finally:
            otel_context.detach(token)

    return open_span


def _trace_llm_calls(mutator: Mutator, tracing: Tracing) -> None:
    """Have an `LLMMutator`'s client record an LLM span per call, when it can (``tracer``)."""
    client = mutator.client if isinstance(mutator, LLMMutator) else None
    if client is not None and hasattr(client, "tracer") and client.tracer is None:
        client.tracer = tracing.tracer


async def run_with_phoenix(
    suite: Suite,
    journal: Journal,
    scoring: Scoring,
    target: PhoenixTarget,
    *,
    concurrency: int,
    on_case: Callable[[CaseScore], None] | None = None,
) -> RunOutcome:
    """Run the journal's missing cases and upload every case Phoenix does not have yet.

    If Phoenix cannot be reached (or fails midway), the run goes on locally; the outcome's
    `UploadStatus` says what is pending, for ``stateval run --resume``.
    """
    from stateval.tracing import configure_tracing

    assert suite.mutator is not None
    async with PhoenixUploader(
        target.url, api_key=target.api_key, max_concurrency=_MAX_REQUESTS
    ) as uploader:
        sink = PhoenixSink(uploader, journal, target.url)
        try:
            await sink.prepare(suite)
        except PhoenixUnavailableError as exc:
            sink.error = str(exc)
        tracing = None
        if sink.ready:
            # The suite's project (phoenix.project, default: the suite name), as the run
            # recorded it: Phoenix lists it under Tracing, unlike the experiment's own
            # auto-named project; the experiment's runs link to their traces by trace id.
            tracing = configure_tracing(
                journal.header.project or suite.phoenix.project,
                target.url,
                api_key=target.api_key,
            )
            _trace_llm_calls(suite.mutator, tracing)
            if suite.judge is not None:
                suite.judge.trace_calls(tracing.tracer)
        sink.start()
        drained = False
        try:
            scores = await execute(
                suite,
                journal,
                scoring,
                mutator=suite.mutator,
                concurrency=concurrency,
                span=None if tracing is None else _span_factory(tracing),
                sink=sink,
                on_case=on_case,
                judge=suite.judge,
            )
            await sink.finish()
            drained = True
        finally:
            if not drained:
                await sink.finish(drain=False)
            if tracing is not None:
                await asyncio.to_thread(tracing.shutdown)
        planned = list(journal.header.case_ids)
        wanted = set(planned)
        summary = summarize(
            scores.values(),
            scoring,
            cases=[c for c in suite.cases if c.id in wanted],
            suite_name=suite.name,
            run_id=journal.run_id,
            experiment_url=sink.experiment_url,
        )
        if sink.ready:
            await sink.record_summary(summary)
    return RunOutcome(summary, journal, sink.status(planned))
