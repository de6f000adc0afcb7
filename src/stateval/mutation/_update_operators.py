"""State operators for the update errors the other operators do not make: a delete that is not
made, a kept field that is deleted, and an update lost once a value has been held for k turns.

Each makes one kind of error of the edit-operation matrix (`stateval.compare.field_edits`):
``missed_delete`` a *missed delete*, ``spurious_delete`` a *spurious delete*,
``stale_after_k_turns`` a *stale* field (update expected, old value kept), so ``stateval
mutate`` shows whether the suite, and the matrix, catch each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from stateval.mutation._mutant import Mutant
from stateval.mutation._operators import _per_path, _replace_best, _restore, _system
from stateval.mutation._system import OutputTransform, Turn
from stateval.mutators import StructuredInput
from stateval.state import InterpretiveState, ValueConfidence

__all__ = ["STALE_AFTER_TURNS", "missed_delete", "spurious_delete", "stale_after_k_turns"]

STALE_AFTER_TURNS = 3
"""``stale_after_k_turns``: a value held this many turns no longer takes updates."""


def missed_delete(target: Any) -> list[Mutant]:
    """Per field some case deletes: wherever the mutator deletes it, the output keeps its
    pre-state value."""
    system = _system(target)
    if system is None:
        return []

    def make(path: str) -> tuple[str, OutputTransform]:
        def transform(
            pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
        ) -> InterpretiveState:
            if path not in pre or path in post:
                return post
            out = post.copy()
            _restore(out, pre, path)
            return out

        return (f"keeps {path} where the mutator deletes it (the delete is lost)", transform)

    return _per_path(system, "missed_delete", system.deleted_fields, make)


def spurious_delete(target: Any) -> list[Mutant]:
    """Per kept field: wherever the mutator keeps it unchanged from the pre-state, the output
    deletes it."""
    system = _system(target)
    if system is None:
        return []

    def make(path: str) -> tuple[str, OutputTransform]:
        def transform(
            pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
        ) -> InterpretiveState:
            before, after = pre.best(path), post.best(path)
            if before is None or after is None or before.value != after.value:
                return post
            out = post.copy()
            out.remove(path)
            return out

        return (f"deletes {path} where the input did not change it", transform)

    return _per_path(system, "spurious_delete", system.kept_fields, make)


class _StaleAfter:
    """Once ``path`` has held one value for ``turns`` turns of an episode, later updates to it
    are lost: it keeps that value."""

    def __init__(self, path: str, turns: int) -> None:
        self.path = path
        self.turns = turns

    def __call__(
        self, pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
    ) -> InterpretiveState:
        return post  # one output alone has no earlier turns to have held the value

    def over_episode(self, turns: Sequence[Turn]) -> list[InterpretiveState]:
        path = self.path
        held: ValueConfidence | None = None
        age = 0
        out: list[InterpretiveState] = []
        for _, _, post in turns:
            best = post.best(path)
            changed = best is not None and (held is None or best.value != held.value)
            if changed and held is not None and age >= self.turns:
                assert best is not None
                out.append(_replace_best(post, path, replace(best, value=held.value)))
                age += 1
                continue
            if changed:
                held, age = best, 0
            age += 1
            out.append(post)
        return out


def stale_after_k_turns(target: Any) -> list[Mutant]:
    """Per changed field, in a suite of episodes: once an episode's value of the field is
    `STALE_AFTER_TURNS` turns old, later updates to it are lost (the old value stays); no
    mutants without episodes."""
    system = _system(target)
    if system is None or not system.episodes:
        return []
    k = STALE_AFTER_TURNS

    def make(path: str) -> tuple[str, OutputTransform]:
        return (
            f"stops updating {path} once an episode's value of it is {k} turns old (the old "
            "value stays)",
            _StaleAfter(path, k),
        )

    return _per_path(system, "stale_after_k_turns", system.changed_fields, make)
