"""Mutation testing of a free-running suite: each episode's turns run in order, each from the
post-state the turn before left, so a mutant's error is carried into the turns after it.

The baseline runs every turn (as ``stateval run --mode free_running`` does). A state mutant
then replays each episode: a turn whose pre-state is the baseline's reuses the baseline's
mutator output (no call, as in teacher-forced mutation testing); once an earlier turn's degraded
output has changed the state, the mutator is called again from the mutant's own state. Its
output goes through the mutant's transforms; an `EpisodeTransform` sees the episode's turns so
far. After a failed call (or a transform that raises) the episode goes on as the suite's
``episodes.on_error`` says: ``skip`` its remaining turns, or ``carry`` the last good state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from stateval.errors import MutationError
from stateval.mutation._system import EpisodeTransform, Turn
from stateval.run import SKIPPED, CaseResult
from stateval.state import InterpretiveState
from stateval.suite import Case

__all__ = ["CallTurn", "run_episodes"]

CallTurn = Callable[[Case, InterpretiveState], Awaitable[CaseResult]]
"""Calls the mutator on one case from the given pre-state."""


async def run_episodes(
    cases: Sequence[Case],
    plan: Mapping[str, Sequence[str]],
    call: CallTurn,
    *,
    on_error: str,
    concurrency: int,
    transforms: Sequence[Any] = (),
    base: Mapping[str, CaseResult] | None = None,
) -> dict[str, CaseResult]:
    """Every case's result, the turns of each episode of ``plan`` run in order.

    Args:
        cases: The cases (those in no episode of ``plan`` run alone from their own pre-state).
        plan: Episode id -> its case ids in turn order.
        call: Runs the mutator on a case from a pre-state.
        on_error: ``skip`` or ``carry`` (see the module docstring).
        concurrency: Episodes at once.
        transforms: The mutant's output transforms, innermost first.
        base: The baseline's results, reused where a turn starts from the baseline's pre-state.
    """
    by_id = {c.id: c for c in cases}
    groups = [[by_id[c] for c in ids if c in by_id] for ids in plan.values()]
    planned = {c for ids in plan.values() for c in ids}
    groups += [[c] for c in cases if c.id not in planned]
    out: dict[str, CaseResult] = {}
    gate = asyncio.Semaphore(max(1, concurrency))

    async def episode(turns: list[Case]) -> None:
        async with gate:
            out.update(await _episode(turns, call, on_error, transforms, base or {}))

    try:
        async with asyncio.TaskGroup() as group:
            for turns in groups:
                if turns:
                    group.create_task(episode(turns))
    except BaseExceptionGroup as failed:  # what stops one episode stops the run: say what
        raise failed.exceptions[0] from None
    return out


async def _episode(
    turns: Sequence[Case],
    call: CallTurn,
    on_error: str,
    transforms: Sequence[Any],
    base: Mapping[str, CaseResult],
) -> dict[str, CaseResult]:
    out: dict[str, CaseResult] = {}
    start = turns[0].pre_state
    state: InterpretiveState | None = None  # what the next turn starts from
    failed: str | None = None
    seen: list[list[Turn]] = [[] for _ in transforms]  # each episode transform's turns so far
    for case in turns:
        if failed is not None:
            out[case.id] = _skipped(case, failed)
            continue
        pre = case.pre_state if case is turns[0] else (start if state is None else state)
        result = _reused(base.get(case.id), case, pre) or await call(case, pre)
        if result.ok and transforms:
            result = _degraded(result, case, pre, transforms, seen)
        if case is not turns[0]:
            result = replace(result, pre_state=pre)
        out[case.id] = result
        if result.ok:
            state = result.post_state
        elif on_error == "skip":
            failed = case.id
    return out


def _reused(found: CaseResult | None, case: Case, pre: InterpretiveState) -> CaseResult | None:
    """The baseline's result for ``case`` when the baseline ran it from ``pre`` too."""
    if found is None or found.error_type == SKIPPED:
        return None
    given = case.pre_state if found.pre_state is None else found.pre_state
    return found if given == pre else None


def _degraded(
    result: CaseResult,
    case: Case,
    pre: InterpretiveState,
    transforms: Sequence[Any],
    seen: list[list[Turn]],
) -> CaseResult:
    assert result.post_state is not None
    post = result.post_state.copy()
    try:
        for transform, turns in zip(transforms, seen, strict=True):
            if isinstance(transform, EpisodeTransform):
                turns.append((pre.copy(), case.input, post))
                post = transform.over_episode(list(turns))[-1]
            else:
                post = transform(pre.copy(), case.input, post)
            if not isinstance(post, InterpretiveState):
                raise MutationError(f"an output transform returned {type(post).__name__}")
    except Exception as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        return CaseResult(case.id, None, text, type(exc).__name__, result.time_used)
    return CaseResult(case.id, post, None, None, result.time_used)


def _skipped(case: Case, failed: str) -> CaseResult:
    return CaseResult(
        case_id=case.id,
        post_state=None,
        error=f"not run: turn {failed!r} of its episode failed (episodes.on_error: skip)",
        error_type=SKIPPED,
        time_used=0.0,
    )
