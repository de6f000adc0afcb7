"""A case of a suite: the pre-state, the input and the expected post-state, ready to run."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from stateval.calibration import HumanVerdict
from stateval.mutators import StructuredInput
from stateval.state import InterpretiveState

__all__ = [
    "REVIEW_KEY",
    "SOURCE_PROJECT_KEY",
    "SOURCE_SPAN_KEY",
    "SOURCE_TRACE_KEY",
    "UNREVIEWED",
    "Case",
    "review_status",
]

SOURCE_SPAN_KEY = "source_span_id"
"""The case metadata key holding the production span a case came from (16 hex digits): its
dataset example links to that span, its mutator-call span carries it, and the JSON report
shows it (`stateval traces export` writes it)."""

SOURCE_TRACE_KEY = "source_trace_id"
"""The case metadata key holding the source span's trace (32 hex digits), when known."""

SOURCE_PROJECT_KEY = "source_project"
"""The case metadata key holding the Phoenix project of the source span, when known."""

REVIEW_KEY = "review"
"""The case metadata key holding the review of a case exported from production traces:
``{"status": ..., "reason": ..., "by": ..., "at": ...}`` (`stateval traces import`)."""

UNREVIEWED = "unreviewed"
"""The review status of a draft nobody has corrected yet: such a case may leave out
``expected_post_state``; a suite leaves it out of its runs and counts it."""


def review_status(metadata: Mapping[str, Any]) -> str | None:
    """``metadata["review"]["status"]`` when it is a string, else None."""
    review = metadata.get(REVIEW_KEY)
    status = review.get("status") if isinstance(review, Mapping) else None
    return status if isinstance(status, str) else None


def _hex(value: object, digits: int) -> str | None:
    if isinstance(value, str) and len(value) == digits:
        try:
            int(value, 16)
        except ValueError:
            return None
        return value.lower()
    return None


_FRESH: Any = object()
"""A `Case` field left out: a new empty dict (its dataclass default)."""


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

    # Each field set through its slot (a run and a rescore build one per case: the frozen
    # dataclass ``__init__``, ``object.__setattr__`` per field, costs twice as much).
    def __init__(
        self,
        id: str,
        pre_state: InterpretiveState,
        input: StructuredInput,
        expected_post_state: InterpretiveState,
        metadata: Mapping[str, Any] = _FRESH,
        human: Mapping[str, HumanVerdict] = _FRESH,
        actual_post_state: Any = None,
        episode_id: str | None = None,
        turn_index: int | None = None,
    ) -> None:
        s = _CASE_SLOTS
        s[0](self, id), s[1](self, pre_state), s[2](self, input)
        s[3](self, expected_post_state)
        s[4](self, {} if metadata is _FRESH else metadata)
        s[5](self, {} if human is _FRESH else human)
        s[6](self, actual_post_state), s[7](self, episode_id), s[8](self, turn_index)

    @property
    def source_span_id(self) -> str | None:
        """The production span the case came from (`SOURCE_SPAN_KEY`), or None."""
        return _hex(self.metadata.get(SOURCE_SPAN_KEY), 16)

    @property
    def source_trace_id(self) -> str | None:
        """The source span's trace (`SOURCE_TRACE_KEY`), or None."""
        return _hex(self.metadata.get(SOURCE_TRACE_KEY), 32)

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


_CASE_SLOTS: tuple[Callable[[Case, Any], None], ...] = tuple(
    vars(Case)[f.name].__set__ for f in fields(Case)
)
"""Each field's slot setter, in field order (`Case.__init__`)."""
