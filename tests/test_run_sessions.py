"""Episodes in Phoenix: turns traced into their episode's session, episode scores stored as
session annotations, read back from a real Phoenix over REST."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import re
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from stateval.mutators import PythonMutator, StructuredInput
from stateval.run import Journal, PhoenixTarget, UploadStatus, start_journal
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import Suite, load_suite
from stateval.upload import (
    PhoenixUploader,
    StoredSession,
    StoredSessionAnnotation,
    rescore_to_phoenix,
    run_suite,
)

pytestmark = pytest.mark.phoenix

# Two conversations: "a" books for Ada in Paris over two turns, "b" for Bob over three, the last
# of which the tracker misses ("moved to" is not a phrase it knows).
TURNS = [
    ("a", 0, "I am Ada", {"user.name": "Ada"}),
    ("a", 1, "I live in Paris", {"user.name": "Ada", "user.city": "Paris"}),
    ("b", 0, "I am Bob", {"user.name": "Bob"}),
    ("b", 1, "I live in Rome", {"user.name": "Bob", "user.city": "Rome"}),
    ("b", 2, "I moved to Oslo", {"user.name": "Bob", "user.city": "Oslo"}),
]


Tracker = Callable[[InterpretiveState, StructuredInput], InterpretiveState]


def _tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    out = state.copy()
    words = input.prompt.split()
    if "am" in words:
        out.set_value("user.name", ValueConfidence(words[words.index("am") + 1], 1.0))
    if "in" in words:
        out.set_value("user.city", ValueConfidence(words[words.index("in") + 1], 1.0))
    return out


def _suite(
    tmp_path: Path,
    project: str,
    tracker: Callable[[InterpretiveState, StructuredInput], InterpretiveState] = _tracker,
) -> Suite:
    cases = []
    previous: dict[str, dict[str, str]] = {}
    for episode, turn, prompt, expected in TURNS:
        cases.append(
            {
                "id": f"{episode}-{turn}",
                "pre_state": previous.get(episode, {}),
                "input": {"prompt": prompt},
                "expected_post_state": expected,
                "metadata": {"dialogue": episode, "turn": turn},
            }
        )
        previous[episode] = expected
    data = {
        "name": "bookings",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": cases},
        "episodes": {"by": "metadata.dialogue", "order": "metadata.turn"},
        "phoenix": {"dataset": f"bookings-{uuid.uuid4().hex[:8]}", "project": project},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    suite = load_suite(path, load_mutator=False)
    return dataclasses.replace(suite, mutator=PythonMutator(tracker))


def _run(suite: Suite, journal: Journal, url: str) -> UploadStatus:
    outcome = asyncio.run(run_suite(suite, journal, concurrency=2, phoenix=PhoenixTarget(url)))
    assert outcome.upload is not None
    assert outcome.upload.error is None
    return outcome.upload


def test_each_episode_is_a_phoenix_session_holding_its_turns_and_its_scores(
    tmp_path: Path, phoenix_url: str, chromium: tuple[str, list[str]]
) -> None:
    project = f"bookings-{uuid.uuid4().hex[:8]}"
    suite = _suite(tmp_path, project)
    journal = start_journal(tmp_path / ".stateval", suite, phoenix_url=phoenix_url)
    target = PhoenixTarget(phoenix_url)
    status = _run(suite, journal, phoenix_url)
    # per episode: episode_success, first_divergence_turn, episode_accuracy, retention_at_5
    assert (status.episodes, status.session_annotations) == (2, 8)
    run_id = journal.header.run_id
    sessions = {"a": f"a@{run_id}", "b": f"b@{run_id}"}
    trace_of = {case_id: journal.results[case_id]["trace_id"] for case_id in journal.results}

    async def read_back() -> tuple[list[StoredSession], list[StoredSessionAnnotation]]:
        async with PhoenixUploader(phoenix_url) as phoenix:
            listed = await phoenix.list_sessions(project)
            notes = await phoenix.list_session_annotations(project, list(sessions.values()))
        return listed, notes

    listed, notes = asyncio.run(read_back())
    # Every turn's trace is in its episode's session, and nothing else is.
    held = {s.session_id: set(s.trace_ids) for s in listed}
    assert held == {
        sessions["a"]: {trace_of["a-0"], trace_of["a-1"]},
        sessions["b"]: {trace_of["b-0"], trace_of["b-1"], trace_of["b-2"]},
    }
    got = {(n.session_id, n.name): n for n in notes}
    assert len(got) == len(notes) == 8
    assert {name for _, name in got} == {
        "episode_success",
        "first_divergence_turn",
        "episode_accuracy",
        "retention_at_5",
    }
    experiment = journal.ack("experiment")
    assert experiment is not None
    success_b = got[(sessions["b"], "episode_success")]
    assert (success_b.score, success_b.label) == (0.0, "failure")
    assert success_b.identifier == experiment["experiment_id"]
    assert success_b.explanation == "turn 2 is the first of 3 that is wrong (teacher_forced)"
    assert success_b.metadata == {
        "episode_id": "b",
        "run": run_id,
        "mode": "teacher_forced",
        "turns": 3,
        "mean_state_accuracy": pytest.approx(5 / 6),
        "n_errors": 0,
    }
    divergence_b = got[(sessions["b"], "first_divergence_turn")]
    assert (divergence_b.score, divergence_b.label) == (2.0, "turn 2")
    accuracy_b = got[(sessions["b"], "episode_accuracy")]
    assert accuracy_b.score == pytest.approx(2 / 3)
    assert accuracy_b.explanation == "2 of its 3 turn(s) right (teacher_forced)"
    success_a = got[(sessions["a"], "episode_success")]
    assert (success_a.score, success_a.label) == (1.0, "success")
    divergence_a = got[(sessions["a"], "first_divergence_turn")]
    assert (divergence_a.score, divergence_a.label) == (None, "none")

    # Resumed: the runner hands the journal's complete episodes to the sink again; they were
    # acknowledged, so nothing is sent twice.
    again = _run(suite, Journal.open(tmp_path / ".stateval", run_id), phoenix_url)
    assert (again.episodes, again.session_annotations) == (0, 0)
    assert len(asyncio.run(read_back())[1]) == 8

    # A rescoring annotates the same sessions under its own experiment, beside the original.
    rescored = asyncio.run(
        rescore_to_phoenix(suite, Journal.open(tmp_path / ".stateval", run_id), target)
    )
    assert rescored.upload is not None
    assert (rescored.upload.error, rescored.upload.episodes) == (None, 2)
    notes = asyncio.run(read_back())[1]
    by_experiment = Counter(n.identifier for n in notes)
    assert len(by_experiment) == 2
    assert set(by_experiment.values()) == {8}
    assert experiment["experiment_id"] in by_experiment

    # Phoenix's own Sessions page for the project lists both episodes with their annotations.
    want = [*sessions.values(), "episode_success", "first_divergence_turn", "episode_accuracy"]
    shown = _sessions_page(phoenix_url, project, chromium, want)
    assert all(text in shown for text in want)
    assert f"b@{run_id}" in shown.split("\n")  # a row's session id cell, in full


def _mishearing_tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    """Hears "Bob" as "Rob": wrong at b's first turn in both modes, and at its second only when
    it runs on its own state (free-running), where the wrong name is carried forward."""
    return _tracker(state, dataclasses.replace(input, prompt=input.prompt.replace("Bob", "Rob")))


MODE_IS = 'metadata["mode"] == "{}"'
RUN_IS = 'metadata["run"] == "{}"'


def test_a_person_tells_the_runs_and_modes_of_episode_sessions_apart(
    tmp_path: Path, phoenix_url: str, chromium: tuple[str, list[str]]
) -> None:
    """Both modes of a suite in one project: Phoenix's Sessions page averages annotations by
    name over the sessions it lists, so each session's turns carry their run and mode in their
    metadata, which its session filter reads; the annotations carry them too."""
    project = f"bookings-{uuid.uuid4().hex[:8]}"
    suite = _suite(tmp_path, project, _mishearing_tracker)
    runs = {}
    for mode in ("teacher_forced", "free_running"):
        journal = start_journal(tmp_path / ".stateval", suite, phoenix_url=phoenix_url, mode=mode)
        assert _run(suite, journal, phoenix_url).session_annotations == 8
        runs[mode] = journal.header.run_id
    # episode_accuracy: a is right throughout; b is right at 1 of 3 turns teacher-forced, at
    # none free-running (its misheard name carried on).
    means = {"teacher_forced": (1 + 1 / 3) / 2, "free_running": (1 + 0) / 2}
    sessions = {mode: [f"a@{run}", f"b@{run}"] for mode, run in runs.items()}

    async def read_back() -> list[StoredSessionAnnotation]:
        async with PhoenixUploader(phoenix_url) as phoenix:
            every = [s for ids in sessions.values() for s in ids]
            return await phoenix.list_session_annotations(project, every)

    notes = asyncio.run(read_back())
    assert len(notes) == 16
    for note in notes:  # each annotation says which run and mode it scores
        mode = next(m for m, ids in sessions.items() if note.session_id in ids)
        assert note.metadata["run"] == runs[mode]
        assert note.metadata["mode"] == mode
        assert note.explanation is not None
        assert note.explanation.endswith(f"({mode})")
    accuracy = {
        mode: sorted(
            n.score or 0.0
            for n in notes
            if n.name == "episode_accuracy" and n.session_id in sessions[mode]
        )
        for mode in sessions
    }
    assert accuracy == {
        "teacher_forced": [pytest.approx(1 / 3), 1.0],
        "free_running": [0.0, 1.0],
    }

    # What the Sessions page's aside shows: the mean over the sessions its filter keeps.
    project_id = httpx.get(f"{phoenix_url}/v1/projects/{project}", timeout=30).json()["data"]["id"]
    shown = {
        condition: _page_mean(phoenix_url, project_id, "episode_accuracy", condition)
        for condition in (None, *(MODE_IS.format(m) for m in runs))
    }
    assert shown[None] == pytest.approx((sum(means.values()) / 2, 4))  # every run and mode
    for mode, mean in means.items():
        assert shown[MODE_IS.format(mode)] == pytest.approx((mean, 2))
        assert _page_mean(
            phoenix_url, project_id, "episode_accuracy", RUN_IS.format(runs[mode])
        ) == pytest.approx((mean, 2))

    # The page itself, filtered on the mode as a person types it: that mode's sessions only,
    # and the aside's mean is theirs (unfiltered, it is the mean over both modes).
    every = [s for ids in sessions.values() for s in ids]
    for mode, other in (("free_running", "teacher_forced"), ("teacher_forced", "free_running")):
        text = _sessions_page(
            phoenix_url, project, chromium, every, condition=MODE_IS.format(mode), every=every
        )
        rows = [line.strip() for line in text.split("\n")]
        assert all(session in rows for session in sessions[mode])
        assert not any(session in rows for session in sessions[other])
        assert "Matching Sessions\n2" in text
        shown_mean = f"{math.floor(means[mode] * 100) / 100:.2f}"  # the page cuts to 2 places
        assert f"episode_accuracy\nμ\xa0{shown_mean}" in text  # after a no-break space


def _page_mean(
    url: str, project_id: str, name: str, condition: str | None
) -> tuple[float | None, int]:
    """The mean score and the count of annotation ``name`` Phoenix's Sessions page shows in its
    aside for the sessions ``condition`` keeps (the page's own GraphQL field)."""
    query = """
        query ($id: ID!, $name: String!, $condition: String) {
          node(id: $id) {
            ... on Project {
              sessionAnnotationSummary(annotationName: $name, sessionFilterCondition: $condition) {
                meanScore
                count
              }
            }
          }
        }
    """
    variables = {"id": project_id, "name": name, "condition": condition}
    body = httpx.post(f"{url}/graphql", json={"query": query, "variables": variables}, timeout=60)
    body.raise_for_status()
    payload = body.json()
    assert "errors" not in payload, payload
    summary = payload["data"]["node"]["sessionAnnotationSummary"]
    return summary["meanScore"], summary["count"]


def _sessions_page(
    url: str,
    project: str,
    chromium: tuple[str, list[str]],
    want: list[str],
    *,
    condition: str | None = None,
    every: list[str] = [],  # noqa: B006 - read only
) -> str:
    """The text of the Sessions tab of ``project`` in Phoenix's UI, once it shows every text
    in ``want`` (the table and the annotation summaries load one after the other); with
    ``condition``, filtered on it as a person types it in the tab's filter box, once the table
    lists as many of the sessions ``every`` as the tab says match."""
    from playwright.sync_api import sync_playwright

    project_id = httpx.get(f"{url}/v1/projects/{project}", timeout=30).json()["data"]["id"]
    executable, flags = chromium
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=flags)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{url}/projects/{project_id}/sessions", timeout=0)
            page.wait_for_function(  # until the page lists them, however long that takes
                "want => want.every(id => document.body.innerText.includes(id))",
                arg=want,
                timeout=0,
            )
            if condition is not None:
                _type_filter(page, condition, every)
            return page.inner_text("body")
        finally:
            browser.close()


# The filtered table and its "Matching Sessions" count agree (both reloaded after the filter).
_FILTERED = """every => {
    const text = document.body.innerText;
    const matching = text.match(/Matching Sessions\\s+(\\d+)/);
    const rows = text.split("\\n").filter(line => every.includes(line.trim()));
    return matching !== null && rows.length === Number(matching[1]);
}"""


def _type_filter(page: Any, condition: str, every: list[str]) -> None:
    """Type ``condition`` into the Sessions tab's filter box and wait until it applies."""
    editor = page.locator(".cm-content").first
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(condition)
    page.keyboard.press("Escape")  # an open completion list would take the Enter
    assert editor.inner_text() == condition
    page.keyboard.press("Enter")
    page.wait_for_function(_FILTERED, arg=every, timeout=0)


TRACKER = """
from stateval import ValueConfidence


def track(state, input):
    out = state.copy()
    words = input.prompt.split()
    if "am" in words:
        out.set_value("user.name", ValueConfidence(words[words.index("am") + 1], 1.0))
    if "in" in words:
        out.set_value("user.city", ValueConfidence(words[words.index("in") + 1], 1.0))
    return out
"""


def test_stateval_run_says_how_many_episodes_were_scored_on_their_sessions(
    tmp_path: Path, phoenix_url: str
) -> None:
    import os
    import subprocess
    import sys

    project = f"bookings-{uuid.uuid4().hex[:8]}"
    suite = yaml.safe_load(_suite(tmp_path, project).path.read_text())
    suite["mutator"] = {"type": "python", "callable": "bookings_tracker_mod:track"}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    (tmp_path / "bookings_tracker_mod.py").write_text(TRACKER)
    env = {**os.environ, "STATEVAL_HOME": str(tmp_path / "home"), "PYTHONPATH": str(tmp_path)}
    stateval = str(Path(sys.executable).with_name("stateval"))
    done = subprocess.run(
        [stateval, "run", "suite.yaml", "--phoenix-url", phoenix_url, "--mode", "free_running"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    out = " ".join(done.stdout.split())
    assert "Phoenix: 5 of 5 cases delivered" in out
    assert "2 episode(s) scored on their sessions (8 session annotation(s); " in out
    # the Sessions tab's filter for this run, as printed: it keeps the run's two sessions
    found = re.search(r'Sessions tab filter for this run: (metadata\["run"\] == "[^"]+")', out)
    assert found is not None, out
    project_id = httpx.get(f"{phoenix_url}/v1/projects/{project}", timeout=30).json()["data"]["id"]
    assert _page_mean(phoenix_url, project_id, "episode_success", found[1])[1] == 2
