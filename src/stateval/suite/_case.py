"""A case of a suite: the pre-state, the input and the expected post-state, ready to run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stateval.calibration import HumanVerdict
from stateval.mutators import StructuredInput
from stateval.state import InterpretiveState

__all__ = ["Case"]


@dataclass(frozen=True, slots=True)
class Case:
    """One case of a suite, ready to run.

    Attributes:
        id: Unique within the suite.
        pre_state: The state before the input.
        input: What the mutator reads.
        expected_post_state: The state the mutator should return.
        metadata: Free JSON about the case (sent to Phoenix as the example's metadata).
        human: Human verdicts on LLM-judged fields, by path.
        actual_post_state: The post-state the system already produced, as written in the case
            (read by a ``replay`` mutator; None when the case has none).
        episode_id: The episode (conversation) the case is a turn of, when the suite groups its
            cases into episodes (``episodes.by``); None otherwise.
        turn_index: The case's position in its episode (``episodes.order``); None without
            episodes.
    """

    id: str
    pre_state: InterpretiveState
    input: StructuredInput
    expected_post_state: InterpretiveState
    metadata: Mapping[str, Any] = field(default_factory=dict)
    human: Mapping[str, HumanVerdict] = field(default_factory=dict)
    actual_post_state: Any = None
    episode_id: str | None = None
    turn_index: int | None = None

    def to_example(self) -> dict[str, Any]:
        """The case as a dataset example: ``{"input", "output", "metadata"}`` (the wire format)."""
        return {
            "input": {
                "case_id": self.id,
                "pre_state": self.pre_state.to_dict(),
                "input": self.input.to_dict(),
            },
            "output": {"post_state": self.expected_post_state.to_dict()},
            "metadata": dict(self.metadata),
        }
