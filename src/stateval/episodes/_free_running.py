"""Free-running episodes: within an episode, turn t starts from the mutator's own post-state of
turn t-1; the turns of one episode run in order, episodes run concurrently.

The first turn starts from its case's ``pre_state`` (the episode's start). After a failed
mutator call the episode goes on as ``episodes.on_error`` says:

- ``skip``: its remaining turns are not run; each is journaled as an error of type
  ``EpisodeSkipped`` (scored like any failed call: every expected field missing);
- ``carry``: the next turn starts from the last state the mutator returned (the episode's start
  when it has returned none yet).

Every result records the pre-state it was given (``CaseResult.pre_state``), so rescoring and
delta scores need no new run. A resumed run reads each episode's journaled turns (a prefix: an
episode's turns are journaled in order) and starts at its first unfinished turn from the state
they leave.

The run's machinery (journal, pipeline, results) stays in `stateval.run`: it hands `run_free` a
`TurnRunner`, which runs, records and recalls one turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Protocol

from stateval.errors import JournalError
from stateval.state import InterpretiveState
from stateval.suite import Case, Suite

__all__ = ["TurnResult", "TurnRunner", "run_free"]


class TurnResult(Protocol):
    """What free-running needs of a turn's result."""

    @property
    def ok(self) -> bool:
        """The mutator returned a state."""

    @property
    def post_state(self) -> InterpretiveState | None:
        """The state it returned."""


class TurnRunner(Protocol):
    """Runs, records and recalls the turns of a run (`stateval.run` gives one)."""

    def done(self, case_id: str) -> TurnResult | None:
        """The journaled result of a turn (a resumed run), or None."""

    async def run(self, case: Case, pre_state: InterpretiveState | None) -> TurnResult:
        """Call the mutator on ``case`` from ``pre_state`` (None: its own), record the result."""

    async def skip(self, case: Case, failed: str) -> None:
        """Record ``case`` as not run: turn ``failed`` of its episode failed."""


async def run_free(
    suite: Suite,
    runner: TurnRunner,
    plan: Mapping[str, Sequence[str]],
    *,
    on_error: str,
    concurrency: int,
) -> None:
    """Run every episode of ``plan`` whose turns are not all journaled (see the module
    docstring), at most ``concurrency`` episodes at once."""
    todo = [(e, ids) for e, ids in plan.items() if any(runner.done(c) is None for c in ids)]
    episodes = iter(todo)

    async def worker() -> None:
        for _, ids in episodes:  # shared by the workers; next() never awaits
            await _run_episode(suite, runner, ids, on_error)

    async with asyncio.TaskGroup() as group:
        for _ in range(max(1, min(concurrency, len(todo)))):
            group.create_task(worker())


def _case(suite: Suite, case_id: str) -> Case:
    case = suite.case(case_id)
    if case is None:
        raise JournalError(f"case {case_id!r} of the run is not in {suite.path}")
    return case


async def _run_episode(suite: Suite, runner: TurnRunner, ids: Sequence[str], on_error: str) -> None:
    start: InterpretiveState | None = None  # the episode's start state, read when needed
    state: InterpretiveState | None = None  # what the next turn starts from (None: its own)
    failed: str | None = None  # the turn whose failure skips the rest (on_error: skip)
    for position, case_id in enumerate(ids):
        done = runner.done(case_id)
        if done is not None:  # resumed: the state its journaled turn leaves
            if done.ok:
                state = done.post_state
            elif on_error == "skip" and failed is None:
                failed = case_id
            continue
        case = _case(suite, case_id)
        if failed is not None:
            await runner.skip(case, failed)
            continue
        pre = state
        if pre is None and position > 0:  # carrying, before any good state: the start
            if start is None:
                start = _case(suite, ids[0]).pre_state
            pre = start
        result = await runner.run(case, pre)
        if result.ok:
            state = result.post_state
        elif on_error == "skip":
            failed = case_id
