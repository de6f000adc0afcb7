"""Trajectory fidelity: in-order actions (LCS) and final-state fields."""

from __future__ import annotations

import json

import pytest

from stateval.checks import trajectory_fidelity

REFERENCE = {
    "steps": [{"action": "search"}, {"action": "select"}, {"action": "book"}],
    "final_state": {"booking": {"status": "confirmed", "seats": 2}},
}


def test_identical_trajectories_score_one() -> None:
    result = trajectory_fidelity(json.dumps(REFERENCE), json.dumps(REFERENCE))
    assert (result.score, result.passed) == (1.0, True)
    assert result.metrics["step_score"] == 1.0
    assert result.metrics["state_score"] == 1.0


def test_steps_count_in_order_and_penalise_extra_or_missing() -> None:
    out = {
        "steps": [{"action": "select"}, {"action": "search"}, {"action": "book"}],
        "final_state": REFERENCE["final_state"],
    }
    result = trajectory_fidelity(out, REFERENCE)
    assert result.metrics["steps_in_order"] == 2
    assert result.metrics["step_score"] == pytest.approx(2 / 3)
    assert result.score == pytest.approx(0.5 * 2 / 3 + 0.5)
    extra = trajectory_fidelity({**out, "steps": [*REFERENCE["steps"], "cancel"]}, REFERENCE)
    assert extra.metrics["step_score"] == pytest.approx(3 / 4)


def test_final_state_compares_flattened_fields_strictly() -> None:
    out = {
        "steps": REFERENCE["steps"],
        "final_state": {"booking": {"status": "confirmed", "seats": "2"}, "extra": 1},
    }
    result = trajectory_fidelity(out, REFERENCE, step_weight=0.0)
    assert result.metrics["state_matched"] == 1
    assert result.score == pytest.approx(0.5)
    assert "booking.seats" in result.explanation


def test_list_trajectories_compare_steps_only() -> None:
    ref = [{"action": {"tool": "search", "q": "x"}}, "answer"]
    out = [{"action": {"q": "x", "tool": "search"}}, "answer"]
    assert trajectory_fidelity(out, ref).score == 1.0
    assert trajectory_fidelity([], ref).score == 0.0
    assert trajectory_fidelity([], []).score == 1.0


def test_state_only_reference_ignores_steps() -> None:
    ref = {"final_state": {"done": True}}
    assert trajectory_fidelity({"steps": ["x"], "final_state": {"done": True}}, ref).score == 1.0
    assert trajectory_fidelity({"final_state": {"done": 1}}, ref).score == 0.0


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("{not json", "not valid JSON"),
        ('"a string"', "a list or an object"),
        ('{"foo": 1}', "needs 'steps' or 'final_state'"),
        ('{"steps": "search"}', "'steps' must be a list"),
        ('[{"tool": "x"}]', "step 0"),
        ('{"final_state": [1]}', "'final_state' must be an object"),
        ("", "not valid JSON"),
    ],
)
def test_malformed_output_scores_zero_with_explanation(output: str, reason: str) -> None:
    result = trajectory_fidelity(output, REFERENCE)
    assert (result.score, result.passed, result.label) == (0.0, False, "invalid_trajectory")
    assert reason in result.explanation
    assert result.explanation.startswith("the output trajectory is invalid")


def test_malformed_reference_scores_zero_with_explanation() -> None:
    result = trajectory_fidelity(REFERENCE, "[1,")
    assert result.label == "invalid_trajectory"
    assert result.explanation.startswith("the reference trajectory is invalid")
