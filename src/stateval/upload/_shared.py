"""One experiment shared by several processes (the shards of a run), created by whichever comes
first and found by the others.

Phoenix has no unique key on experiments, so two shards starting together may both create one.
Each process therefore looks for experiments on the dataset whose metadata carries the shared
key, creates one only if there is none, waits ``settle`` seconds (longer than the server takes to
commit an experiment: with PostgreSQL a lower id can commit after a higher one), looks again and
takes the **oldest** (lowest id). A process whose own experiment lost deletes it (nothing was
written to it yet), so every racing process ends on the same experiment and one is left.

A process whose layout (``shards`` and ``repetitions`` in the metadata) differs from the
experiment's is refused: a ``--shard 1/3`` or a ``--repeat 3`` shard joining an experiment made by
2 shards with 1 repetition would mix runs that do not add up to one run.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from stateval.errors import PhoenixUnavailableError, UsageError
from stateval.upload._rest import DatasetRef, ExperimentRef


class ExperimentClient(Protocol):
    """What `shared_experiment` needs of the uploader (`PhoenixUploader` is one)."""

    @property
    def base_url(self) -> object:
        """The server."""
        ...

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
        """Create an experiment on ``dataset``."""
        ...

    async def list_experiments(self, dataset_id: str) -> list[ExperimentRef]:
        """Every experiment of a dataset."""
        ...

    async def delete_experiment(self, experiment_id: str) -> None:
        """Delete an experiment."""
        ...


__all__ = ["SHARED_KEY", "ExperimentClient", "shared_experiment"]

SHARED_KEY = "stateval_shared_run"
"""The experiment metadata key holding the key the processes of one run share."""


async def shared_experiment(
    uploader: ExperimentClient,
    dataset: DatasetRef,
    *,
    key: str,
    name: str,
    description: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    settle: float = 2.0,
    repetitions: int = 1,
) -> tuple[ExperimentRef, bool]:
    """The experiment of ``dataset`` whose metadata has ``SHARED_KEY: key``; created if none
    (with ``repetitions`` repetitions).

    Returns:
        The experiment, and whether this call created it.

    Raises:
        PhoenixUnavailableError: The server cannot be reached or refused a request.
    """
    mine: ExperimentRef | None = None
    if not await _keyed(uploader, dataset.id, key):
        mine = await uploader.create_experiment(
            dataset,
            name=name,
            description=description,
            metadata={**dict(metadata or {}), SHARED_KEY: key},
            repetitions=repetitions,
        )
    await asyncio.sleep(settle)
    found = await _keyed(uploader, dataset.id, key)
    if not found:
        raise PhoenixUnavailableError(
            f"Phoenix at {uploader.base_url}: the experiment of shared run {key} "
            f"on dataset {dataset.name!r} disappeared while it was being set up"
        )
    winner = min(found, key=_row_id)
    if mine is not None and mine.id != winner.id:
        await uploader.delete_experiment(mine.id)
    _check_layout(winner, key, metadata or {})
    return winner, mine is not None and mine.id == winner.id


_LAYOUT = ("shards", "repetitions")


def _layout(metadata: Mapping[str, Any]) -> str:
    shards, repetitions = (metadata.get(k, "?") for k in _LAYOUT)
    return f"{shards} shard(s) with {repetitions} repetition(s)"


def _check_layout(experiment: ExperimentRef, key: str, metadata: Mapping[str, Any]) -> None:
    """Refuse to join ``experiment`` with another shard and repetition layout."""
    theirs = experiment.metadata
    if any(k in metadata and k in theirs and metadata[k] != theirs[k] for k in _LAYOUT):
        raise UsageError(
            f"shared run {key}: its experiment {experiment.id} was made by {_layout(theirs)}, "
            f"this process is one of {_layout(metadata)}; give every shard the same --shard "
            "I/N and --repeat, or another --shard-group"
        )


async def _keyed(uploader: ExperimentClient, dataset_id: str, key: str) -> list[ExperimentRef]:
    return [
        e for e in await uploader.list_experiments(dataset_id) if e.metadata.get(SHARED_KEY) == key
    ]


def _row_id(experiment: ExperimentRef) -> tuple[int, str]:
    """Phoenix ids are base64 of ``Experiment:<row id>``; row ids grow with creation."""
    try:
        text = base64.b64decode(experiment.id, validate=True).decode()
        return int(text.rpartition(":")[2]), experiment.id
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return 2**63, experiment.id
