"""Episodes: a suite's cases grouped into conversations of ordered turns (``episodes:``).

Each case names its episode and its turn index in its metadata (the keys ``episodes.by`` and
``episodes.order`` say where). `EpisodeIndexer` reads those keys as cases are loaded (one pass,
alongside the loader's own) and keeps only ``(turn, case id, line)`` per case; `Episodes` is
the resulting index, episode -> case ids in turn order. The cases themselves stay in their
file.

An episode's turns are consecutive integers (no gaps, no duplicates); its first turn's
pre-state is the episode's start state. With ``start: empty`` that state must be empty.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from stateval.compare import lookup
from stateval.suite._models import EpisodeMode, EpisodesSpec

__all__ = ["EpisodeIndexer", "Episodes", "episode_keys"]


@dataclass(frozen=True, slots=True)
class Episodes:
    """A suite's episodes: each one's case ids in turn order, and how runs feed them.

    Attributes:
        by: The case metadata key naming the episode.
        order: The case metadata key holding the turn index.
        mode: The suite's default mode (``teacher_forced`` or ``free_running``).
        on_error: Free-running policy after a failed mutator call (``skip`` or ``carry``).
        start: ``first_turn`` or ``empty`` (see `stateval.suite.EpisodesSpec`).
        index: Episode id -> its case ids in turn order, episodes in order of first appearance.
    """

    by: str
    order: str
    mode: EpisodeMode
    on_error: str
    start: str
    index: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.index)

    def __iter__(self) -> Iterator[str]:
        return iter(self.index)

    def plan(self, case_ids: Collection[str]) -> dict[str, tuple[str, ...]]:
        """Episode id -> those of ``case_ids`` that are its turns, in turn order (episodes with
        none left out). ``case_ids`` should be a set for large runs."""
        out: dict[str, tuple[str, ...]] = {}
        for episode, ids in self.index.items():
            kept = tuple(c for c in ids if c in case_ids)
            if kept:
                out[episode] = kept
        return out


def episode_keys(
    metadata: Mapping[str, Any], spec: EpisodesSpec
) -> tuple[str | None, int | None, list[tuple[tuple[str, ...], str]]]:
    """``(episode id, turn index, problems)`` of a case's metadata under ``spec``; each problem
    is ``(location, message)``."""
    problems: list[tuple[tuple[str, ...], str]] = []
    found, episode = lookup(metadata, spec.by)
    loc_by = _loc(spec.by)
    episode_id: str | None = None
    if not found or episode is None:
        problems.append((loc_by, "missing (episodes.by names the case's episode)"))
    elif isinstance(episode, bool) or not isinstance(episode, str | int) or episode == "":
        problems.append((loc_by, "an episode id is a non-empty string or an integer"))
    else:
        episode_id = str(episode)
    found, turn = lookup(metadata, spec.order)
    loc_order = _loc(spec.order)
    turn_index: int | None = None
    if not found or turn is None:
        problems.append((loc_order, "missing (episodes.order gives the case's turn index)"))
    elif isinstance(turn, bool) or not isinstance(turn, int) or turn < 0:
        problems.append((loc_order, f"a turn index is an integer >= 0, got {turn!r}"))
    else:
        turn_index = turn
    return episode_id, turn_index, problems


def _loc(key: str) -> tuple[str, ...]:
    return ("metadata", *key.removeprefix("metadata.").split("."))


@dataclass(slots=True)
class _Turn:
    turn: int
    case_id: str
    line: int | None
    empty_start: bool


class EpisodeIndexer:
    """Collects each loaded case's episode and turn, then checks and indexes them.

    Args:
        spec: The suite's ``episodes:`` block.
    """

    def __init__(self, spec: EpisodesSpec) -> None:
        self.spec = spec
        self._turns: dict[str, list[_Turn]] = {}
        self._kinds: dict[str, tuple[str, str]] = {}  # episode id -> (its type, first case)
        self._mixed: list[tuple[int | None, str, str, str]] = []

    def add(
        self,
        episode_id: str,
        turn: int,
        case_id: str,
        line: int | None,
        empty: bool,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Record one case (``empty``: its pre-state holds no field; ``metadata``: the case's,
        to tell an integer episode id from the same digits as a string)."""
        if metadata is not None:
            raw = lookup(metadata, self.spec.by)[1]
            kind = "an integer" if isinstance(raw, int) else "a string"
            first = self._kinds.setdefault(episode_id, (kind, case_id))
            if first[0] != kind:
                message = (
                    f"episode id {episode_id!r} is {kind} here and {first[0]} in case "
                    f"{first[1]!r}; give one episode one id (1 and '1' differ)"
                )
                self._mixed.append((line, case_id, ".".join(_loc(self.spec.by)), message))
                return
        self._turns.setdefault(episode_id, []).append(_Turn(turn, case_id, line, empty))

    def finish(self, label: str) -> tuple[Episodes, list[tuple[int | None, str, str, str]]]:
        """The index, and the problems found as ``(line, case id, field, message)``."""
        spec = self.spec
        order = ".".join(_loc(spec.order))
        problems: list[tuple[int | None, str, str, str]] = self._mixed
        self._mixed = []
        index: dict[str, tuple[str, ...]] = {}
        for episode, turns in self._turns.items():
            turns.sort(key=lambda t: t.turn)
            ok = True
            for before, this in itertools.pairwise(turns):
                if this.turn == before.turn:
                    message = (
                        f"episode {episode!r} has turn {this.turn} twice "
                        f"(also case {before.case_id!r})"
                    )
                    problems.append((this.line, this.case_id, order, message))
                    ok = False
                elif this.turn != before.turn + 1:
                    gap = (
                        f"turn {before.turn + 1}"
                        if this.turn == before.turn + 2
                        else f"turns {before.turn + 1}-{this.turn - 1}"
                    )
                    message = (
                        f"episode {episode!r} has no {gap} (turn {before.turn} is case "
                        f"{before.case_id!r}, turn {this.turn} this case)"
                    )
                    problems.append((this.line, this.case_id, order, message))
                    ok = False
            first = turns[0]
            if spec.start == "empty" and not first.empty_start:
                message = (
                    f"the first turn of episode {episode!r} (turn {first.turn}) must start "
                    "from an empty state (episodes.start: empty)"
                )
                problems.append((first.line, first.case_id, "pre_state", message))
                ok = False
            if ok:
                index[episode] = tuple(t.case_id for t in turns)
        self._turns, self._kinds = {}, {}
        episodes = Episodes(spec.by, spec.order, spec.mode, spec.on_error, spec.start, index)
        return episodes, problems
