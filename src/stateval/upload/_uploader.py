"""A fast asynchronous client for the Phoenix REST endpoints a stateval run writes to.

One `httpx.AsyncClient` (HTTP keep-alive) carries every request; a semaphore bounds how many are
in flight; connection errors, 5xx and 429 are retried with exponential backoff before a
`PhoenixUnavailableError`. Phoenix has no bulk endpoint for experiment runs or evaluations, so the
speed comes from keeping enough requests in flight to keep the (CPU-bound) server busy.

Endpoints used (as served by Phoenix 20.26):
    ``GET  /v1/datasets?name=``, ``POST /v1/datasets/upload?sync=true`` (action ``update``,
    ``example_ids``), ``GET /v1/datasets/{id}/examples``, ``POST /v1/datasets/{id}/experiments``,
    ``GET /v1/experiments/{id}``, ``PATCH /v1/experiments/{id}`` (metadata),
    ``POST /v1/experiments/{id}/runs``,
    ``GET /v1/experiments/{id}/runs``, ``POST /v1/experiment_evaluations``,
    ``GET /v1/experiments/{id}/json``.

Example:
    >>> async def upload(url: str) -> None:   # doctest: +SKIP
    ...     async with PhoenixUploader(url) as phoenix:
    ...         dataset = await phoenix.ensure_dataset("forms", [Example("c1", {"q": 1}, {})])
    ...         experiment = await phoenix.create_experiment(dataset, name="run 1")
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from stateval.errors import DatasetError, PhoenixUnavailableError
from stateval.upload._rest import (
    DatasetListWire,
    DatasetRef,
    EvaluationRecord,
    Example,
    ExamplesWire,
    ExperimentBodyWire,
    ExperimentRef,
    ExperimentWire,
    ExportWire,
    IdWire,
    RunListWire,
    RunRecord,
    StoredEvaluation,
    StoredRun,
    UploadWire,
    content_hash,
)

__all__ = ["PhoenixUploader"]

_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_Model = TypeVar("_Model", bound=BaseModel)


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
        self.base_url = base_url.rstrip("/")
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
            limits=httpx.Limits(
                max_connections=max_concurrency, max_keepalive_connections=max_concurrency
            ),
        )
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._retries = retries
        self._backoff = backoff

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
        await self._client.aclose()

    # -- datasets ------------------------------------------------------------------------------

    async def ensure_dataset(
        self, name: str, examples: Sequence[Example], *, description: str | None = None
    ) -> DatasetRef:
        """Make dataset ``name`` hold exactly ``examples``; upload only if its content differs.

        A new dataset is created; an existing one whose latest version already has these ids and
        contents is left alone (nothing is sent); otherwise a new version is added in which
        changed examples are updated, new ones created and missing ones removed.

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
        existing = await self._find_dataset(name)
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
        uploaded = await self._call(
            UploadWire, "POST", "/v1/datasets/upload", json=body, params={"sync": "true"}
        )
        stored = await self._examples(uploaded.data.dataset_id, uploaded.data.version_id)
        return _dataset_ref(name, stored, local_hash, uploaded=True)

    async def _find_dataset(self, name: str) -> str | None:
        found = await self._call(DatasetListWire, "GET", "/v1/datasets", params={"name": name})
        return next((d.id for d in found.data if d.name == name), None)

    async def _examples(self, dataset_id: str, version_id: str | None = None) -> ExamplesWire:
        params = {"version_id": version_id} if version_id else None
        return await self._call(
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
    ) -> ExperimentRef:
        """Create an experiment (one repetition) over ``dataset``'s version."""
        body: dict[str, Any] = {
            "name": name,
            "repetitions": 1,
            "version_id": dataset.version_id,
            "metadata": dict(metadata or {}),
        }
        if description:
            body["description"] = description
        created = await self._call(
            ExperimentBodyWire, "POST", f"/v1/datasets/{dataset.id}/experiments", json=body
        )
        return self._experiment_ref(created.data)

    async def get_experiment(self, experiment_id: str) -> ExperimentRef:
        """Fetch an existing experiment (to resume it)."""
        found = await self._call(ExperimentBodyWire, "GET", f"/v1/experiments/{experiment_id}")
        return self._experiment_ref(found.data)

    async def update_experiment_metadata(
        self, experiment_id: str, metadata: Mapping[str, Any]
    ) -> ExperimentRef:
        """Merge ``metadata`` into the experiment's metadata (``PATCH /v1/experiments/{id}``
        replaces it as a whole, so the current one is read first)."""
        current = await self.get_experiment(experiment_id)
        body = {"metadata": {**current.metadata, **metadata}}
        path = f"/v1/experiments/{experiment_id}"
        updated = await self._call(ExperimentBodyWire, "PATCH", path, json=body)
        return self._experiment_ref(updated.data)

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
        response = await self._send("POST", path, json=run.body(), accept=(409,))
        if response.status_code == 409:
            for stored in await self.list_runs(experiment_id):
                if (stored.example_id, stored.repetition) == (run.example_id, run.repetition):
                    return stored.id
            raise PhoenixUnavailableError(f"Phoenix at {self.base_url}: {response.text[:300]}")
        return _parse(IdWire, response).data.id

    async def post_evaluation(self, evaluation: EvaluationRecord) -> str:
        """Record (or replace: one per run and name) one evaluation; returns its id."""
        posted = await self._call(
            IdWire, "POST", "/v1/experiment_evaluations", json=evaluation.body()
        )
        return posted.data.id

    async def post_runs(self, experiment_id: str, runs: Iterable[RunRecord]) -> list[str]:
        """Record many runs concurrently; ids in the order given."""
        return list(await asyncio.gather(*(self.post_run(experiment_id, r) for r in runs)))

    async def post_evaluations(self, evaluations: Iterable[EvaluationRecord]) -> list[str]:
        """Record many evaluations concurrently; ids in the order given."""
        return list(await asyncio.gather(*(self.post_evaluation(e) for e in evaluations)))

    async def list_runs(self, experiment_id: str) -> list[StoredRun]:
        """Every run of an experiment."""
        runs: list[StoredRun] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 1000}
            if cursor:
                params["cursor"] = cursor
            page = await self._call(
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
        exported = await self._call(ExportWire, "GET", f"/v1/experiments/{experiment_id}/json")
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

    # -- transport -----------------------------------------------------------------------------

    async def _call(
        self,
        model: type[_Model],
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> _Model:
        return _parse(model, await self._send(method, path, json=json, params=params))

    async def _send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        accept: tuple[int, ...] = (),
    ) -> httpx.Response:
        delay = self._backoff
        problem = ""
        for attempt in range(self._retries + 1):
            if attempt:
                await asyncio.sleep(delay * (1 + random.random() / 4))
                delay = min(delay * 2, 8.0)
            async with self._semaphore:
                try:
                    response = await self._client.request(method, path, json=json, params=params)
                except httpx.TransportError as exc:
                    problem = f"{type(exc).__name__}: {exc}".rstrip(": ")
                    continue
            if response.status_code < 400 or response.status_code in accept:
                return response
            if response.status_code not in _RETRY_STATUS:
                raise PhoenixUnavailableError(
                    f"Phoenix at {self.base_url} refused {method} {path}: "
                    f"HTTP {response.status_code} {response.text[:300]}"
                )
            problem = f"HTTP {response.status_code}"
            retry_after = response.headers.get("retry-after", "")
            if retry_after.isdigit():
                delay = max(delay, float(retry_after))
        raise PhoenixUnavailableError(
            f"Phoenix at {self.base_url} unavailable: {method} {path} failed "
            f"{self._retries + 1} times ({problem})"
        )


def _parse(model: type[_Model], response: httpx.Response) -> _Model:
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        raise PhoenixUnavailableError(
            f"Phoenix gave an unexpected answer to {response.request.method} "
            f"{response.url.path}: {str(exc).splitlines()[0]}"
        ) from exc


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
