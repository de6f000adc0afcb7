"""One experiment shared by racing processes, against a real Phoenix."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from stateval.upload import SHARED_KEY, Example, PhoenixUploader

pytestmark = pytest.mark.phoenix


async def test_racing_creators_end_on_one_experiment(phoenix_url: str) -> None:
    name = f"shared-{uuid.uuid4().hex[:8]}"
    examples = [Example(f"c{i}", {"q": i}, {}) for i in range(3)]
    async with PhoenixUploader(phoenix_url) as setup:
        dataset = await setup.ensure_dataset(name, examples)
        other = await setup.create_experiment(dataset, name="unrelated", metadata={"k": 1})

    async def claim() -> tuple[str, bool]:
        # Each claimant has its own connection pool, as separate processes would.
        async with PhoenixUploader(phoenix_url) as phoenix:
            experiment, created = await phoenix.shared_experiment(
                dataset, key="group-1", name=f"{name}-run", metadata={"suite": "s"}, settle=1.0
            )
            return experiment.id, created

    claims = await asyncio.gather(*(claim() for _ in range(4)))
    later, created_later = await claim()

    ids = {experiment_id for experiment_id, _ in claims}
    assert len(ids) == 1
    assert later in ids
    assert not created_later
    assert sum(created for _, created in claims) == 1
    async with PhoenixUploader(phoenix_url) as phoenix:
        left = await phoenix.list_experiments(dataset.id)
    keyed = [e for e in left if e.metadata.get(SHARED_KEY) == "group-1"]
    assert [e.id for e in keyed] == [later]
    assert keyed[0].metadata["suite"] == "s"
    assert keyed[0].name == f"{name}-run"
    assert other.id in {e.id for e in left}


@pytest.mark.parametrize(
    ("shards", "repetitions"), [(3, 1), (2, 3)], ids=["other-shards", "other-repeat"]
)
async def test_a_shard_of_another_layout_is_refused(
    phoenix_url: str, shards: int, repetitions: int
) -> None:
    from stateval.errors import UsageError

    name = f"layout-{uuid.uuid4().hex[:8]}"
    examples = [Example(f"c{i}", {"q": i}, {}) for i in range(3)]
    async with PhoenixUploader(phoenix_url) as phoenix:
        dataset = await phoenix.ensure_dataset(name, examples)
        first, _ = await phoenix.shared_experiment(
            dataset, key="g", name=name, metadata={"shards": 2, "repetitions": 1}, settle=0.2
        )
        with pytest.raises(UsageError) as info:
            await phoenix.shared_experiment(
                dataset,
                key="g",
                name=name,
                metadata={"shards": shards, "repetitions": repetitions},
                repetitions=repetitions,
                settle=0.2,
            )
        left = await phoenix.list_experiments(dataset.id)
    message = str(info.value)
    assert "\n" not in message
    assert "2 shard(s) with 1 repetition(s)" in message
    assert f"{shards} shard(s) with {repetitions} repetition(s)" in message
    assert [e.id for e in left if e.metadata.get(SHARED_KEY) == "g"] == [first.id]
