"""Episode session ids and the session annotations made of an episode's scores."""

from __future__ import annotations

from stateval.run import EpisodeScore, RunHeader
from stateval.upload._episode_sessions import episode_annotations, session_id


def _header(**extra: str) -> RunHeader:
    return RunHeader(
        suite_path="/s.yaml", suite_name="s", suite_hash="h", cases_hash="c", case_ids=[], **extra
    )


def test_a_session_is_its_episode_in_its_run_and_the_shards_of_a_run_share_it() -> None:
    alone = _header(run_id="20261130-140000-aaaaaa")
    assert session_id(alone, " PMUL1234.json ") == "PMUL1234.json@20261130-140000-aaaaaa"
    shard_1 = _header(run_id="20261130-140000-bbbbbb", shard="1/2", shared_run="key-7")
    shard_2 = _header(run_id="20261130-140001-cccccc", shard="2/2", shared_run="key-7")
    assert session_id(shard_1, "d1") == session_id(shard_2, "d1") == "d1@key-7"
    assert session_id(alone, "d1") != session_id(_header(run_id="20261130-140002-dddddd"), "d1")


def test_an_episode_right_at_every_turn_has_no_divergence_turn() -> None:
    episode = EpisodeScore("d1", "free_running", 4, True, None, 1.0, mean_state_accuracy=1.0)
    notes = {n.name: n for n in episode_annotations("d1@r", episode, "exp-1")}
    assert sorted(notes) == [
        "episode_accuracy",
        "episode_success",
        "first_divergence_turn",
        "retention_at_5",
    ]
    assert all(n.session_id == "d1@r" and n.identifier == "exp-1" for n in notes.values())
    assert all(n.annotator_kind == "CODE" for n in notes.values())
    success = notes["episode_success"]
    assert (success.score, success.label, success.explanation) == (
        1.0,
        "success",
        "all 4 turn(s) right (free_running)",
    )
    divergence = notes["first_divergence_turn"]
    assert (divergence.score, divergence.label) == (None, "none")
    accuracy = notes["episode_accuracy"]
    assert (accuracy.score, accuracy.explanation) == (
        1.0,
        "4 of its 4 turn(s) right (free_running)",
    )
    retention = notes["retention_at_5"]  # no field of this episode is 5 turns old
    assert (retention.score, retention.label) == (None, "none")
    old = EpisodeScore("d2", "teacher_forced", 8, False, 6, 0.5, n_old=4, right_old=3)
    kept = {n.name: n for n in episode_annotations("d2@r", old, "exp-1")}["retention_at_5"]
    assert (kept.score, kept.explanation) == (
        0.75,
        "3 of 4 expected field(s) set 5 or more turns earlier right (teacher_forced)",
    )
    assert success.body()["session_id"] == "d1@r"
    assert success.body()["metadata"]["mode"] == "free_running"
