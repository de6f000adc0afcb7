"""One experiment shared by several processes (the shards of a run), created by whichever comes
first and found by the others.

Phoenix has no unique key on experiments, so two shards starting together may both create one.
Each process therefore looks for experiments on the dataset whose metadata carries the shared
key, creates one only if there is none, waits ``settle`` seconds (longer than the server takes to
commit an experiment: with PostgreSQL a lower id can commit after a higher one), looks again and
takes the **oldest** (lowest id). A process whose own experiment lost deletes it (nothing was
written to it yet), so every racing process ends on the same experiment and one is left.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from stateval.errors import PhoenixUnavailableError
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
    return winner, mine is not None and mine.id == winner.id


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
