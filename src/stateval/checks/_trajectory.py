"""Trajectory fidelity: does an agent's run take the reference's steps and end in its state?

A trajectory is JSON (text or an already-parsed value), either a list of steps or an object
``{"steps": [...], "final_state": {...}}`` (other keys are ignored). A step is an object with an
``"action"`` (any JSON value) or a bare action string.

The score combines two parts:

* **steps**: the longest common subsequence of the two action sequences divided by the longer
  sequence's length (rapidfuzz ``LCSseq.normalized_similarity``), so actions must come in the
  reference's order, and both missing and extra steps cost. Actions compare as canonical JSON.
* **final state**: the share of the reference's final-state fields (nested objects flattened to
  dotted paths) whose value in the output is JSON-equal (``True != 1``, ``1 == 1.0``).

When the reference has both parts, the score is ``step_weight * steps + (1 - step_weight) * state``;
when it has only one, that part is the score. Malformed JSON on either side scores 0 with label
``"invalid_trajectory"``: it is a result, not an exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import LCSseq

from stateval.checks._result import CheckResult, failed
from stateval.checks._text import as_text
from stateval.compare import json_equal

__all__ = ["Trajectory", "parse_trajectory", "trajectory_fidelity"]


class TrajectoryFormatError(ValueError):
    """A trajectory is not one of the accepted shapes (internal: becomes a failed check)."""


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A parsed trajectory: its actions (as canonical JSON text) and final state, if given."""

    actions: tuple[str, ...] | None
    final_state: dict[str, Any] | None


def _flatten(node: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in node.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value:
            flat.update(_flatten(value, path))
        else:
            flat[path] = value
    return flat


def _actions(steps: Any) -> tuple[str, ...]:
    if not isinstance(steps, list):
        raise TrajectoryFormatError(f"'steps' must be a list, not {type(steps).__name__}")
    actions = []
    for i, step in enumerate(steps):
        if isinstance(step, str):
            actions.append(step)
        elif isinstance(step, Mapping) and "action" in step:
            actions.append(as_text(step["action"]))
        else:
            raise TrajectoryFormatError(f"step {i} is neither an action string nor has 'action'")
    return tuple(actions)


def parse_trajectory(value: Any) -> Trajectory:
    """Parse a trajectory from JSON text or a parsed value.

    Raises:
        ValueError: ``value`` is not valid JSON or not a trajectory (the message says why).
    """
    data = value
    if isinstance(value, str):
        try:
            data = json.loads(value)
        except ValueError as exc:
            raise TrajectoryFormatError(f"not valid JSON: {exc}") from exc
    if isinstance(data, list):
        return Trajectory(_actions(data), None)
    if isinstance(data, Mapping):
        if "steps" not in data and "final_state" not in data:
            raise TrajectoryFormatError("an object trajectory needs 'steps' or 'final_state'")
        actions = _actions(data["steps"]) if "steps" in data else None
        state = data.get("final_state")
        if state is not None and not isinstance(state, Mapping):
            raise TrajectoryFormatError("'final_state' must be an object")
        return Trajectory(actions, _flatten(state) if state is not None else None)
    raise TrajectoryFormatError(f"a trajectory is a list or an object, not {type(data).__name__}")


def trajectory_fidelity(
    output: Any, reference: Any, *, step_weight: float = 0.5, threshold: float = 1.0
) -> CheckResult:
    """Score how faithfully ``output`` follows the ``reference`` trajectory (see module doc).

    Example:
        >>> steps = [{"action": "search"}, {"action": "book"}]
        >>> ref = {"steps": steps, "final_state": {"ok": True}}
        >>> out = {"steps": steps, "final_state": {"ok": False}}
        >>> trajectory_fidelity(out, ref).score
        0.5
    """
    if not 0.0 <= step_weight <= 1.0:
        raise ValueError(f"step_weight must be in [0, 1], got {step_weight!r}")
    name = "trajectory_fidelity"
    try:
        ref = parse_trajectory(reference)
    except TrajectoryFormatError as exc:
        return failed(name, "invalid_trajectory", f"the reference trajectory is invalid: {exc}")
    try:
        out = parse_trajectory(output)
    except TrajectoryFormatError as exc:
        return failed(name, "invalid_trajectory", f"the output trajectory is invalid: {exc}")

    metrics: dict[str, float] = {}
    parts: list[str] = []
    step_score = state_score = None
    if ref.actions is not None:
        got = out.actions or ()
        step_score = float(LCSseq.normalized_similarity(ref.actions, got))
        common = LCSseq.similarity(ref.actions, got)
        metrics |= {
            "step_score": step_score,
            "reference_steps": len(ref.actions),
            "output_steps": len(got),
            "steps_in_order": common,
        }
        parts.append(f"{common} of {len(ref.actions)} reference steps in order ({len(got)} taken)")
    if ref.final_state is not None:
        got_state = out.final_state or {}
        matched = [
            p for p, v in ref.final_state.items() if p in got_state and json_equal(got_state[p], v)
        ]
        total = len(ref.final_state)
        state_score = len(matched) / total if total else 1.0
        metrics |= {"state_score": state_score, "state_matched": len(matched), "state_total": total}
        wrong = [p for p in ref.final_state if p not in matched]
        part = f"{len(matched)} of {total} final-state fields match"
        if wrong:
            part += f" (wrong or missing: {wrong[:10]})"
        parts.append(part)

    if step_score is not None and state_score is not None:
        score = step_weight * step_score + (1 - step_weight) * state_score
    else:
        score = step_score if step_score is not None else state_score or 0.0
    passed = score >= threshold
    return CheckResult(name, score, passed, "pass" if passed else "fail", "; ".join(parts), metrics)
