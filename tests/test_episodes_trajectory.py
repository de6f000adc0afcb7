"""Trajectory metrics on hand-made trajectories: episode scores (success, first divergence,
accuracy, error propagation, recovery, first wrong turn per field) and their running aggregates
(the per-turn curve, the first-divergence distribution, recovery rate, per-field figures), checked
against direct computations with hypothesis."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from stateval.episodes import TrajectoryTally, TurnRecord, episode_threshold_values, score_episode
from stateval.run import EpisodeScore
from stateval.suite import ThresholdsSpec

FIELDS = ("area", "day", "price")


def _turn(turn: int, wrong: set[str], *, ok: bool = True) -> TurnRecord:
    return TurnRecord(
        turn,
        f"e:{turn}",
        ok=ok,
        right=ok and not wrong,
        accuracy=1.0 - len(wrong) / 3,
        matching=3 - len(wrong),
        expected=3,
        wrong=frozenset(wrong),
    )


def test_a_stale_value_is_introduced_once_then_inherited_until_corrected() -> None:
    turns = [_turn(0, set()), _turn(1, {"area"}), _turn(2, {"area"}), _turn(3, set())]
    score = score_episode("e", "free_running", turns)
    assert isinstance(score, EpisodeScore)
    assert (score.success, score.first_divergence_turn, score.accuracy) == (False, 1, 0.5)
    assert (score.introduced, score.inherited, score.corrected) == (1, 1, 1)
    assert score.recovered
    assert score.final_right
    assert dict(score.first_wrong) == {"area": 1}


def test_an_episode_whose_every_turn_is_right_succeeds() -> None:
    score = score_episode("e", "teacher_forced", [_turn(3, set()), _turn(4, set())])
    assert (score.success, score.first_divergence_turn, score.accuracy, score.turns) == (
        True,
        None,
        1.0,
        2,
    )
    assert score.first_turn == 3
    assert not score.recovered


def test_a_failed_call_is_a_wrong_turn_and_an_error() -> None:
    turns = [_turn(0, set()), _turn(1, set(), ok=False)]
    score = score_episode("e", "free_running", turns)
    assert (score.success, score.first_divergence_turn, score.n_errors) == (False, 1, 1)


wrong_sets = st.sets(st.sampled_from(FIELDS))
trajectories = st.lists(st.tuples(wrong_sets, st.booleans()), min_size=1, max_size=8)


def _episode(steps: list[tuple[set[str], bool]]) -> list[TurnRecord]:
    return [_turn(i, wrong, ok=ok or bool(wrong)) for i, (wrong, ok) in enumerate(steps)]


@given(trajectories)
def test_episode_scores_match_their_definitions(steps: list[tuple[set[str], bool]]) -> None:
    turns = _episode(steps)
    score = score_episode("e", "free_running", turns)
    rights = [t.right for t in turns]
    assert score.success == all(rights)
    assert score.accuracy == sum(rights) / len(rights)
    expected_first = next((t.turn for t in turns if not t.right), None)
    assert score.first_divergence_turn == expected_first
    # every wrong field of a turn is inherited or introduced, never both
    assert score.inherited + score.introduced == sum(len(t.wrong) for t in turns)
    # starting from no errors: what was introduced and not corrected is wrong at the end
    assert score.introduced - score.corrected == len(turns[-1].wrong)
    for path, first in score.first_wrong.items():
        assert first == next(t.turn for t in turns if path in t.wrong)
    assert set(score.first_wrong) == set().union(*(t.wrong for t in turns))
    assert score.recovered == (
        expected_first is not None and any(t.right for t in turns if t.turn > expected_first)
    )


@given(st.lists(trajectories, min_size=1, max_size=6))
def test_the_aggregates_match_a_direct_computation(
    episodes: list[list[tuple[set[str], bool]]],
) -> None:
    tally = TrajectoryTally("free_running")
    all_turns = [_episode(steps) for steps in episodes]
    scores = [score_episode(f"e{i}", "free_running", t) for i, t in enumerate(all_turns)]
    for score, turns in zip(scores, all_turns, strict=True):
        tally.add(score, turns)
    summary = tally.summary()
    assert summary.n_episodes == len(episodes)
    assert summary.n_success == sum(s.success for s in scores)
    assert summary.episode_success == summary.n_success / len(episodes)
    assert sum(summary.first_divergence.values()) == summary.n_diverged
    for point in summary.turns:
        at = [t[point.turn] for t in all_turns if len(t) > point.turn]
        assert point.n == len(at)
        assert point.joint_goal_accuracy == sum(t.right for t in at) / len(at)
    assert summary.inherited == sum(s.inherited for s in scores)
    assert summary.introduced == sum(s.introduced for s in scores)
    assert summary.corrected == sum(s.corrected for s in scores)
    after_wrong = [b.right for t in all_turns for a, b in itertools.pairwise(t) if not a.right]
    assert summary.recovery_rate == (sum(after_wrong) / len(after_wrong) if after_wrong else None)
    for row in summary.fields:
        firsts = [s.first_wrong[row.path] for s in scores if row.path in s.first_wrong]
        assert row.episodes_wrong == len(firsts)
        assert row.mean_first_wrong == sum(firsts) / len(firsts)


def test_episode_thresholds_take_the_worst_turn_reached_by_enough_episodes() -> None:
    tally = TrajectoryTally("free_running")
    long = [_turn(0, set()), _turn(1, set()), _turn(2, {"area"})]
    short = [_turn(0, set()), _turn(1, {"day"})]
    for i, turns in enumerate([long, short, long[:2]]):
        tally.add(score_episode(f"e{i}", "free_running", turns), turns)
    summary = tally.summary()
    spec = ThresholdsSpec.model_validate(
        {"episode_success": 0.5, "per_turn": {"joint_goal_accuracy": 0.6, "min_episodes": 2}}
    )
    values = {
        name: (value, limit) for name, value, limit in episode_threshold_values(spec, summary)
    }
    assert values["episode_success"] == (1 / 3, 0.5)
    # turn 2 is reached by one episode only: turn 1 (2 of 3 right) is the worst checked
    assert values["per_turn[joint_goal_accuracy]"] == (2 / 3, 0.6)
