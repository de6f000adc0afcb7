"""One case through a run: the mutator call (traced), the judge, the journal, the scores, the
tally and the sinks. The runner feeds it cases concurrently (teacher-forced) or an episode's
turns in order (free-running, `stateval.episodes.run_free`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from stateval.compare import MetricsAccumulator
from stateval.episodes import EpisodeScore
from stateval.evaluation import MutatorOutcome, call_mutator
from stateval.mutators import Mutator, bind_case
from stateval.run._compact_scores import SCORES_KEY, compact_scores, compact_scores_json
from stateval.run._journal import Journal
from stateval.run._judging import judge_result
from stateval.run._result_line import result_line
from stateval.run._results import CaseResult, CaseScore
from stateval.run._scoring import Scoring, score_case
from stateval.run._tally import RunTally
from stateval.state import InterpretiveState
from stateval.suite import Case

if TYPE_CHECKING:
    from stateval.phoenix import FieldJudge

__all__ = ["CasePipeline", "CaseSpan", "SpanFactory", "no_span", "submit_episode"]


class CaseSpan(Protocol):
    """What the runner needs from a mutator-call span."""

    @property
    def trace_id(self) -> str | None:
        """The span's trace id (hex), or None when not recorded."""
        ...

    def set_output(self, value: object) -> None:
        """Record the mutator's output."""
        ...


SpanFactory = Callable[[Case], AbstractContextManager[CaseSpan]]
"""Opens the span a case's mutator call runs in."""


class _Sink(Protocol):
    def submit(self, case: Case, score: CaseScore) -> None: ...


@dataclass(frozen=True, slots=True)
class _NoSpan:
    """A span that records nothing; one object serves every case as its own context."""

    trace_id: str | None = None

    def set_output(self, value: object) -> None:
        """Nothing is recorded."""

    def __enter__(self) -> CaseSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


def no_span(case: Case) -> AbstractContextManager[CaseSpan]:
    """A span factory that records nothing (the same shared object for every case: not a
    generator-based context manager made per case)."""
    return _NO_SPAN


def submit_episode(sink: object, episode: EpisodeScore) -> None:
    """``sink.submit_episode(episode)`` when the sink has that method."""
    take = getattr(sink, "submit_episode", None)
    if callable(take):
        take(episode)


@dataclass(slots=True)
class CasePipeline:
    """What every case of a run goes through (see the module docstring).

    Attributes:
        journal: The run's journal.
        scoring: How cases are scored.
        tally: Counts every first repetition's scores.
        index: Case id -> its place in the plan.
        mutator: The system under test.
        open_span: Opens the span of a mutator call.
        sink: Receives each scored case (and each complete episode) once it is durable.
        on_case: Called with each newly scored case.
        judge: Rules on LLM-judged fields.
        ordered: Each episode's turns are journaled in turn order (free-running), so an
            episode's last turn being durable means all of them are.
        figures: When the run journals each case's scores for ``stateval diff`` (its
            header's ``scores_fingerprint`` is this scoring's), an accumulator of this
            scoring that counts nothing (`stateval.run.compact_scores`); else None.
    """

    journal: Journal
    scoring: Scoring
    tally: RunTally
    index: dict[str, int]
    mutator: Mutator
    open_span: SpanFactory = no_span
    sink: _Sink | None = None
    on_case: Callable[[CaseScore], None] | None = None
    judge: FieldJudge | None = None
    ordered: bool = False
    figures: MetricsAccumulator | None = None
    _judged: bool = field(default=True, init=False, repr=False)  # some policy asks a judge

    def __post_init__(self) -> None:
        self._judged = self.scoring.policies.has_judge  # asked once, not per case

    async def run(
        self, case: Case, repetition: int = 1, pre_state: InterpretiveState | None = None
    ) -> CaseResult:
        """Call the mutator on ``case`` (from ``pre_state`` instead of the case's own when
        given), judge, journal, score and hand on the result; return it."""
        mutator = bind_case(self.mutator, case.id, case.actual_post_state)
        started = _utc_now()
        span: CaseSpan | None = None
        if self.open_span is no_span:  # nothing is recorded: no span is opened
            given = case.pre_state if pre_state is None else pre_state
            called = await call_mutator(mutator, given, case.input)
            trace_id = span_id = None
        else:
            traced = case if pre_state is None else replace(case, pre_state=pre_state)
            called, span, trace_id, span_id = await _traced_call(self.open_span, traced, mutator)
        time_used, post_state, error, error_type, raw_output = called
        result = CaseResult(  # positional, in field order (once a case)
            case.id,
            post_state,
            error,
            error_type,
            time_used,
            trace_id,
            raw_output,
            started,
            (),
            span_id,
            repetition,
            pre_state,
        )
        if not self._judged:  # `judge_result` would hand the result back as it is
            return await self.record(case, result)
        reenter = getattr(span, "reenter", None)
        try:
            with reenter() if callable(reenter) else nullcontext():
                result = await judge_result(case, result, self.scoring.policies, self.judge)
        except Exception as exc:
            result = result.failed("judging", exc)
        return await self.record(case, result)

    async def record(self, case: Case, result: CaseResult) -> CaseResult:
        """Score, journal, count and hand on a case's result (one the mutator produced, or a
        skipped turn's); return it."""
        journal, scoring = self.journal, self.scoring
        try:
            score = score_case(case, result, scoring)
        except Exception as exc:
            # A check or metric that cannot take this case's values fails the case only.
            score = score_case(case, result.failed("scoring", exc), scoring)
        if self.sink is not None:
            # The sink reads the evaluations: made here, before the case is counted, so that a
            # failure to make them is this case's error (see CaseScore) everywhere.
            _ = score.evaluations
        first = result.repetition == 1
        episode = self.tally.add(case, score, self.index[case.id]) if first else None
        durable = self._journaled(case, score)
        result = score.result  # the case's error, when making its scores failed
        if self.sink is not None:
            await asyncio.wrap_future(durable)
            self.sink.submit(case, score)
            if episode is not None:
                if not self.ordered:
                    # its other turns were journaled by other workers: they are durable too
                    await asyncio.to_thread(journal.flush)
                submit_episode(self.sink, episode)
        if self.on_case is not None:
            self.on_case(score)
        return result

    def _journaled(self, case: Case, score: CaseScore) -> Future[None]:
        """Journal the result record of a scored case: its result, and its scores when the
        run journals them (and they can be made); a first repetition's as a line made from
        encoded parts (`result_line`), any other from its dict. The future is done once the
        record is durable."""
        figures, first = self.figures, score.result
        if first.repetition == 1 and first.pre_state is None:
            encoded, lined = None, True
            if figures is not None:
                try:
                    encoded = compact_scores_json(case, score, self.scoring, figures)
                except orjson.JSONEncodeError:
                    lined = False  # their dict goes to `encode_result` with the record's
                except Exception:
                    encoded = None  # the diff scores this case again
            # the result read after its scores: making them may have made it the case's error
            line = result_line(score.result, case.id, encoded) if lined else None
            if line is not None:
                return self.journal.submit_result_line(case.id, line)
        scores = None
        if figures is not None:
            try:
                scores = compact_scores(case, score, self.scoring, figures)
            except Exception:
                scores = None  # the diff scores this case again
        record = score.result.to_dict()
        if scores is not None:
            record[SCORES_KEY] = scores
        return self.journal.submit_result(case.id, record)


async def _traced_call(
    open_span: SpanFactory, case: Case, mutator: Mutator
) -> tuple[MutatorOutcome, CaseSpan, str | None, str | None]:
    """The mutator's call on ``case`` inside its span (the span records its output); the
    call's outcome, the span, its trace id and its span id."""
    with open_span(case) as span:
        called = await call_mutator(mutator, case.pre_state, case.input)
        post_state, error, error_type = called[1], called[2], called[3]
        output: Any = (
            post_state if post_state is not None else {"error": error, "error_type": error_type}
        )
        span.set_output(output)
        trace_id = span.trace_id
        span_id = getattr(span, "span_id", None)
    return called, span, trace_id, span_id if isinstance(span_id, str) else None


class _UtcNow:
    """``datetime.now(UTC).isoformat()``, the same text, made from `time.time_ns` with the
    date and the time of day formatted once a second (the datetime's own isoformat cost
    ~2 us a case)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        # (second, its text without the offset) in one attribute: a thread that reads it
        # while another replaces it gets both of one second, never a mix of two
        self._last: tuple[int, str] = (-1, "")

    def __call__(self) -> str:
        return self.at(time.time_ns())

    def at(self, ns: int) -> str:
        """The ISO 8601 text of ``ns`` nanoseconds since the epoch, to the microsecond
        (floored, as `datetime.now` does), UTC."""
        second, rest = divmod(ns, 1_000_000_000)
        last = self._last
        if last[0] != second:
            # "+00:00" left off: it follows the fraction
            last = self._last = (second, datetime.fromtimestamp(second, UTC).isoformat()[:-6])
        micro = rest // 1000
        # isoformat leaves the fraction out when it is zero
        return f"{last[1]}.{micro:06d}+00:00" if micro else f"{last[1]}+00:00"


_utc_now = _UtcNow()
