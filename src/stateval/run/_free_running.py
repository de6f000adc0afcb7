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
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from stateval.errors import JournalError
from stateval.run._episodes import SKIPPED
from stateval.run._journal import Journal
from stateval.run._pipeline import CasePipeline
from stateval.run._results import CaseResult
from stateval.state import InterpretiveState
from stateval.suite import Case, Suite

__all__ = ["run_free"]


async def run_free(
    suite: Suite,
    journal: Journal,
    pipeline: CasePipeline,
    plan: Mapping[str, Sequence[str]],
    *,
    on_error: str,
    concurrency: int,
) -> None:
    """Run every episode of ``plan`` whose turns are not all journaled (see the module
    docstring), at most ``concurrency`` episodes at once."""
    todo = [(e, ids) for e, ids in plan.items() if any(c not in journal.results for c in ids)]
    episodes = iter(todo)

    async def worker() -> None:
        for episode, ids in episodes:  # shared by the workers; next() never awaits
            await _run_episode(suite, journal, pipeline, episode, ids, on_error)

    async with asyncio.TaskGroup() as group:
        for _ in range(max(1, min(concurrency, len(todo)))):
            group.create_task(worker())


def _case(suite: Suite, case_id: str) -> Case:
    case = suite.case(case_id)
    if case is None:
        raise JournalError(f"case {case_id!r} of the run is not in {suite.path}")
    return case


async def _run_episode(
    suite: Suite,
    journal: Journal,
    pipeline: CasePipeline,
    episode: str,
    ids: Sequence[str],
    on_error: str,
) -> None:
    start: InterpretiveState | None = None  # the episode's start state, read when needed
    state: InterpretiveState | None = None  # what the next turn starts from (None: its own)
    failed: str | None = None  # the turn whose failure skips the rest (on_error: skip)
    for position, case_id in enumerate(ids):
        if case_id in journal.results:  # resumed: the state its journaled turn leaves
            done = CaseResult.from_dict(journal.results[case_id])
            if done.ok:
                state = done.post_state
            elif on_error == "skip" and failed is None:
                failed = case_id
            continue
        case = _case(suite, case_id)
        if failed is not None:
            await pipeline.record(case, _skipped(case, failed))
            continue
        pre = state
        if pre is None and position > 0:  # carrying, before any good state: the start
            if start is None:
                start = _case(suite, ids[0]).pre_state
            pre = start
        result = await pipeline.run(case, pre_state=pre)
        if result.ok:
            state = result.post_state
        elif on_error == "skip":
            failed = case_id


def _skipped(case: Case, failed: str) -> CaseResult:
    return CaseResult(
        case_id=case.id,
        post_state=None,
        error=f"not run: turn {failed!r} of its episode failed (episodes.on_error: skip)",
        error_type=SKIPPED,
        time_used=0.0,
    )
