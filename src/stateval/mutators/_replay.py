"""Replaying outputs a system already produced: the ``replay`` mutator.

A suite whose system ran elsewhere (a batch job, production traffic, another team's pipeline)
scores the post-states it recorded instead of calling anything. Each case carries its recorded
output under ``actual_post_state`` (in the same state format as ``expected_post_state``), or a
predictions file (JSONL, one ``{"id": ..., "actual_post_state": ...}`` per line) supplies them,
joined by case id. A case without a recorded output, or whose recorded output is not a valid
state, is a per-case error (`MutatorError`) with a message naming the case; the run goes on.

Example:
    >>> import asyncio
    >>> from stateval.state import InterpretiveState
    >>> replay = ReplayMutator(InterpretiveState.from_flat)
    >>> bound = replay.for_case("c1", {"hotel.area": "north"})
    >>> asyncio.run(bound.mutate(InterpretiveState(), StructuredInput("north", "c1"))).to_flat()
    {'hotel.area': 'north'}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from stateval.errors import MutatorError, StateError
from stateval.mutators._input import StructuredInput
from stateval.mutators._mutator import Mutator
from stateval.state import InterpretiveState

__all__ = ["RECORDED_KEY", "Predictions", "ReplayMutator", "bind_case"]

RECORDED_KEY = "actual_post_state"
"""The key of a recorded output, in a case and in a predictions file's lines."""

StateParser = Callable[[Mapping[str, Any]], InterpretiveState]
"""Turns a recorded output, as written, into a state (the suite's state format)."""

_MISSING = object()


def _kind(value: object) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


class Predictions:
    """A JSONL predictions file indexed by case id; each line is read again when asked for.

    Build one with `Predictions.scan`.

    Attributes:
        path: The file.
    """

    def __init__(self, path: Path, offsets: Mapping[str, int]) -> None:
        self.path = path
        self._offsets = dict(offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    @classmethod
    def scan(cls, path: Path) -> tuple[Predictions, list[tuple[int | None, str]]]:
        """Index ``path``; return it and its problems as ``(line, message)`` (lines that are
        not JSON objects with a string ``id``, duplicate ids).

        Raises:
            OSError: The file cannot be read.
        """
        offsets: dict[str, int] = {}
        lines: dict[str, int] = {}
        problems: list[tuple[int | None, str]] = []
        offset = 0
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                start, offset = offset, offset + len(raw)
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    problems.append((number, f"invalid JSON: {getattr(exc, 'msg', exc)}"))
                    continue
                case_id = data.get("id") if isinstance(data, dict) else None
                if isinstance(case_id, int) and not isinstance(case_id, bool):
                    case_id = str(case_id)
                if not isinstance(case_id, str) or not case_id:
                    problems.append((number, 'expected an object with an "id" (the case id)'))
                    continue
                if case_id in offsets:
                    problems.append(
                        (number, f"duplicate id {case_id!r} (first at line {lines[case_id]})")
                    )
                    continue
                offsets[case_id] = start
                lines[case_id] = number
        return cls(path, offsets), problems

    def recorded(self, case_id: str) -> object:
        """The recorded output of ``case_id`` as written, or `_MISSING`.

        Raises:
            MutatorError: The file cannot be read again.
        """
        offset = self._offsets.get(case_id)
        if offset is None:
            return _MISSING
        try:
            with self.path.open("rb") as handle:
                handle.seek(offset)
                data = json.loads(handle.readline())
        except (OSError, ValueError) as exc:
            raise MutatorError(f"cannot read {self.path} again: {exc}") from exc
        if not isinstance(data, dict) or RECORDED_KEY not in data:
            return _MISSING
        return data[RECORDED_KEY]


class ReplayMutator:
    """Returns each case's recorded post-state instead of computing one (see the module
    docstring).

    Args:
        parse: Turns a recorded output into a state (e.g. `InterpretiveState.from_flat`).
        predictions: Where recorded outputs come from, joined by case id; without it, each
            case's own ``actual_post_state``.
    """

    def __init__(self, parse: StateParser, predictions: Predictions | None = None) -> None:
        self.parse = parse
        self.predictions = predictions

    def describe(self) -> str:
        """``replay:<predictions file>`` or ``replay:cases``."""
        where = "cases" if self.predictions is None else self.predictions.path.name
        return f"replay:{where}"

    def for_case(self, case_id: str, recorded: object = None) -> Mutator:
        """The mutator of one case: it returns the case's recorded output.

        Args:
            case_id: The case.
            recorded: The case's own ``actual_post_state`` as written (None when it has none);
                ignored when a predictions file is set.
        """
        return _Replayed(self, case_id, recorded)

    async def mutate(self, state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        """The recorded output of the case whose id is ``input.message_id`` (the runner binds
        each case with `for_case`; this serves callers that only have the input)."""
        return self.replay(input.message_id, None)

    def replay(self, case_id: str, recorded: object) -> InterpretiveState:
        """The recorded output of ``case_id`` as a state.

        Raises:
            MutatorError: It has none, or it is not a valid state.
        """
        if self.predictions is not None:
            recorded = self.predictions.recorded(case_id)
            where = f"no line in {self.predictions.path.name}"
            if recorded is _MISSING:
                raise MutatorError(f"case {case_id!r} has no recorded output ({where})")
        if recorded is None or recorded is _MISSING:
            raise MutatorError(f"case {case_id!r} has no recorded output (no {RECORDED_KEY!r} key)")
        if not isinstance(recorded, Mapping):
            raise MutatorError(
                f"case {case_id!r}: the recorded {RECORDED_KEY} is {_kind(recorded)}, "
                "not a state object"
            )
        try:
            return self.parse(recorded)
        except StateError as exc:
            raise MutatorError(
                f"case {case_id!r}: the recorded {RECORDED_KEY} is not a valid state: {exc}"
            ) from exc


class _Replayed:
    """`ReplayMutator` bound to one case."""

    __slots__ = ("_case_id", "_recorded", "_replay")

    def __init__(self, replay: ReplayMutator, case_id: str, recorded: object) -> None:
        self._replay = replay
        self._case_id = case_id
        self._recorded = recorded

    async def mutate(self, state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        return self._replay.replay(self._case_id, self._recorded)

    def describe(self) -> str:
        return self._replay.describe()


def bind_case(mutator: Mutator, case_id: str, recorded: object = None) -> Mutator:
    """``mutator`` for one case: a `ReplayMutator` bound to the case, any other unchanged."""
    if isinstance(mutator, ReplayMutator):
        return mutator.for_case(case_id, recorded)
    return mutator
