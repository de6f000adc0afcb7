"""A free-running run of a suite with ``episodes:`` reported to a real Phoenix: the runner hands
each finished episode to the Phoenix sink, whose session annotations are read back over REST."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from pathlib import Path

import pytest

from episodes_fixture import episode_suite
from stateval.run import PhoenixTarget, start_journal
from stateval.upload import PhoenixUploader, run_suite

pytestmark = pytest.mark.phoenix


def test_a_free_running_run_annotates_each_episode_session(
    tmp_path: Path, phoenix_url: str
) -> None:
    suite = episode_suite(tmp_path)
    project = f"episodes-{uuid.uuid4().hex[:8]}"
    names = dataclasses.replace(suite.phoenix, dataset=project, project=project)
    suite = dataclasses.replace(suite, phoenix=names)
    journal = start_journal(
        tmp_path / ".stateval", suite, phoenix_url=phoenix_url, mode="free_running"
    )
    outcome = asyncio.run(
        run_suite(suite, journal, concurrency=2, phoenix=PhoenixTarget(phoenix_url))
    )
    assert outcome.upload is not None
    assert outcome.upload.error is None
    sessions = {e: f"{e}@{journal.run_id}" for e in ("d1", "d2")}

    async def read_back() -> dict[tuple[str, str], tuple[float | None, str | None]]:
        async with PhoenixUploader(phoenix_url) as phoenix:
            notes = await phoenix.list_session_annotations(project, list(sessions.values()))
        return {(n.session_id, n.name): (n.score, n.label) for n in notes}

    got = asyncio.run(read_back())
    assert got[(sessions["d1"], "episode_success")] == (1.0, "success")
    assert got[(sessions["d2"], "episode_success")] == (0.0, "failure")
    assert got[(sessions["d2"], "first_divergence_turn")] == (0.0, "turn 0")
    # free-running: d2's wrong area is carried into its second turn, so neither turn is right
    assert got[(sessions["d2"], "episode_accuracy")][0] == 0.0
