"""``episodes:`` in suite files: cases get their episode and turn, the index orders each
episode's turns, and every mistake is one clear line naming the case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from episodes_fixture import episode_cases
from stateval import SuiteError, load_suite
from stateval.errors import SuiteProblemsError

EPISODES = {"by": "metadata.dialogue_id", "order": "metadata.turn_index"}


def _write(folder: Path, cases: list[dict[str, Any]], *, jsonl: bool = False, **extra: Any) -> Path:
    data: dict[str, Any] = {
        "mutator": {"type": "python", "callable": "builtins:print"},
        "episodes": {**EPISODES, **extra.pop("episodes", {})},
        **extra,
    }
    if jsonl:
        (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
        data["cases"] = {"file": "cases.jsonl"}
    else:
        data["cases"] = {"inline": cases}
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _problems(path: Path) -> list[str]:
    with pytest.raises(SuiteProblemsError) as raised:
        load_suite(path, load_mutator=False)
    return raised.value.problems


@pytest.mark.parametrize("jsonl", [False, True])
def test_cases_carry_their_episode_and_turn_and_the_index_orders_them(
    tmp_path: Path, jsonl: bool
) -> None:
    cases = episode_cases()
    shuffled = [cases[2], cases[3], cases[0], cases[4], cases[1]]  # any order in the file
    suite = load_suite(_write(tmp_path, shuffled, jsonl=jsonl), load_mutator=False)
    assert suite.episodes is not None
    assert dict(suite.episodes.index) == {
        "d1": ("d1:0", "d1:1", "d1:2"),
        "d2": ("d2:0", "d2:1"),
    }
    case = suite.case("d1:2")
    assert case is not None
    assert (case.episode_id, case.turn_index) == ("d1", 2)
    assert next((c.episode_id, c.turn_index) for c in suite.cases) == ("d1", 2)


def test_a_suite_without_episodes_leaves_cases_alone(tmp_path: Path) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "mutator": {"type": "python", "callable": "builtins:print"},
                "cases": {"inline": episode_cases()},
            }
        )
    )
    suite = load_suite(path, load_mutator=False)
    assert suite.episodes is None
    assert all(c.episode_id is None and c.turn_index is None for c in suite.cases)


@pytest.mark.parametrize("jsonl", [False, True])
def test_a_missing_key_names_the_case_and_the_key(tmp_path: Path, jsonl: bool) -> None:
    cases = episode_cases()
    del cases[1]["metadata"]["turn_index"]
    cases[3]["metadata"]["dialogue_id"] = None
    problems = _problems(_write(tmp_path, cases, jsonl=jsonl))
    assert len(problems) == 2
    assert "case 'd1:1': metadata.turn_index: missing (episodes.order" in problems[0]
    assert "case 'd2:0': metadata.dialogue_id: missing (episodes.by" in problems[1]
    if jsonl:
        assert problems[0].startswith(f"{tmp_path / 'cases.jsonl'}:2: ")


def test_a_turn_index_that_is_not_an_integer_is_a_problem(tmp_path: Path) -> None:
    cases = episode_cases()
    cases[0]["metadata"]["turn_index"] = "0"
    (problem,) = _problems(_write(tmp_path, cases))
    assert "case 'd1:0': metadata.turn_index: a turn index is an integer >= 0, got '0'" in problem


def test_duplicate_turns_name_both_cases(tmp_path: Path) -> None:
    cases = episode_cases()
    cases[2]["metadata"]["turn_index"] = 1
    (problem,) = _problems(_write(tmp_path, cases, jsonl=True))
    assert problem == (
        f"{tmp_path / 'cases.jsonl'}:3: case 'd1:2': metadata.turn_index: "
        "episode 'd1' has turn 1 twice (also case 'd1:1')"
    )


def test_a_gap_names_the_missing_turn(tmp_path: Path) -> None:
    cases = episode_cases()
    cases[2]["metadata"]["turn_index"] = 4
    (problem,) = _problems(_write(tmp_path, cases))
    assert "case 'd1:2': metadata.turn_index: episode 'd1' has no turns 2-3" in problem


def test_start_empty_rejects_an_episode_that_starts_from_a_state(tmp_path: Path) -> None:
    cases = episode_cases()[1:]  # d1 starts at its turn 1, whose pre-state holds the area
    assert load_suite(_write(tmp_path, cases), load_mutator=False).episodes is not None
    (problem,) = _problems(_write(tmp_path, cases, episodes={"start": "empty"}))
    assert "case 'd1:1': pre_state: the first turn of episode 'd1' (turn 1) must start" in problem


def test_episode_thresholds_need_episodes(tmp_path: Path) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "mutator": {"type": "python", "callable": "builtins:print"},
                "cases": {"inline": episode_cases()},
                "thresholds": {"episode_success": 0.5, "per_turn": {"joint_goal_accuracy": 0.5}},
            }
        )
    )
    problems = _problems(path)
    assert len(problems) == 2
    assert "thresholds.episode_success: needs episodes" in problems[0]
    assert "thresholds.per_turn: needs episodes" in problems[1]


def test_an_unknown_mode_is_a_schema_problem(tmp_path: Path) -> None:
    problems = _problems(_write(tmp_path, episode_cases(), episodes={"mode": "free"}))
    assert len(problems) == 1
    assert "episodes.mode" in problems[0]
    assert isinstance(SuiteProblemsError(problems), SuiteError)


def test_episode_ids_1_and_string_1_do_not_merge_silently(tmp_path: Path) -> None:
    cases = [
        {
            "id": "a0",
            "input": {"prompt": "x"},
            "expected_post_state": {},
            "metadata": {"dialogue_id": 1, "turn_index": 0},
        },
        {
            "id": "b1",
            "input": {"prompt": "x"},
            "expected_post_state": {},
            "metadata": {"dialogue_id": "1", "turn_index": 1},
        },
    ]
    (problem,) = _problems(_write(tmp_path, cases, jsonl=True))
    assert problem == (
        f"{tmp_path / 'cases.jsonl'}:2: case 'b1': metadata.dialogue_id: episode id '1' is a "
        "string here and an integer in case 'a0'; give one episode one id (1 and '1' differ)"
    )
