"""A fast asynchronous client for the Phoenix REST endpoints a stateval run writes to.

One `httpx.AsyncClient` (HTTP keep-alive) carries every request; a semaphore bounds how many are
in flight; connection errors, 5xx and 429 are retried with exponential backoff before a
`PhoenixUnavailableError` (`stateval.upload._transport`). Phoenix has no bulk endpoint for
experiment runs or evaluations, so their speed comes from keeping enough requests in flight to
keep the (CPU-bound) server busy; span annotations do have one (`post_span_annotations`).

Endpoints used (as served by Phoenix 20.26):
    ``GET  /v1/datasets?name=``, ``POST /v1/datasets/upload?sync=true`` (action ``update``,
    ``example_ids``), ``GET /v1/datasets/{id}/examples``, ``POST /v1/datasets/{id}/experiments``,
    ``GET /v1/experiments/{id}``, ``PATCH /v1/experiments/{id}`` (metadata),
    ``POST /v1/experiments/{id}/runs``,
    ``GET /v1/experiments/{id}/runs``, ``POST /v1/experiment_evaluations``,
    ``GET /v1/experiments/{id}/json``, ``GET /v1/datasets/{id}/experiments``,
    ``PATCH``/``DELETE /v1/experiments/{id}``, ``POST /v1/span_annotations`` (``sync`` or queued),
    ``GET /v1/projects/{name}/span_annotations``, ``POST /v1/session_annotations?sync=true``,
    ``GET /v1/projects/{name}/session_annotations``, ``GET /v1/projects/{name}/sessions``,
    ``GET /v1/projects/{name}/spans``.

Example:
    >>> async def upload(url: str) -> None:   # doctest: +SKIP
    ...     async with PhoenixUploader(url) as phoenix:
    ...         dataset = await phoenix.ensure_dataset("forms", [Example("c1", {"q": 1}, {})])
    ...         experiment = await phoenix.create_experiment(dataset, name="run 1")
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

from stateval.errors import DatasetError, PhoenixUnavailableError
from stateval.upload._annotation_reads import read_annotations
from stateval.upload._annotations import post_session_annotations, post_span_annotations
from stateval.upload._notes import StoredSpanNote, list_span_notes, post_span_note
from stateval.upload._queued import queue_span_annotations
from stateval.upload._rest import (
    DatasetListWire,
    DatasetRef,
    EvaluationRecord,
    Example,
    ExamplesWire,
    ExperimentBodyWire,
    ExperimentListWire,
    ExperimentRef,
    ExperimentWire,
    ExportWire,
    IdWire,
    RunListWire,
    RunRecord,
    SessionAnnotationRecord,
    SpanAnnotationRecord,
    StoredEvaluation,
    StoredRun,
    StoredSession,
    StoredSessionAnnotation,
    StoredSpanAnnotation,
    UploadWire,
    content_hash,
)
from stateval.upload._sessions import list_session_annotations, list_sessions
from stateval.upload._shared import shared_experiment
from stateval.upload._spans import SpanFilter, StoredSpan, iter_span_pages
from stateval.upload._transport import Transport, parse

__all__ = ["PhoenixUploader"]


class PhoenixUploader:
    """Writes datasets, experiments, runs and evaluations to one Phoenix server.

    Use as an async context manager (or call `aclose`).

    Args:
        base_url: The Phoenix server, e.g. ``http://127.0.0.1:6006``.
        api_key: Sent as ``Authorization: Bearer <key>`` (``PHOENIX_API_KEY``).
        max_concurrency: Requests in flight at once.
        retries: Further attempts after a connection error, 5xx or 429.
        backoff: First delay between attempts in seconds; doubles each time.
        timeout: Seconds per request.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        max_concurrency: int = 16,
        retries: int = 4,
        backoff: float = 0.25,
        timeout: float = 30.0,
    ) -> None:
        self._http = Transport(
            base_url,
            api_key=api_key,
            max_concurrency=max_concurrency,
            retries=retries,
            backoff=backoff,
            timeout=timeout,
        )
        self.base_url = self._http.base_url

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    # -- datasets ------------------------------------------------------------------------------

    async def ensure_dataset(
        self,
        name: str,
        examples: Sequence[Example],
        *,
        description: str | None = None,
        splits: Mapping[str, Sequence[str]] | None = None,
    ) -> DatasetRef:
        """Make dataset ``name`` hold exactly ``examples``; upload only if its content differs.

        A new dataset is created; an existing one whose latest version already has these ids and
        contents is left alone (nothing is sent); otherwise a new version is added in which
        changed examples are updated, new ones created and missing ones removed.

        Args:
            name: The dataset.
            examples: Its examples.
            description: The dataset's description.
            splits: Case id -> the dataset splits (by name) its example joins; with splits the
                examples are always uploaded (a new version), since the split assignment is
                not part of the stored content.

        Raises:
            DatasetError: There are no examples, or two share a case id.
            PhoenixUnavailableError: The server cannot be reached or refused the upload.
        """
        if not examples:
            raise DatasetError(f"dataset {name!r}: no examples to upload")
        ids = [example.case_id for example in examples]
        if len(set(ids)) != len(ids):
            duplicates = sorted({i for i in ids if ids.count(i) > 1})
            raise DatasetError(f"dataset {name!r}: duplicate case ids {duplicates}")
        local_hash = content_hash(
            [(e.case_id, dict(e.input), dict(e.output), e.stored_metadata()) for e in examples]
        )
        existing = None if splits else await self._find_dataset(name)
        if existing is not None:
            stored = await self._examples(existing)
            if _stored_hash(stored) == local_hash:
                return _dataset_ref(name, stored, local_hash, uploaded=False)
        body: dict[str, Any] = {
            "action": "update",  # creates the dataset when it does not exist yet
            "name": name,
            "inputs": [dict(e.input) for e in examples],
            "outputs": [dict(e.output) for e in examples],
            "metadata": [e.stored_metadata() for e in examples],
            "example_ids": ids,
        }
        if description:
            body["description"] = description
        if any(e.span_id for e in examples):
            body["span_ids"] = [e.span_id for e in examples]
        if splits:
            body["splits"] = [list(splits.get(case_id, ())) or None for case_id in ids]
        uploaded = await self._http.call(
            UploadWire, "POST", "/v1/datasets/upload", json=body, params={"sync": "true"}
        )
        stored = await self._examples(uploaded.data.dataset_id, uploaded.data.version_id)
        return _dataset_ref(name, stored, local_hash, uploaded=True)

    async def _find_dataset(self, name: str) -> str | None:
        found = await self._http.call(DatasetListWire, "GET", "/v1/datasets", params={"name": name})
        return next((d.id for d in found.data if d.name == name), None)

    async def _examples(self, dataset_id: str, version_id: str | None = None) -> ExamplesWire:
        params = {"version_id": version_id} if version_id else None
        return await self._http.call(
            ExamplesWire, "GET", f"/v1/datasets/{dataset_id}/examples", params=params
        )

    # -- experiments ---------------------------------------------------------------------------

    async def create_experiment(
        self,
        dataset: DatasetRef,
        *,
        name: str,
        description: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        splits: Sequence[str] | None = None,
        repetitions: int = 1,
    ) -> ExperimentRef:
        """Create an experiment over ``dataset``'s version, each example run ``repetitions``
        times (only the examples of ``splits``, by name, when given: Phoenix's compare view
        then lists just those)."""
        body: dict[str, Any] = {
            "name": name,
            "repetitions": repetitions,
            "version_id": dataset.version_id,
            "metadata": dict(metadata or {}),
        }
        if description:
            body["description"] = description
        if splits is not None:
            body["splits"] = list(splits)
        created = await self._http.call(
            ExperimentBodyWire, "POST", f"/v1/datasets/{dataset.id}/experiments", json=body
        )
        return self._experiment_ref(created.data)

    async def get_experiment(self, experiment_id: str) -> ExperimentRef:
        """Fetch an existing experiment (to resume it)."""
        found = await self._http.call(ExperimentBodyWire, "GET", f"/v1/experiments/{experiment_id}")
        return self._experiment_ref(found.data)

    async def list_experiments(self, dataset_id: str) -> list[ExperimentRef]:
        """Every experiment on a dataset, newest first."""
        found: list[ExperimentRef] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 100}
            if cursor:
                params["cursor"] = cursor
            page = await self._http.call(
                ExperimentListWire, "GET", f"/v1/datasets/{dataset_id}/experiments", params=params
            )
            found.extend(self._experiment_ref(wire) for wire in page.data)
            cursor = page.next_cursor
            if not cursor:
                return found

    async def update_experiment_metadata(
        self, experiment_id: str, metadata: Mapping[str, Any]
    ) -> ExperimentRef:
        """Merge ``metadata`` into the experiment's metadata (``PATCH /v1/experiments/{id}``
        replaces it as a whole, so the current one is read first)."""
        current = await self.get_experiment(experiment_id)
        return await self.replace_experiment_metadata(
            experiment_id, {**current.metadata, **metadata}
        )

    async def replace_experiment_metadata(
        self, experiment_id: str, metadata: Mapping[str, Any]
    ) -> ExperimentRef:
        """Set the experiment's metadata to ``metadata`` as a whole."""
        body = {"metadata": dict(metadata)}
        path = f"/v1/experiments/{experiment_id}"
        updated = await self._http.call(ExperimentBodyWire, "PATCH", path, json=body)
        return self._experiment_ref(updated.data)

    async def shared_experiment(
        self,
        dataset: DatasetRef,
        *,
        key: str,
        name: str,
        description: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        settle: float = 2.0,
        repetitions: int = 1,
    ) -> tuple[ExperimentRef, bool]:
        """The one experiment of ``dataset`` that several processes of a run share.

        Found by ``key`` in its metadata, created by the first process; racing creators end on
        the oldest (see `stateval.upload._shared`). Returns it and whether this call created it.
        """
        return await shared_experiment(
            self,
            dataset,
            key=key,
            name=name,
            description=description,
            metadata=metadata,
            settle=settle,
            repetitions=repetitions,
        )

    async def delete_experiment(self, experiment_id: str) -> None:
        """Delete an experiment (and its runs and evaluations); gone already is fine."""
        await self._http.send("DELETE", f"/v1/experiments/{experiment_id}", accept=(404,))

    def experiment_url(self, dataset_id: str, experiment_id: str) -> str:
        """Where an experiment opens in the Phoenix UI."""
        return f"{self.base_url}/datasets/{dataset_id}/compare?experimentId={experiment_id}"

    def _experiment_ref(self, wire: ExperimentWire) -> ExperimentRef:
        return ExperimentRef(
            id=wire.id,
            name=wire.name,
            dataset_id=wire.dataset_id,
            dataset_version_id=wire.dataset_version_id,
            project_name=wire.project_name,
            url=self.experiment_url(wire.dataset_id, wire.id),
            metadata=wire.metadata,
        )

    # -- runs and evaluations ------------------------------------------------------------------

    async def post_run(self, experiment_id: str, run: RunRecord) -> str:
        """Record one run; returns its id.

        Posting a run the server already holds successfully for that example returns the
        existing run's id (nothing is recorded twice); a failed run is replaced.
        """
        path = f"/v1/experiments/{experiment_id}/runs"
        response = await self._http.send("POST", path, json=run.body(), accept=(409,))
        if response.status_code == 409:
            for stored in await self.list_runs(experiment_id):
                if (stored.example_id, stored.repetition) == (run.example_id, run.repetition):
                    return stored.id
            raise PhoenixUnavailableError(f"Phoenix at {self.base_url}: {response.text[:300]}")
        return parse(IdWire, response).data.id

    async def post_evaluation(self, evaluation: EvaluationRecord) -> str:
        """Record (or replace: one per run and name) one evaluation; returns its id."""
        posted = await self._http.call(
            IdWire, "POST", "/v1/experiment_evaluations", json=evaluation.body()
        )
        return posted.data.id

    async def post_runs(self, experiment_id: str, runs: Iterable[RunRecord]) -> list[str]:
        """Record many runs concurrently; ids in the order given."""
        return list(await asyncio.gather(*(self.post_run(experiment_id, r) for r in runs)))

    async def post_evaluations(self, evaluations: Iterable[EvaluationRecord]) -> list[str]:
        """Record many evaluations concurrently; ids in the order given."""
        return list(await asyncio.gather(*(self.post_evaluation(e) for e in evaluations)))

    async def post_span_annotations(
        self,
        records: Sequence[SpanAnnotationRecord],
        *,
        batch_size: int = 200,
        parallel: int = 2,
        ingest_timeout: float = 120.0,
        on_stored: Callable[[int], None] | None = None,
        queued_in: str | None = None,
    ) -> int:
        """Store span annotations in bulk, waiting for spans the server has not ingested yet.

        See `stateval.upload._annotations.post_span_annotations` (same arguments); returns how
        many were stored. With ``queued_in`` (the spans' project), the server's bulk inserter
        stores them instead, and they are read back from that project
        (`stateval.upload._queued.queue_span_annotations`; ``on_stored`` is not called).

        Raises:
            PhoenixUnavailableError: The server refused them, or some spans did not arrive
                within ``ingest_timeout`` seconds of the last one that did.
        """
        if queued_in is not None:
            return await queue_span_annotations(
                self._http, queued_in, records, parallel=parallel, ingest_timeout=ingest_timeout
            )
        return await post_span_annotations(
            self._http,
            records,
            batch_size=batch_size,
            parallel=parallel,
            ingest_timeout=ingest_timeout,
            on_stored=on_stored,
        )

    async def list_span_annotations(
        self, project: str, span_ids: Sequence[str], *, names: Sequence[str] = ()
    ) -> list[StoredSpanAnnotation]:
        """The annotations of ``span_ids`` in ``project`` (only ``names`` when given)."""
        listed = await read_annotations(self._http, project, "span", span_ids, names=names)
        return [StoredSpanAnnotation(span_id=a.span_id, **a.stored()) for a in listed]

    async def post_session_annotations(
        self,
        records: Sequence[SessionAnnotationRecord],
        *,
        batch_size: int = 200,
        parallel: int = 2,
        ingest_timeout: float = 120.0,
        on_stored: Callable[[int], None] | None = None,
    ) -> int:
        """Store session annotations in bulk, waiting for sessions whose spans the server has
        not ingested yet (see `post_span_annotations`); returns how many were stored.

        Raises:
            PhoenixUnavailableError: The server refused them, or no span of some sessions
                arrived within ``ingest_timeout`` seconds of the last one that did.
        """
        return await post_session_annotations(
            self._http,
            records,
            batch_size=batch_size,
            parallel=parallel,
            ingest_timeout=ingest_timeout,
            on_stored=on_stored,
        )

    async def list_session_annotations(
        self, project: str, session_ids: Sequence[str], *, names: Sequence[str] = ()
    ) -> list[StoredSessionAnnotation]:
        """The annotations of ``session_ids`` in ``project`` (only ``names`` when given)."""
        return await list_session_annotations(self._http, project, session_ids, names=names)

    async def list_sessions(self, project: str) -> list[StoredSession]:
        """Every session of ``project`` with its traces (none when there is no such project)."""
        return await list_sessions(self._http, project)

    async def list_span_notes(self, project: str, span_ids: Sequence[str]) -> list[StoredSpanNote]:
        """The notes on ``span_ids`` in ``project`` (see `stateval.upload._notes`)."""
        return await list_span_notes(self._http, project, span_ids)

    async def post_span_note(self, span_id: str, text: str) -> str:
        """Add a note to a span (as the REST API does); return its id."""
        return await post_span_note(self._http, span_id, text)

    def span_pages(
        self, project: str, where: SpanFilter | None = None, *, page_size: int = 500
    ) -> AsyncIterator[list[StoredSpan]]:
        """The spans of ``project`` that pass ``where``, a page at a time, in the order the
        server stored them (see `stateval.upload._spans`); none when there is no such project."""
        return iter_span_pages(self._http, project, where or SpanFilter(), page_size=page_size)

    async def list_runs(self, experiment_id: str) -> list[StoredRun]:
        """Every run of an experiment."""
        runs: list[StoredRun] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 1000}
            if cursor:
                params["cursor"] = cursor
            page = await self._http.call(
                RunListWire, "GET", f"/v1/experiments/{experiment_id}/runs", params=params
            )
            runs.extend(
                StoredRun(
                    id=r.id,
                    example_id=r.dataset_example_id,
                    output=r.output,
                    error=r.error,
                    trace_id=r.trace_id,
                    repetition=r.repetition_number,
                    start_time=r.start_time,
                    end_time=r.end_time,
                )
                for r in page.data
            )
            cursor = page.next_cursor
            if not cursor:
                return runs

    async def list_evaluations(self, experiment_id: str) -> list[StoredEvaluation]:
        """Every evaluation of an experiment, with the run it belongs to."""
        runs = await self.list_runs(experiment_id)
        run_ids = {(r.example_id, r.repetition): r.id for r in runs}
        exported = await self._http.call(ExportWire, "GET", f"/v1/experiments/{experiment_id}/json")
        return [
            StoredEvaluation(
                run_id=run_ids[(record.example_id, record.repetition_number)],
                example_id=record.example_id,
                name=a.name,
                annotator_kind=a.annotator_kind,
                score=a.score,
                label=a.label,
                explanation=a.explanation,
                error=a.error,
                metadata=a.metadata or {},
            )
            for record in exported.root
            if (record.example_id, record.repetition_number) in run_ids
            for a in record.annotations
        ]


def _stored_hash(stored: ExamplesWire) -> str:
    return content_hash([(e.id, e.input, e.output, e.metadata) for e in stored.data.examples])


def _dataset_ref(name: str, stored: ExamplesWire, digest: str, *, uploaded: bool) -> DatasetRef:
    example_ids = {e.id: e.node_id or e.id for e in stored.data.examples}
    return DatasetRef(
        id=stored.data.dataset_id,
        name=name,
        version_id=stored.data.version_id,
        example_ids=example_ids,
        content_hash=digest,
        uploaded=uploaded,
    )
