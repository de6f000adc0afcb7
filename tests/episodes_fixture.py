"""A small conversational suite shared by the episode tests: two episodes of turns that set
fields ("set area=north"), get them wrong ("wrong area=south" writes the value reversed) or
fail ("fail"), and a tracker that reads its pre-state like a real one."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from stateval import InterpretiveState, StructuredInput, Suite, ValueConfidence, load_suite
from stateval.mutators import PythonMutator

TURNS: dict[str, list[tuple[str, dict[str, str]]]] = {
    # episode -> (prompt, the fields the turn sets in the gold state)
    "d1": [
        ("set area=north", {"area": "north"}),
        ("set price=cheap", {"price": "cheap"}),
        ("set day=mon", {"day": "mon"}),
    ],
    "d2": [("wrong area=south", {"area": "south"}), ("set price=high", {"price": "high"})],
}


def episode_cases(
    turns: dict[str, list[tuple[str, dict[str, str]]]] = TURNS,
) -> list[dict[str, Any]]:
    """Cases with gold pre- and post-states, the episode and turn in their metadata."""
    cases: list[dict[str, Any]] = []
    for episode, steps in turns.items():
        state: dict[str, str] = {}
        for i, (prompt, sets) in enumerate(steps):
            post = {**state, **sets}
            cases.append(
                {
                    "id": f"{episode}:{i}",
                    "pre_state": dict(state),
                    "input": {"prompt": prompt},
                    "expected_post_state": post,
                    "metadata": {"dialogue_id": episode, "turn_index": i},
                }
            )
            state = post
    return cases


def track(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    """The tracker: copies its pre-state and applies the turn."""
    verb, _, rest = input.prompt.partition(" ")
    if verb == "fail":
        raise RuntimeError("the tracker failed")
    if verb == "interrupt":
        raise KeyboardInterrupt
    out = state.copy()
    key, _, value = rest.partition("=")
    out.set_value(key, ValueConfidence(value[::-1] if verb == "wrong" else value, 1.0))
    return out


def episode_suite(
    folder: Path,
    cases: Sequence[dict[str, Any]] | None = None,
    *,
    mutator: Any = track,
    **extra: Any,
) -> Suite:
    """The suite (``extra`` adds top-level keys, e.g. ``thresholds``), with ``mutator``."""
    episodes = extra.pop("episodes", {})
    data = {
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": list(episode_cases() if cases is None else cases)},
        "episodes": {"by": "metadata.dialogue_id", "order": "metadata.turn_index", **episodes},
        "thresholds": {"max_error_rate": None},
        **extra,
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    suite = load_suite(path, load_mutator=False)
    return dataclasses.replace(suite, mutator=PythonMutator(mutator))
