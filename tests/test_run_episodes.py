"""Episodes in a run: each complete episode reaches every sink's ``submit_episode`` after its
last turn was journaled and submitted, with its score; a resumed run submits the episodes its
journal completes too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from episodes_fixture import episode_suite, track
from stateval import (
    Case,
    CaseScore,
    EpisodeScore,
    InterpretiveState,
    StructuredInput,
    run_suite,
    start_journal,
)
from stateval.run import AllSinks, Journal


class Collect:
    """A sink of one's own that takes cases and episodes, recording the order of both."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.episodes: dict[str, EpisodeScore] = {}
        self.journal: tuple[Path, str] | None = None  # (home, run id) of the run

    def submit(self, case: Case, score: CaseScore) -> None:
        self.events.append(("case", case.id))

    def submit_episode(self, episode: EpisodeScore) -> None:
        if self.journal is not None:  # every turn of it is durable in the journal
            on_disk = Journal.open(*self.journal)
            assert all(c in on_disk.results for c in episode.case_ids)
        self.events.append(("episode", episode.episode_id))
        self.episodes[episode.episode_id] = episode


class CasesOnly:
    def __init__(self) -> None:
        self.ids: list[str] = []

    def submit(self, case: Case, score: CaseScore) -> None:
        self.ids.append(case.id)


def test_every_episode_reaches_the_sink_after_its_last_turn_with_its_score(
    tmp_path: Path,
) -> None:
    suite = episode_suite(tmp_path)
    journal = start_journal(tmp_path / "home", suite)
    sink = Collect()
    sink.journal = (tmp_path / "home", journal.run_id)
    asyncio.run(run_suite(suite, journal, concurrency=3, sink=sink))
    assert sorted(sink.episodes) == ["d1", "d2"]
    for episode in sink.episodes.values():
        at = sink.events.index(("episode", episode.episode_id))
        cases_before = {c for kind, c in sink.events[:at] if kind == "case"}
        assert set(episode.case_ids) <= cases_before
    d1, d2 = sink.episodes["d1"], sink.episodes["d2"]
    assert (d1.mode, d1.turns, d1.success, d1.first_divergence_turn, d1.accuracy) == (
        "teacher_forced",
        3,
        True,
        None,
        1.0,
    )
    assert d1.case_ids == ("d1:0", "d1:1", "d1:2")
    # teacher-forced: turn 1 of d2 starts from the gold area, so only turn 0 is wrong
    assert (d2.success, d2.first_divergence_turn, d2.accuracy, d2.recovered) == (
        False,
        0,
        0.5,
        True,
    )
    assert dict(d2.first_wrong) == {"area": 0}


def test_all_sinks_hands_episodes_only_to_the_sinks_that_take_them(tmp_path: Path) -> None:
    suite = episode_suite(tmp_path)
    takes, plain = Collect(), CasesOnly()
    asyncio.run(
        run_suite(
            suite,
            start_journal(tmp_path / "home", suite),
            concurrency=2,
            sink=AllSinks((plain, takes)),
        )
    )
    assert sorted(takes.episodes) == ["d1", "d2"]
    assert sorted(plain.ids) == ["d1:0", "d1:1", "d1:2", "d2:0", "d2:1"]


def test_a_resumed_run_submits_the_episodes_its_journal_completes(tmp_path: Path) -> None:
    def interrupted(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        if input.prompt == "set price=high":  # d2's last turn
            raise KeyboardInterrupt
        return track(state, input)

    suite = episode_suite(tmp_path, mutator=interrupted)
    home = tmp_path / "home"
    journal = start_journal(home, suite)
    first = Collect()
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(run_suite(suite, journal, concurrency=1, sink=first))
    assert sorted(first.episodes) == ["d1"]

    second = Collect()
    again = episode_suite(tmp_path)
    outcome = asyncio.run(
        run_suite(again, Journal.open(home, journal.run_id), concurrency=1, sink=second)
    )
    assert outcome.summary.complete
    assert sorted(second.episodes) == ["d1", "d2"]
    assert second.episodes["d1"] == first.episodes["d1"]
