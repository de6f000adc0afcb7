"""The runner: cases -> mutator (bounded concurrency, traced) -> journal -> scores -> uploads.

Each case result is journaled the moment it exists, then scored and handed to the upload sink,
which works through its own queue: the mutator loop never waits on Phoenix.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from stateval.episodes import SKIPPED, EpisodeScore, run_free
from stateval.errors import StatevalError
from stateval.mutators import Mutator
from stateval.run._compact_scores import scores_fingerprint
from stateval.run._episode_tracker import episode_tracker
from stateval.run._journal import Journal
from stateval.run._pipeline import CasePipeline, CaseSpan, SpanFactory, no_span, submit_episode
from stateval.run._results import CaseResult, CaseScore
from stateval.run._scoring import Scoring, score_case
from stateval.run._tally import RunTally, journaled_results
from stateval.state import InterpretiveState
from stateval.suite import Case, Suite

if TYPE_CHECKING:
    from stateval.phoenix import FieldJudge

__all__ = [
    "AllSinks",
    "CaseSpan",
    "ReenterableSpan",
    "SpanFactory",
    "UploadSink",
    "execute",
    "iter_repetitions",
    "journaled_repetitions",
    "submit_episode",
]

YIELD_EVERY = 64
"""Cases a worker runs before it lets the event loop run other tasks: a mutator whose calls
never wait (an ``async def`` one that only computes, a sync one run in the loop's thread)
would otherwise keep the loop from everything else (Ctrl-C's cancellation among it) until the
run's last case."""


class ReenterableSpan(CaseSpan, Protocol):
    """A `CaseSpan` that can be made current again after it ended, so the LLM judge's calls on
    the case become its children."""

    def reenter(self) -> AbstractContextManager[object]:
        """Make the span the current span (the parent of spans started) within the block."""
        ...


@runtime_checkable
class UploadSink(Protocol):
    """Where scored cases go as they are produced: `run_suite` hands every case of a run to
    each sink (those a resumed run scored from its journal, then each new one as it is scored).

    Phoenix is one sink (the run's `PhoenixSink`); pass your own to ``run_suite(sink=...)`` to
    stream results anywhere else. ``submit`` runs on the event loop: queue slow work, never
    block.

    A sink may also have a ``submit_episode(episode: EpisodeScore) -> None`` method (optional,
    so not part of the protocol): when the suite groups its cases into episodes, the runner
    calls it once per episode, after the episode's last turn has been journaled, scored and
    handed to ``submit`` (a resumed run calls it for the episodes its journal completes too).

    Example:
        >>> class Collect:
        ...     def __init__(self) -> None:
        ...         self.case_ids: list[str] = []
        ...     def submit(self, case: Case, score: CaseScore) -> None:
        ...         self.case_ids.append(case.id)
        >>> isinstance(Collect(), UploadSink)
        True
    """

    def submit(self, case: Case, score: CaseScore) -> None:
        """Take one scored case (queue any slow work); must not block."""
        ...


@dataclass(frozen=True, slots=True)
class AllSinks:
    """Hands each case to several sinks, in order."""

    sinks: tuple[UploadSink, ...]

    def submit(self, case: Case, score: CaseScore) -> None:
        """Give the case to every sink."""
        for sink in self.sinks:
            sink.submit(case, score)

    def submit_episode(self, episode: EpisodeScore) -> None:
        """Give the episode to every sink that takes episodes."""
        for sink in self.sinks:
            submit_episode(sink, episode)


def iter_repetitions(
    suite: Suite, journal: Journal, scoring: Scoring
) -> Iterator[tuple[str, list[CaseScore]]]:
    """(case id, the scores of its journaled repetitions in repetition order), one case at a
    time in plan order: a caller that reduces each case keeps no score alive (a score holds
    both states and their comparison)."""
    for case_id in journal.header.case_ids:
        case = suite.case(case_id)
        records = journal.repetitions_of(case_id)
        if case is not None and records:
            yield case_id, [score_case(case, CaseResult.from_dict(r), scoring) for r in records]


def journaled_repetitions(
    suite: Suite, journal: Journal, scoring: Scoring
) -> dict[str, list[CaseScore]]:
    """Case id -> the scores of its journaled repetitions, in repetition order (one each for a
    run without ``--repeat``)."""
    return dict(iter_repetitions(suite, journal, scoring))


async def execute(
    suite: Suite,
    journal: Journal,
    scoring: Scoring,
    *,
    mutator: Mutator,
    concurrency: int,
    span: SpanFactory | None = None,
    sink: UploadSink | None = None,
    on_case: Callable[[CaseScore], None] | None = None,
    judge: FieldJudge | None = None,
) -> RunTally:
    """Run every planned case the journal has no result for; count every case's scores.

    With ``repetitions`` in the journal's header, each case runs that many times (every result
    journaled and handed to ``sink``); the scores returned are the first repetition's.

    Cases already in the journal are scored from it (and handed to ``sink``, which skips what it
    has uploaded before). Each new result is judged where a field's policy asks for the LLM
    judge, then journaled (verdicts included; the journal groups records per ``fsync``), then
    scored and counted. Cases are read from the suite one at a time and their scores are not
    kept: the returned `RunTally` holds counts, and `JournalScores` reads them back. A case
    reaches ``sink`` only once its result is durable in the journal; an episode reaches the
    sink's ``submit_episode`` once all its turns are.

    A free-running run (the journal header's ``mode``) runs each episode's turns in order, each
    from the mutator's post-state of the turn before, episodes concurrently
    (`stateval.episodes.run_free`).

    Args:
        suite: The suite (its cases are looked up by the journal's planned ids).
        journal: The run's journal.
        scoring: Policies, slots, checks, thresholds.
        mutator: The system under test.
        concurrency: How many mutator calls run at once.
        span: Opens a span per mutator call (none when omitted).
        sink: Receives each scored case.
        on_case: Called with each newly scored case (progress bars).
        judge: Rules on the fields whose policy says ``judge: llm`` (without one, such fields
            are ``judge_error``).
    """
    planned = journal.header.case_ids
    free = journal.header.mode == "free_running"
    if free and suite.episodes is None:
        raise StatevalError(f"{suite.path}: a free-running run needs episodes ('episodes:')")
    if free and journal.header.repetitions > 1:
        raise StatevalError("--repeat does not combine with free-running episodes")
    index = {case_id: i for i, case_id in enumerate(planned)}
    tally = RunTally(
        scoring, episode_tracker(suite.episodes, planned, journal.header.mode, scoring)
    )
    done = {c for c in planned if c in journal.results}
    for case, result in journaled_results(suite, journal, done):
        score = score_case(case, result, scoring)
        episode = tally.add(case, score, index[case.id])
        if sink is not None:
            sink.submit(case, score)
            if episode is not None:
                submit_episode(sink, episode)
    if sink is not None:
        for (case_id, _), record in journal.repeated.items():
            again = suite.case(case_id)
            if again is not None:
                sink.submit(again, score_case(again, CaseResult.from_dict(record), scoring))
    # free-running: every episode's turns run in order in `run_free`, not here
    missing = set() if free else set(journal.missing)
    repeats = journal.missing_repetitions

    def cases() -> Iterator[tuple[Case, int]]:
        for case in suite.cases.select(missing):
            yield case, 1
        # each later repetition's cases in one pass over the case file, as the first's
        for repetition, ids in groupby(repeats, key=itemgetter(1)):
            for case in suite.cases.select({case_id for case_id, _ in ids}):
                yield case, repetition

    pipeline = CasePipeline(
        journal,
        scoring,
        tally,
        index,
        mutator,
        span or no_span,
        sink,
        on_case,
        judge,
        ordered=free,
        figures=scoring.accumulator()
        if journal.header.scores_fingerprint == scores_fingerprint(scoring, suite.cases_hash)
        else None,
    )
    todo = cases()

    async def worker() -> None:
        # `todo` is shared by the workers; its next() never awaits
        for ran, (case, repetition) in enumerate(todo, 1):
            await pipeline.run(case, repetition)
            if ran % YIELD_EVERY == 0:
                await asyncio.sleep(0)

    workers = max(1, min(concurrency, len(missing) + len(repeats)))
    try:
        if free and tally.episodes is not None:
            assert suite.episodes is not None
            await run_free(
                suite,
                _PipelineTurns(journal, pipeline),
                tally.episodes.plan,
                on_error=suite.episodes.on_error,
                concurrency=concurrency,
            )
        async with asyncio.TaskGroup() as group:
            for _ in range(workers):
                group.create_task(worker())
    except BaseExceptionGroup as failed:
        # What escapes a worker stops the run (a journal that cannot be written, a bug): raise
        # the first error itself, not a group, so the command's error boundary can word it.
        raise _first_error(failed) from None
    finally:
        journal.flush()  # what was produced is on disk, also on Ctrl-C
    if not journal.missing and not journal.missing_repetitions:
        await asyncio.to_thread(journal.append_end)
    return tally


@dataclass(frozen=True, slots=True)
class _PipelineTurns:
    """The `stateval.episodes.TurnRunner` of a run: its journal recalls a turn, its pipeline
    runs (or records as skipped), journals, scores and hands it on."""

    journal: Journal
    pipeline: CasePipeline

    def done(self, case_id: str) -> CaseResult | None:
        record = self.journal.results.get(case_id)
        return None if record is None else CaseResult.from_dict(record)

    async def run(self, case: Case, pre_state: InterpretiveState | None) -> CaseResult:
        return await self.pipeline.run(case, pre_state=pre_state)

    async def skip(self, case: Case, failed: str) -> None:
        await self.pipeline.record(
            case,
            CaseResult(
                case_id=case.id,
                post_state=None,
                error=f"not run: turn {failed!r} of its episode failed (episodes.on_error: skip)",
                error_type=SKIPPED,
                time_used=0.0,
            ),
        )


def _first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
