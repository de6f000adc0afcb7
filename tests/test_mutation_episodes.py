"""Mutation testing of a suite of episodes: the episode-aware operator, and episode thresholds
(``episode_success``, ``per_turn``) taking part in kills."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from episodes_fixture import episode_cases, episode_suite, track
from stateval import InterpretiveState, StructuredInput, ValueConfidence
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


class _Counting:
    """The fixture's tracker, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        self.calls += 1
        return track(state, input)


async def test_free_running_carries_a_dropped_update_into_the_turns_after_it(
    tmp_path: Path,
) -> None:
    tracker = _Counting()
    suite = episode_suite(
        tmp_path,
        episode_cases(TURNS),
        mutator=tracker,
        episodes={"mode": "free_running"},
        thresholds={"max_error_rate": None, "episode_success": 0.9},
    )
    calls: list[tuple[str, int]] = []
    report = await run_mutation(
        suite,
        MutationConfig(operators=["drop_field"], probes=[]),
        on_mutant=lambda r: calls.append((r.mutant.description, tracker.calls)),
    )
    assert report.baseline.episodes is not None
    assert report.baseline.episodes.mode == "free_running"
    assert (report.mode, report.to_dict()["mode"]) == ("free_running", "free_running")
    assert report.baseline_failures == ()
    (drop_area,) = [r for r in report.results if "update to area" in r.mutant.description]
    # Without its updates to area, d1 never has one: turns 0 and 1 lose theirs, and turn 2,
    # which does not touch area, starts from the mutant's state without it (teacher-forced, it
    # starts from the gold south and is right).
    assert drop_area.changed_cases == ("d1:0", "d1:1", "d1:2")
    assert drop_area.status == "killed"
    assert drop_area.killed_by == ("threshold:episode_success",)
    # The baseline called the tracker once per turn; a replay calls it only from the turn
    # after its first change on (drop_field[area]: d1's turns 1 and 2).
    after = [count for _, count in calls]
    made = [b - a for a, b in zip([5, *after], after, strict=False)]
    by_mutant = dict(zip([d for d, _ in calls], made, strict=True))
    assert by_mutant[drop_area.mutant.description] == 2


async def test_teacher_forced_mutation_of_the_same_suite_sees_only_the_turns_it_changed(
    tmp_path: Path,
) -> None:
    suite = episode_suite(
        tmp_path,
        episode_cases(TURNS),
        thresholds={"max_error_rate": None, "episode_success": 0.9},
    )
    report = await run_mutation(
        suite, MutationConfig(operators=["drop_field"], probes=[], mode="teacher_forced")
    )
    (drop_area,) = [r for r in report.results if "update to area" in r.mutant.description]
    assert drop_area.changed_cases == ("d1:0", "d1:1")


TRACKER = """
from stateval import ValueConfidence


def track(state, input):
    out = state.copy()
    key, _, value = input.prompt.removeprefix("set ").partition("=")
    out.set_value(key, ValueConfidence(value, 1.0))
    return out
"""


def test_stateval_mutate_runs_the_episodes_in_the_mode_asked_for(tmp_path: Path) -> None:
    import json

    import typer
    import yaml
    from typer.testing import CliRunner

    from stateval.cli import mutate

    (tmp_path / "episodes_tracker_mod.py").write_text(TRACKER)
    suite = {
        "mutator": {"type": "python", "callable": "episodes_tracker_mod:track", "path": "."},
        "cases": {"inline": episode_cases(TURNS)},
        "episodes": {"by": "metadata.dialogue_id", "order": "metadata.turn_index"},
        "thresholds": {"episode_success": 0.9},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    cli = typer.Typer()
    cli.command()(mutate)
    cli.command()(lambda: None)  # a second command, so "mutate" is a sub-command
    runner = CliRunner()
    out = tmp_path / "report.json"
    args = ["mutate", str(tmp_path / "suite.yaml"), "--operators", "drop_field"]
    done = runner.invoke(cli, [*args, "--mode", "free_running", "--report-json", str(out)])
    assert done.exit_code == 0, done.output
    report = json.loads(out.read_text())
    assert report["mode"] == "free_running"
    assert "baseline: 5 cases in 2 episodes, free_running, passes" in done.output
    (area,) = [m for m in report["mutants"] if "update to area" in m["description"]]
    assert area["changed_cases"] == ["d1:0", "d1:1", "d1:2"]
    bad = runner.invoke(cli, [*args, "--mode", "sideways"])
    assert bad.exit_code != 0
    assert "--mode 'sideways': expected teacher_forced or free_running" in bad.output
    assert "Traceback" not in bad.output


def _updating(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    """A right tracker of ``set k=v`` and ``del k`` turns."""
    out = state.copy()
    for step in input.prompt.split(";"):
        verb, _, rest = step.strip().partition(" ")
        key, _, value = rest.partition("=")
        if verb == "del":
            out.remove(key)
        else:
            out.set_value(key, ValueConfidence(value, 1.0))
    return out


async def test_the_update_operators_each_add_their_error_to_the_matrix(tmp_path: Path) -> None:
    """missed_delete, spurious_delete and stale_after_k_turns each add their own kind of error
    (and no other) to the mutant's edit-operation matrix, as `stateval mutate` reports it."""
    from stateval.reports._mutation import added_update_errors

    steps = [
        "set area=north; set day=mon; set note=x",
        "set price=cheap",
        "del note",
        "set people=2",
        "set area=south",  # area is 4 turns old: stale_after_k_turns keeps north
    ]
    cases, state = [], {}
    for i, prompt in enumerate(steps):
        post = dict(state)
        for step in prompt.split(";"):
            verb, _, rest = step.strip().partition(" ")
            key, _, value = rest.partition("=")
            if verb == "del":
                post.pop(key)
            else:
                post[key] = value
        cases.append(
            {
                "id": f"d1:{i}",
                "pre_state": dict(state),
                "input": {"prompt": prompt},
                "expected_post_state": post,
                "metadata": {"dialogue_id": "d1", "turn_index": i},
            }
        )
        state = post
    suite = episode_suite(tmp_path, cases, mutator=_updating)
    config = MutationConfig(
        operators=["missed_delete", "spurious_delete", "stale_after_k_turns"], probes=[]
    )
    report = await run_mutation(suite, config)
    assert report.baseline.edits is not None
    assert report.baseline.edits.pooled.errors == {}
    added = added_update_errors(report)
    assert dict(added["missed_delete"]) == {"missed_delete": 1}
    assert set(added["spurious_delete"]) == {"spurious_delete"}
    assert dict(added["stale_after_k_turns"]) == {"stale": 1}
