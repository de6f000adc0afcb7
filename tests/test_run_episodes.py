"""Episodes in a run: each complete episode reaches every sink's ``submit_episode`` after its
last turn was journaled and submitted, with its score; a resumed run submits the episodes its
journal completes too. Free-running runs: pre-state propagation, order, on_error policies,
resume in the middle of episodes, rescore."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episodes_fixture import episode_cases, episode_suite, track
from stateval import (
    Case,
    CaseResult,
    CaseScore,
    EpisodeScore,
    InterpretiveState,
    RunOutcome,
    StructuredInput,
    Suite,
    SuiteError,
    load_suite,
    rescore,
    run_suite,
    start_journal,
)
from stateval.run import AllSinks, Journal, rescored_tally


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


def _run(suite: Suite, home: Path, sink: object = None, **kwargs: Any) -> RunOutcome:
    journal = start_journal(home, suite, **kwargs)
    return asyncio.run(run_suite(suite, journal, concurrency=4, sink=sink))  # type: ignore[arg-type]


def test_free_running_feeds_each_turn_the_post_state_of_the_turn_before(tmp_path: Path) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def recording(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        seen.append((input.message_id, {p: state.best(p).value for p in state.paths()}))  # type: ignore[union-attr]
        return track(state, input)

    suite = episode_suite(tmp_path, mutator=recording)
    sink = Collect()
    outcome = _run(suite, tmp_path / "home", sink, mode="free_running")
    by_turn = dict(seen)
    # d2's first turn writes area "htuos": the next turn starts from it, not from the gold "south"
    assert by_turn["d2:1"] == {"area": "htuos"}
    assert by_turn["d1:2"] == {"area": "north", "price": "cheap"}
    # the turns of one episode ran in order
    order = [case_id for case_id, _ in seen]
    assert order.index("d1:0") < order.index("d1:1") < order.index("d1:2")
    assert order.index("d2:0") < order.index("d2:1")
    d2 = sink.episodes["d2"]
    assert (d2.mode, d2.success, d2.first_divergence_turn, d2.accuracy, d2.recovered) == (
        "free_running",
        False,
        0,
        0.0,
        False,
    )
    assert (d2.introduced, d2.inherited, d2.corrected) == (1, 1, 0)
    assert outcome.summary.episodes is not None
    assert outcome.summary.episodes.mode == "free_running"
    assert outcome.summary.episodes.episode_success == 0.5


def test_the_journal_records_the_pre_state_each_free_running_turn_was_given(
    tmp_path: Path,
) -> None:
    suite = episode_suite(tmp_path)
    outcome = _run(suite, tmp_path / "home", mode="free_running")
    journal = Journal.open(tmp_path / "home", outcome.journal.run_id)
    pre = CaseResult.from_dict(journal.results["d2:1"]).pre_state
    assert pre is not None
    assert pre.best("area").value == "htuos"  # type: ignore[union-attr]
    assert CaseResult.from_dict(journal.results["d2:0"]).pre_state is None  # its own
    # delta scores are taken against the pre-state used: from the carried "htuos", the area had
    # to change to "south" too, and did not (against the gold pre-state only the price changes)
    score = next(s for s in outcome.summary.cases if s.case_id == "d2:1")
    changed = score.evaluation("changed_fields_accuracy")
    assert changed is not None
    assert changed.score == 0.5
    rescored = rescore(suite, journal)
    again = next(s for s in rescored.cases if s.case_id == "d2:1")
    assert again.evaluation("changed_fields_accuracy") == changed


@pytest.mark.parametrize(
    ("on_error", "pre_of_last", "skipped"),
    [("skip", None, 1), ("carry", {"area": "north"}, 0)],
)
def test_a_failed_turn_skips_or_carries_the_last_good_state(
    tmp_path: Path, on_error: str, pre_of_last: dict[str, str] | None, skipped: int
) -> None:
    turns = {
        "d1": [
            ("set area=north", {"area": "north"}),
            ("fail", {"price": "cheap"}),
            ("set day=mon", {"day": "mon"}),
        ]
    }
    seen: dict[str, dict[str, Any]] = {}

    def recording(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        seen[input.message_id] = {p: state.best(p).value for p in state.paths()}  # type: ignore[union-attr]
        return track(state, input)

    suite = episode_suite(
        tmp_path, episode_cases(turns), mutator=recording, episodes={"on_error": on_error}
    )
    sink = Collect()
    outcome = _run(suite, tmp_path / "home", sink, mode="free_running")
    assert seen.get("d1:2") == pre_of_last
    d1 = sink.episodes["d1"]
    assert (d1.n_errors, d1.n_skipped) == (1 + skipped, skipped)
    assert outcome.summary.n_errors == 1 + skipped
    if skipped:
        result = CaseResult.from_dict(outcome.journal.results["d1:2"])
        assert result.error_type == "EpisodeSkipped"


def test_an_interrupted_free_running_run_resumes_each_episode_from_its_recorded_state(
    tmp_path: Path,
) -> None:
    turns = {
        "d1": [
            ("set area=north", {"area": "north"}),
            ("wrong price=cheap", {"price": "cheap"}),
            ("set day=mon", {"day": "mon"}),
            ("set stay=2", {"stay": "2"}),
        ],
        "d2": [("set area=east", {"area": "east"}), ("set price=high", {"price": "high"})],
    }
    calls: list[str] = []
    seen: dict[str, dict[str, Any]] = {}
    resumed = False

    def interrupted(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        if input.message_id == "d1:2" and not resumed:
            raise KeyboardInterrupt
        calls.append(input.message_id)
        seen[input.message_id] = {p: state.best(p).value for p in state.paths()}  # type: ignore[union-attr]
        return track(state, input)

    suite = episode_suite(tmp_path, episode_cases(turns), mutator=interrupted)
    home = tmp_path / "home"
    journal = start_journal(home, suite, mode="free_running")
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(run_suite(suite, journal, concurrency=1))
    on_disk = Journal.open(home, journal.run_id)
    assert {"d1:0", "d1:1"} <= set(on_disk.results)
    assert "d1:2" not in on_disk.results

    resumed = True
    calls.clear()
    sink = Collect()
    outcome = asyncio.run(
        run_suite(suite, Journal.open(home, journal.run_id), concurrency=2, sink=sink)
    )
    assert outcome.summary.complete
    assert "d1:0" not in calls
    assert "d1:1" not in calls
    # turn 2 starts from the state turn 1 journaled (with its wrong price), not the gold one
    assert seen["d1:2"] == {"area": "north", "price": "paehc"}
    assert seen["d1:3"] == {"area": "north", "price": "paehc", "day": "mon"}
    assert sorted(sink.episodes) == ["d1", "d2"]
    assert sink.episodes["d1"].first_divergence_turn == 1
    assert sink.episodes["d1"].inherited == 2  # the wrong price carried into turns 2 and 3


def test_rescore_recomputes_the_trajectory_metrics_from_the_journal(tmp_path: Path) -> None:
    suite = episode_suite(tmp_path)
    outcome = _run(suite, tmp_path / "home", mode="free_running")
    again = rescore(suite, Journal.open(tmp_path / "home", outcome.journal.run_id))
    assert again.episodes == outcome.summary.episodes
    # under a looser policy the reversed area counts as right: the episode succeeds now
    loose = episode_suite(tmp_path, policies={"area": {"ignore": True}})
    relaxed = rescore(loose, Journal.open(tmp_path / "home", outcome.journal.run_id))
    assert relaxed.episodes is not None
    assert relaxed.episodes.mode == "free_running"
    assert relaxed.episodes.episode_success == 1.0


def test_free_running_without_episodes_is_one_clear_error(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "plain.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "mutator": {"type": "python", "callable": "builtins:print"},
                "cases": {
                    "inline": [
                        {"id": "a", "input": {"prompt": "x"}, "expected_post_state": {"k": "v"}}
                    ]
                },
            }
        )
    )
    plain = load_suite(path, load_mutator=False)
    with pytest.raises(SuiteError, match="free-running mode needs episodes"):
        start_journal(tmp_path / "home", plain, mode="free_running")


def test_rescoring_hands_on_each_episode_after_its_last_turn(tmp_path: Path) -> None:
    suite = episode_suite(tmp_path)
    outcome = _run(suite, tmp_path / "home", mode="free_running")
    events: list[str] = []
    rescored_tally(
        suite,
        Journal.open(tmp_path / "home", outcome.journal.run_id),
        lambda score: events.append(score.case_id),
        lambda episode: events.append(episode.episode_id),
    )
    assert events == ["d1:0", "d1:1", "d1:2", "d1", "d2:0", "d2:1", "d2"]


def test_shards_hold_whole_episodes_and_each_mode_its_own_shared_run(tmp_path: Path) -> None:
    from stateval.run import Shard

    suite = episode_suite(tmp_path)
    home = tmp_path / "home"
    planned = [
        start_journal(home, suite, shard=Shard(i, 2), mode="free_running").header for i in (1, 2)
    ]
    held = [set(h.case_ids) for h in planned]
    assert held[0] | held[1] == {c.id for c in suite.cases}
    turns = {e: {c.id for c in suite.cases if c.episode_id == e} for e in ("d1", "d2")}
    for ids in held:  # an episode's turns are all in one shard, or none of them
        assert all(t <= ids or not t & ids for t in turns.values())
    forced = start_journal(home, suite, shard=Shard(1, 2), mode="teacher_forced").header
    assert forced.shared_run != planned[0].shared_run
    assert planned[0].shared_run == planned[1].shared_run


steps = st.lists(
    st.tuples(st.sampled_from(["set", "wrong"]), st.sampled_from(["area", "day", "price"])),
    min_size=1,
    max_size=4,
)


@settings(max_examples=15, deadline=None)
@given(st.lists(steps, min_size=1, max_size=3))
def test_both_modes_agree_until_an_episode_first_goes_wrong(
    episodes: list[list[tuple[str, str]]],
) -> None:
    turns = {
        f"e{i}": [(f"{verb} {key}=v{t}", {key: f"v{t}"}) for t, (verb, key) in enumerate(ep)]
        for i, ep in enumerate(episodes)
    }
    with tempfile.TemporaryDirectory() as folder:
        suite = episode_suite(Path(folder), episode_cases(turns))
        scored: dict[str, dict[str, EpisodeScore]] = {}
        for mode in ("teacher_forced", "free_running"):
            sink = Collect()
            _run(suite, Path(folder) / "home", sink, mode=mode)
            scored[mode] = sink.episodes
    forced, free = scored["teacher_forced"], scored["free_running"]
    assert sorted(forced) == sorted(free) == sorted(turns)
    for episode in turns:
        a, b = forced[episode], free[episode]
        assert (a.success, a.first_divergence_turn) == (b.success, b.first_divergence_turn)
        assert b.accuracy <= a.accuracy  # a turn right free-running is right teacher-forced
