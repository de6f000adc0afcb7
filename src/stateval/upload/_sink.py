"""The run's Phoenix sink (`PhoenixSink`): a run's (or a rescoring's) scored cases into one
Phoenix experiment.

The cases become a dataset (a new version only when they changed) and the run an experiment
(shared by the shards of a run). Scored cases go through a queue to a few upload workers, so
mutator calls and uploads overlap and the mutator loop never waits on Phoenix. Each case is an
experiment run with its evaluations, written by the `ExperimentWriter` that mutation testing's
experiments use too (`stateval.upload._experiment_writer`); outside ``evaluations`` mode its
``field:<path>`` scores are span annotations stored in bulk (`stateval.upload.UPLOAD_MODES`). Every
accepted upload is acknowledged in the journal; a resumed run skips what was acknowledged, and
Phoenix itself returns the existing run when one is posted twice and replaces an evaluation or
annotation posted twice, so nothing is recorded twice even after a crash between an upload and
its acknowledgement.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable

from stateval.episodes import EpisodeScore
from stateval.errors import PhoenixUnavailableError
from stateval.run import CaseScore, Journal, RunSummary, UploadProgress, UploadStatus
from stateval.suite import Case, FieldsAs, Suite
from stateval.upload._batcher import AnnotationBatcher
from stateval.upload._episode_sessions import EpisodeAnnotations
from stateval.upload._experiment_writer import ExperimentSpec, ExperimentWriter, create_experiment
from stateval.upload._fields_as import FieldAggregates, field_annotations, record_field_scores
from stateval.upload._modes import UPLOAD_MODES, as_annotation, as_evaluation
from stateval.upload._rest import DatasetRef, Example, ExperimentRef
from stateval.upload._uploader import PhoenixUploader

__all__ = ["UPLOAD_WORKERS", "ExperimentSpec", "PhoenixSink", "run_experiment"]

UPLOAD_WORKERS = 8
"""Cases uploaded at once."""
_SHARD_WRITES = 4
_SHARD_SETTLE = 0.5


def run_experiment(journal: Journal) -> ExperimentSpec:
    """The experiment of the run ``journal`` records (named after its header)."""
    header = journal.header
    # the mode tells the two experiments of --mode both apart in Phoenix's compare view
    mode = header.mode.replace("_", "-")
    if header.shared_run is not None:
        shards = (header.shard or "1/1").partition("/")[2]
        return ExperimentSpec(
            name=header.experiment_name or header.shared_run,
            description=f"stateval run of {header.suite_name} in {shards} shards, {mode}",
            metadata={
                "suite": header.suite_name,
                "suite_hash": header.suite_hash,
                "cases_hash": header.cases_hash,
                "mutator": header.mutator,
                "stateval_version": header.stateval_version,
                "git_commit": header.git_commit,
                "shards": int(shards),
                "repetitions": header.repetitions,
                "mode": header.mode,
            },
            shared_key=header.shared_run,
            repetitions=header.repetitions,
        )
    return ExperimentSpec(
        name=header.experiment_name or header.run_id,
        description=f"stateval run {header.run_id} of {header.suite_name}, {mode}",
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
            "repetitions": header.repetitions,
            "mode": header.mode,
        },
        repetitions=header.repetitions,
    )


class PhoenixSink:
    """Uploads scored cases as experiment runs with their evaluations, in the background.

    Args:
        uploader: The Phoenix REST client.
        journal: Where acknowledgements are recorded.
        url: The Phoenix server (acknowledgements from another server are not trusted).
        scope: Prefix of the experiment's acknowledgement kinds (``experiment``, ``run``,
            ``evaluations``, ``annotations``): empty for the run's own experiment,
            ``rescore-<n>:`` for the experiment of a rescoring, so each keeps its own.
        fields_as: Where ``field:<path>`` scores go (`stateval.upload.UPLOAD_MODES`).
        shard: The run's shard (``I/N``), whose per-field sums are merged with the others'.

    Attributes:
        flush_spans: Awaited before span annotations are posted (export finished spans).
        sent: Evaluations and annotations stored in this invocation (progress).
        to_send: How many this invocation has to store so far (grows as cases are scored).
    """

    def __init__(
        self,
        uploader: PhoenixUploader,
        journal: Journal,
        url: str,
        *,
        scope: str = "",
        fields_as: FieldsAs = "evaluations",
        shard: str | None = None,
    ) -> None:
        self.uploader = uploader
        self.journal = journal
        self.url = url
        self.scope = scope
        self.fields_as: FieldsAs = fields_as
        self.shard = shard
        self.flush_spans: Callable[[], Awaitable[object]] | None = None
        self.error: str | None = None
        self.runs = 0
        self.evaluations = 0
        self.annotations = 0
        self.sent = 0
        self.to_send = 0
        self.skipped = 0
        self.dataset_id: str | None = None
        self.example_ids: dict[str, str] = {}
        self.experiment_id: str | None = None
        self.experiment_url: str | None = None
        self.project_name: str | None = None
        self._queue: asyncio.Queue[tuple[Case, CaseScore] | None] = asyncio.Queue()
        self._workers: list[asyncio.Task[None]] = []
        self._done: set[str] = set()
        self._evaluated: set[str] = set()
        self.repetitions = 1
        self._fields = FieldAggregates()
        self._batcher: AnnotationBatcher | None = None
        self._episodes: EpisodeAnnotations | None = None
        self._writer: ExperimentWriter | None = None
        self._started = time.monotonic()

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
        spec = experiment or run_experiment(self.journal)
        self.repetitions = spec.repetitions
        earlier_work = bool(self.journal.results) or self.journal.ack("dataset") is not None
        ack = self.journal.ack("dataset")
        if ack is not None and ack.get("url") == self.url:
            self.dataset_id = str(ack["dataset_id"])
            version_id = str(ack["version_id"])
            self.example_ids = dict(ack["example_ids"])
        else:
            examples = [
                Example(c.id, **c.to_example(), span_id=c.source_span_id) for c in suite.cases
            ]
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
            evaluated = {
                case_id: rec
                for case_id, rec in self.journal.acked(self.scope + "evaluations").items()
                if rec.get("experiment_id") == self.experiment_id
            }
            annotated = {
                case_id
                for case_id, rec in self.journal.acked(self.scope + "annotations").items()
                if rec.get("experiment_id") == self.experiment_id
            }
            self._evaluated = set(evaluated)
            self._done = {
                c for c, rec in evaluated.items() if not rec.get("annotations") or c in annotated
            }
            return
        dataset = DatasetRef(
            id=self.dataset_id,
            name=suite.phoenix.dataset,
            version_id=version_id,
            example_ids=self.example_ids,
            content_hash="",
            uploaded=False,
        )
        created = None
        if earlier_work and spec.shared_key is None:
            # A previous invocation may have created it and died before journaling the answer.
            created = await self._find_experiment(spec)
        if created is None and spec.shared_key is None:
            created = await create_experiment(self.uploader, dataset, spec)
        elif created is None:
            assert spec.shared_key is not None
            created, _ = await self.uploader.shared_experiment(
                dataset,
                key=spec.shared_key,
                name=spec.name,
                description=spec.description,
                metadata=spec.metadata,
                repetitions=spec.repetitions,
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
        await self.record_field_scores()

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

    async def record_field_scores(self) -> None:
        """Outside ``evaluations`` mode, store the per-field means on the experiment's metadata
        (``field_scores``), so they show with the experiment. A failure is kept in `error`."""
        if self.experiment_id is None or not UPLOAD_MODES[self.fields_as].annotations:
            return
        try:
            await record_field_scores(self.uploader, self.experiment_id, self._fields, self.shard)
        except PhoenixUnavailableError as exc:
            self.error = self.error or str(exc)

    async def _find_experiment(self, spec: ExperimentSpec) -> ExperimentRef | None:
        """The dataset's experiment with ``spec``'s name and metadata, if one exists."""
        assert self.dataset_id is not None
        for found in await self.uploader.list_experiments(self.dataset_id):
            if found.name == spec.name and all(
                found.metadata.get(key) == value for key, value in spec.metadata.items()
            ):
                return found
        return None

    def start(self, workers: int = UPLOAD_WORKERS) -> None:
        """Start the upload workers."""
        self._workers = [asyncio.create_task(self._work()) for _ in range(workers)]
        self._episodes = EpisodeAnnotations(
            self.uploader, self.journal, scope=self.scope, flush=self._flush, on_stored=self._sent
        )
        spec = UPLOAD_MODES[self.fields_as]
        if spec.annotations:  # a queued mode's annotations are read back from the spans' project
            queued_in = self.journal.header.project if spec.queued else None
            self._batcher = AnnotationBatcher(
                self.uploader,
                batch_size=200 if queued_in is None else 1000,
                flush=self._flush,
                on_cases_stored=self._annotated,
                on_stored=self._count_annotations,
                queued_in=queued_in,
            )

    def submit(self, case: Case, score: CaseScore) -> None:
        """Queue a scored case (already uploaded ones are skipped)."""
        key = _key(case.id, score.result.repetition)
        self._fields.add(key, ((e.name, e.score) for e in score.evaluations))
        if key in self._done:
            self.skipped += 1
            return
        has_span = score.result.span_id is not None
        mode = self.fields_as
        if key not in self._evaluated:
            self.to_send += sum(
                as_evaluation(e.name, mode, has_span=has_span, score=e.score)
                for e in score.evaluations
            )
        self.to_send += sum(
            as_annotation(e.name, mode, has_span=has_span, score=e.score) for e in score.evaluations
        )
        self._queue.put_nowait((case, score))

    def submit_episode(self, episode: EpisodeScore) -> None:
        """Queue a finished episode's scores as annotations of its Phoenix session
        (`stateval.upload._episode_sessions`; already stored ones are skipped)."""
        if self._episodes is not None and self.ready and self.experiment_id is not None:
            self.to_send += self._episodes.submit(episode, self.experiment_id)

    async def finish(self, *, drain: bool = True) -> None:
        """Wait for the queue to empty (``drain``) or drop it, then stop the workers."""
        if drain:
            for _ in self._workers:
                self._queue.put_nowait(None)
            await asyncio.gather(*self._workers, return_exceptions=True)
            if self._batcher is not None:
                await self._batcher.finish()
                self.error = self.error or self._batcher.error
            if self._episodes is not None:
                await self._episodes.finish()
                self.error = self.error or self._episodes.error
        else:
            for task in self._workers:
                task.cancel()
            await asyncio.gather(*self._workers, return_exceptions=True)
            if self._batcher is not None:
                self._batcher.cancel()
                await self._batcher.finish()
            if self._episodes is not None:
                await self._episodes.finish(drain=False)

    def progress(self) -> UploadProgress:
        """How far the upload has come (see `UploadProgress`)."""
        return UploadProgress(self.sent, self.to_send, self._started, self.error)

    def status(self, planned: list[str]) -> UploadStatus:
        """What was uploaded in this invocation and what is still missing."""
        repetitions = range(1, self.repetitions + 1)
        pending = sum(1 for c in planned for r in repetitions if _key(c, r) not in self._done)
        return UploadStatus(
            runs=self.runs,
            evaluations=self.evaluations,
            skipped=self.skipped,
            pending=pending,
            error=self.error,
            experiment_url=self.experiment_url,
            episodes=0 if self._episodes is None else self._episodes.episodes,
            session_annotations=0 if self._episodes is None else self._episodes.stored,
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

    async def _flush(self) -> None:
        if self.flush_spans is not None:
            await self.flush_spans()

    def _sent(self, stored: int) -> None:
        self.sent += stored

    def _count_annotations(self, stored: int) -> None:
        self.annotations += stored
        self.sent += stored

    async def _annotated(self, case_ids: list[str]) -> None:
        for case_id in case_ids:
            await asyncio.to_thread(
                self.journal.append_ack,
                self.scope + "annotations",
                case_id,
                experiment_id=self.experiment_id,
            )
            self._done.add(case_id)

    async def _upload(self, case: Case, score: CaseScore) -> None:
        assert self.experiment_id is not None
        experiment_id = self.experiment_id
        key = _key(case.id, score.result.repetition)
        notes = field_annotations(score, experiment_id, self.fields_as)
        if key not in self._evaluated:
            await self._upload_run(case, score, experiment_id, annotations=len(notes))
        if notes and self._batcher is not None:
            self._batcher.add(key, notes)
        else:
            self._done.add(key)

    async def _upload_run(
        self, case: Case, score: CaseScore, experiment_id: str, *, annotations: int
    ) -> None:
        key = _key(case.id, score.result.repetition)
        writer = self._writer_for(experiment_id)
        ack = self.journal.ack(self.scope + "run", key)
        if ack is not None and ack.get("experiment_id") == experiment_id:
            run_id = str(ack["run_id"])
        else:
            run_id = await writer.post_run(case.id, score)
            await asyncio.to_thread(
                self.journal.append_ack,
                self.scope + "run",
                key,
                experiment_id=experiment_id,
                run_id=run_id,
            )
            self.runs += 1
        count = await writer.post_evaluations(run_id, score)
        await asyncio.to_thread(
            self.journal.append_ack,
            self.scope + "evaluations",
            key,
            experiment_id=experiment_id,
            run_id=run_id,
            count=count,
            annotations=annotations,
        )
        self._evaluated.add(key)

    def _writer_for(self, experiment_id: str) -> ExperimentWriter:
        writer = self._writer
        if writer is None or writer.experiment_id != experiment_id:
            writer = self._writer = ExperimentWriter(
                self.uploader,
                experiment_id,
                self.example_ids,
                fields_as=self.fields_as,
                on_evaluation=self._count_evaluation,
            )
        return writer

    def _count_evaluation(self) -> None:
        self.evaluations += 1
        self.sent += 1


def _key(case_id: str, repetition: int) -> str:
    """The journal's acknowledgement key of one repetition of a case (the case id for the
    first, so runs without ``--repeat`` journal as before)."""
    return case_id if repetition == 1 else f"{case_id}#{repetition}"
