"""The MultiWOZ example run free-running into a real Phoenix: one session per dialogue, holding
its turns, scored with session annotations; read back over REST and on Phoenix's Sessions page."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from stateval.run import PhoenixTarget, start_journal
from stateval.suite import load_suite
from stateval.upload import PhoenixUploader, StoredSession, StoredSessionAnnotation, run_suite

pytestmark = pytest.mark.phoenix

SUITE = Path(__file__).resolve().parents[1] / "examples" / "multiwoz" / "suite.yaml"


@pytest.fixture
def example_modules() -> Iterator[None]:
    """Forget the example's modules afterwards (other tests import them their own way)."""
    yield
    for name in ("tracker", "lexicon", "slots"):
        sys.modules.pop(name, None)


def test_every_dialogue_of_the_slice_is_a_scored_session(
    tmp_path: Path, phoenix_url: str, chromium: tuple[str, list[str]], example_modules: None
) -> None:
    suite = load_suite(SUITE)
    project = f"multiwoz-sessions-{uuid.uuid4().hex[:8]}"
    names = dataclasses.replace(suite.phoenix, dataset=project, project=project)
    suite = dataclasses.replace(suite, phoenix=names)
    journal = start_journal(
        tmp_path / ".stateval",
        suite,
        phoenix_url=phoenix_url,
        mode="free_running",
        fields_as="annotations",
    )
    outcome = asyncio.run(
        run_suite(suite, journal, concurrency=4, phoenix=PhoenixTarget(phoenix_url))
    )
    assert outcome.upload is not None
    assert outcome.upload.error is None
    assert suite.episodes is not None
    dialogues = suite.episodes.index
    assert (len(dialogues), sum(map(len, dialogues.values()))) == (29, 213)
    assert (outcome.upload.episodes, outcome.upload.session_annotations) == (29, 116)
    run_id = journal.header.run_id

    async def read_back() -> tuple[list[StoredSession], list[StoredSessionAnnotation]]:
        async with PhoenixUploader(phoenix_url) as phoenix:
            listed = await phoenix.list_sessions(project)
            wanted = [f"{d}@{run_id}" for d in dialogues]
            return listed, await phoenix.list_session_annotations(project, wanted)

    listed, notes = asyncio.run(read_back())
    # one session per dialogue, holding one trace per turn: the turns' own traces
    turns = {f"{d}@{run_id}": len(ids) for d, ids in dialogues.items()}
    assert {s.session_id: len(s.trace_ids) for s in listed} == turns
    traces = {journal.results[c]["trace_id"] for ids in dialogues.values() for c in ids}
    assert {t for s in listed for t in s.trace_ids} == traces
    # the annotations say what the run's summary says
    summary = outcome.summary.episodes
    assert summary is not None
    by_name: dict[str, list[StoredSessionAnnotation]] = {}
    for note in notes:
        by_name.setdefault(note.name, []).append(note)
    assert {name: len(found) for name, found in by_name.items()} == {
        "episode_success": 29,
        "first_divergence_turn": 29,
        "episode_accuracy": 29,
        "retention_at_5": 29,
    }
    assert sum(n.score or 0 for n in by_name["episode_success"]) == summary.n_success
    divergence = Counter(
        int(n.score) for n in by_name["first_divergence_turn"] if n.score is not None
    )
    assert dict(divergence) == dict(summary.first_divergence)
    accuracy = sum(n.score or 0 for n in by_name["episode_accuracy"]) / 29
    assert accuracy == pytest.approx(summary.mean_episode_accuracy)
    assert all(n.metadata["mode"] == "free_running" for n in notes)
    # retention: the old fields the sessions count are the run's, and as often right
    assert summary.retention is not None
    old = [n for n in by_name["retention_at_5"] if n.score is not None]
    right_old = sum(n.score * int(n.explanation.split(" of ")[1].split()[0]) for n in old)
    assert sum(int(n.explanation.split(" of ")[1].split()[0]) for n in old) == (
        summary.retention.n_from(5)
    )
    assert right_old / summary.retention.n_from(5) == pytest.approx(
        summary.retention.accuracy_from(5)
    )
    # the experiment's metadata carries the curve, the matrix and their headline figures
    experiment = outcome.summary.experiment_url.split("experimentId=")[1]  # type: ignore[union-attr]
    meta = httpx.get(f"{phoenix_url}/v1/experiments/{experiment}", timeout=30).json()["data"][
        "metadata"
    ]
    assert meta["retention_at_5"] == pytest.approx(summary.retention.accuracy_from(5))
    assert [p["n"] for p in meta["retention"]["points"]] == [p.n for p in summary.retention.points]
    edits = outcome.summary.edits
    assert edits is not None
    assert meta["staleness_rate"] == pytest.approx(edits.pooled.staleness_rate)
    assert meta["edits"]["pooled"]["errors"] == dict(edits.pooled.errors)

    # Phoenix's Sessions page for the example's project counts the 29 dialogues.
    from playwright.sync_api import sync_playwright

    found = httpx.get(f"{phoenix_url}/v1/projects/{project}", timeout=30)
    project_id = found.json()["data"]["id"]
    executable, flags = chromium
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=flags)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            # REST above already lists the 29 sessions: wait for the page to show them, however
            # long a loaded machine takes to render it (no deadline)
            page.goto(f"{phoenix_url}/projects/{project_id}/sessions", timeout=0)
            page.wait_for_function(
                "() => /Total Sessions\\s*29\\b/.test(document.body.innerText)", timeout=0
            )
            shown = page.inner_text("body")
        finally:
            browser.close()
    assert f"@{run_id}" in shown
