"""Mutation testing of a suite of episodes: the episode-aware operator, and episode thresholds
(``episode_success``, ``per_turn``) taking part in kills."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from episodes_fixture import episode_cases, episode_suite
from stateval.mutation import MutantResult, MutationConfig, MutationReport, run_mutation

# d1 moves its area from north to south, then adds a day; d2 never touches the area.
TURNS = {
    "d1": [
        ("set area=north", {"area": "north"}),
        ("set area=south", {"area": "south"}),
        ("set day=mon", {"day": "mon"}),
    ],
    "d2": [("set price=cheap", {"price": "cheap"}), ("set day=tue", {"day": "tue"})],
}
STALE_AREA = "keeps the first value an episode gives area for the rest of the episode"


async def _mutate(tmp_path: Path, thresholds: dict[str, Any]) -> MutationReport:
    suite = episode_suite(
        tmp_path, episode_cases(TURNS), thresholds={"max_error_rate": None, **thresholds}
    )
    return await run_mutation(suite, MutationConfig(operators=["stale_in_episode"], probes=[]))


def _stale_area(report: MutationReport) -> MutantResult:
    (found,) = [r for r in report.results if r.mutant.description.startswith(STALE_AREA)]
    return found


async def test_a_stale_value_only_breaks_episodes_so_turn_thresholds_let_it_survive(
    tmp_path: Path,
) -> None:
    report = await _mutate(tmp_path, {"accuracy": 0.7})
    assert report.baseline_failures == ()
    stale = _stale_area(report)
    # d1's turns 1 and 2 keep area=north: 5 of 7 expected fields still match
    assert stale.changed_cases == ("d1:1", "d1:2")
    assert stale.summary is not None
    assert stale.summary.accuracy == pytest.approx(5 / 7)
    assert stale.status == "survived"
    assert stale.suggestion == (
        "add thresholds.fields['area']: 1.0 (baseline 1.000, this mutant 0.333); or, over whole "
        "episodes, add thresholds.episode_success: 1.0 (baseline 1.000, this mutant 0.500)"
    )
    # One mutant per field the episodes change; the price and day ones change nothing.
    assert sorted(r.status for r in report.results) == ["inert", "inert", "survived"]


async def test_episode_success_kills_the_stale_value(tmp_path: Path) -> None:
    report = await _mutate(tmp_path, {"accuracy": 0.7, "episode_success": 0.9})
    assert report.baseline_failures == ()
    stale = _stale_area(report)
    assert stale.status == "killed"
    assert stale.killed_by == ("threshold:episode_success",)
    assert stale.kills[0].startswith("threshold episode_success")
    assert report.baseline.episodes is not None
    assert report.baseline.episodes.episode_success == 1.0


async def test_a_per_turn_minimum_kills_the_stale_value(tmp_path: Path) -> None:
    report = await _mutate(tmp_path, {"accuracy": 0.7, "per_turn": {"joint_goal_accuracy": 0.9}})
    stale = _stale_area(report)
    assert stale.status == "killed"
    assert stale.killed_by == ("threshold:per_turn[joint_goal_accuracy]",)


async def test_without_episodes_the_operator_makes_no_mutants(tmp_path: Path) -> None:
    suite = episode_suite(tmp_path, episode_cases(TURNS))
    plain = dataclasses.replace(
        suite,
        cases=[dataclasses.replace(c, episode_id=None, turn_index=None) for c in suite.cases],
        episodes=None,
    )
    report = await run_mutation(plain, MutationConfig(operators=["stale_in_episode"], probes=[]))
    assert report.results == ()
