"""A synchronous callable's calls in worker threads, several per thread hop while they are cheap.

`asyncio.to_thread` per call costs a hand-off each way (an executor future, an asyncio future,
a wake-up of the event loop, the GIL passed between threads): for a callable of ~10 µs that is
most of a local run's CPU. `ThreadCalls` queues the calls made in one turn of the event loop
and, once calls have been cheap for a while, hands the queue to a thread of its own (started
when needed, gone after `_IDLE` seconds without work), which runs the calls one after the
other and delivers their results in one wake-up of the loop (no executor future, no asyncio
future chained to it). Each call runs in a copy of its caller's context, as with
`asyncio.to_thread`, and gets its own result or exception.

A blocking callable keeps running concurrently: when a batch has not finished `STEAL_AFTER`
after it was handed over (its thread is busy with it, or with an earlier batch), the calls not
yet started are taken back and each runs in a thread of the loop's default executor; a call
that takes `SLOW` or more (or a batch taken back) sends calls one per executor thread again
until `FAST_RUN` calls in a row have been cheap. A call that blocks stalls the other calls of
its batch for at most `STEAL_AFTER`: those behind it run elsewhere then, and those it ran
before it are answered then.

A callable whose calls have been quicker than `QUICK` `INLINE_AFTER` times (none taking
`SLOW` or more meanwhile, and at most one in 16 of them slower than `QUICK`: a call the machine
paused) is only computing (rules, lookups): its calls then run in the event loop's own thread,
as an ``async def`` mutator's do, since handing one over to a thread and back costs more than
the call (and the interpreter lock would run it alone anyway). Such a call still runs as if in
a thread: in a copy of its caller's context, with no running event loop (``asyncio.run`` works
in it). One that takes `SLOW` or more sends the calls back to threads; they must then be quick
twice as many times before they run in the loop again, so a callable that blocks now and then
stalls the loop a few times in a run at most, each time for one call. ``inline=False`` keeps
every call in a thread (a callable whose calls wait for one another).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
import time
import weakref
from asyncio import events
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["FAST_RUN", "INLINE_AFTER", "QUICK", "SLOW", "STEAL_AFTER", "ThreadCalls"]

SLOW = 0.001
"""Seconds: a call that takes this long or longer is not cheap."""

STEAL_AFTER = 0.005
"""Seconds a batch's thread may stay busy before the calls it has not started are taken back."""

FAST_RUN = 8
"""Cheap calls in a row after which calls are batched."""

QUICK = 0.00005
"""Seconds: a call quicker than this costs about what its thread hop costs, or less."""

INLINE_AFTER = 256
"""Quick calls after which calls run in the event loop's thread (doubled each time a call run
there took `SLOW` or more)."""

_IDLE = 1.0  # seconds the batches' thread waits for work before it exits


@dataclass(slots=True)
class _Call:
    args: tuple[Any, ...]
    context: contextvars.Context
    future: asyncio.Future[Any]


@dataclass(slots=True)
class _Batch:
    loop: asyncio.AbstractEventLoop
    batch: deque[_Call]  # the calls not yet started (the thread and `_steal` take from it)
    calls: tuple[_Call, ...]
    steal: asyncio.TimerHandle
    outcomes: deque[_Outcome]  # the calls run and not yet answered (the loop takes from it)


@dataclass(slots=True)
class _Outcome:
    call: _Call
    value: Any
    error: BaseException | None
    seconds: float


class ThreadCalls:
    """Calls ``fn`` in worker threads: its own for batches of cheap calls, else the running
    loop's default executor (see the module docstring).

    Args:
        fn: A synchronous callable.
        inline: Whether its calls may run in the event loop's thread once they have been
            quick `INLINE_AFTER` times.

    Example:
        >>> import asyncio
        >>> calls = ThreadCalls(lambda x: x * 2)
        >>> async def main() -> list[int]:
        ...     return list(await asyncio.gather(*(calls.call(i) for i in range(20))))
        >>> asyncio.run(main())[-3:]
        [34, 36, 38]
    """

    def __init__(self, fn: Callable[..., Any], *, inline: bool = True) -> None:
        self._fn = fn
        self._cheap = 0  # cheap calls in a row
        self._quick = 0  # quick calls since the last slow one
        self._other = 0  # calls neither quick nor slow among them
        # quick calls after which calls run in the loop's thread (None: never)
        self._inline_after: int | None = INLINE_AFTER if inline else None
        self._inline = False  # calls run in the loop's thread now
        self._queued: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[_Call]] = (
            weakref.WeakKeyDictionary()
        )
        self._batches: queue.SimpleQueue[_Batch] = queue.SimpleQueue()
        self._server: threading.Thread | None = None  # the thread running the batches
        self._server_lock = threading.Lock()

    async def call(self, *args: Any) -> Any:
        """``fn(*args)`` in a worker thread (or, once its calls are quick, in the loop's); its
        result, or the exception it raised."""
        if self._inline:
            return self._inline_call(args)
        loop = asyncio.get_running_loop()
        call = _Call(args, contextvars.copy_context(), loop.create_future())
        if self._cheap < FAST_RUN:
            self._start(loop, deque((call,)))
        else:
            queued = self._queued.get(loop)
            if queued is None:
                queued = self._queued[loop] = []
            if not queued:  # the first call of this turn: the queue leaves after the turn
                loop.call_soon(self._flush, loop)
            queued.append(call)
        return await call.future

    def _inline_call(self, args: tuple[Any, ...]) -> Any:
        """``fn(*args)`` in the loop's thread, in a copy of the caller's context and with no
        running loop, as in a worker thread; a call that takes `SLOW` or more sends the calls
        back to threads."""
        loop = events._get_running_loop()
        events._set_running_loop(None)
        start = time.perf_counter()
        try:
            return contextvars.copy_context().run(self._fn, *args)
        finally:
            seconds = time.perf_counter() - start
            events._set_running_loop(loop)
            if seconds >= SLOW and self._inline:
                self._inline = False
                self._quick = self._other = self._cheap = 0
                if self._inline_after is not None:
                    self._inline_after *= 2

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        queued = self._queued.get(loop)
        if queued:
            batch, outcomes = deque(queued), deque[_Outcome]()
            queued.clear()
            steal = loop.call_later(STEAL_AFTER, self._steal, loop, batch, outcomes)
            with self._server_lock:
                self._batches.put(_Batch(loop, batch, tuple(batch), steal, outcomes))
                if self._server is None:
                    self._server = threading.Thread(
                        target=self._serve, name="stateval-mutator-calls", daemon=True
                    )
                    self._server.start()

    def _serve(self) -> None:
        """In the batches' thread: run each batch handed over, in order, and hand its outcomes
        back to its loop; exit after `_IDLE` seconds without one."""
        while True:
            try:
                given = self._batches.get(timeout=_IDLE)
            except queue.Empty:
                with self._server_lock:  # a batch handed over meanwhile finds the thread alive
                    if self._batches.empty():
                        self._server = None
                        return
                continue
            problem: BaseException | None = None
            try:
                _run(self._fn, given.batch, given.outcomes)
            except BaseException as exc:  # not a call's own failure (those are in the outcomes)
                problem = exc
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for them
                given.loop.call_soon_threadsafe(self._delivered, given, problem)
            del given, problem  # not kept (nor their loop) while waiting for the next batch

    def _delivered(self, given: _Batch, problem: BaseException | None) -> None:
        given.steal.cancel()
        self._answer(given.outcomes)
        if problem is not None:
            _fail(given.calls, problem)

    def _start(self, loop: asyncio.AbstractEventLoop, batch: deque[_Call]) -> None:
        calls, outcomes = tuple(batch), deque[_Outcome]()
        try:
            done = loop.run_in_executor(None, _run, self._fn, batch, outcomes)
        except Exception as exc:  # the executor is shut down: the loop is closing
            _fail(calls, exc)
            return
        steal = (
            loop.call_later(STEAL_AFTER, self._steal, loop, batch, outcomes)
            if len(calls) > 1
            else None
        )
        done.add_done_callback(lambda ran: self._finish(ran, calls, steal, outcomes))

    def _steal(
        self, loop: asyncio.AbstractEventLoop, batch: deque[_Call], outcomes: deque[_Outcome]
    ) -> None:
        """The batch's thread is still busy: the calls it ran are answered, and each call it
        has not started gets its own thread."""
        self._cheap = self._quick = self._other = 0
        self._answer(outcomes)
        while True:
            try:
                call = batch.popleft()  # atomic: the thread takes calls the same way
            except IndexError:
                return
            if not call.future.done():
                self._start(loop, deque((call,)))

    def _finish(
        self,
        ran: asyncio.Future[None],
        calls: tuple[_Call, ...],
        steal: asyncio.TimerHandle | None,
        outcomes: deque[_Outcome],
    ) -> None:
        if steal is not None:
            steal.cancel()
        self._answer(outcomes)
        problem = asyncio.CancelledError() if ran.cancelled() else ran.exception()
        if problem is not None:  # not a call's own failure (those are answered)
            _fail(calls, problem)

    def _answer(self, outcomes: deque[_Outcome]) -> None:
        """Answer each call run and not yet answered (atomic: the thread appends to them)."""
        while True:
            try:
                outcome = outcomes.popleft()
            except IndexError:
                return
            future = outcome.call.future
            self._count(outcome.seconds)
            if future.done():  # its caller was cancelled (Ctrl-C)
                continue
            if outcome.error is not None:
                future.set_exception(outcome.error)
            else:
                future.set_result(outcome.value)

    def _count(self, seconds: float) -> None:
        """Count a call's time run in a thread: batch cheap calls, run quick ones inline."""
        if seconds >= SLOW:
            self._cheap = self._quick = self._other = 0
            return
        self._cheap += 1
        after = self._inline_after
        if after is None:
            return
        if seconds < QUICK:
            self._quick += 1
            if self._quick >= after:
                self._inline = True
        else:
            self._other += 1
            if 16 * self._other > after:  # more than one in 16 not quick: count again
                self._quick = self._other = 0


def _fail(calls: tuple[_Call, ...], problem: BaseException) -> None:
    for call in calls:
        if not call.future.done():
            call.future.set_exception(problem)


def _run(fn: Callable[..., Any], batch: deque[_Call], out: deque[_Outcome]) -> None:
    """In a worker thread: the batch's calls one after the other, until none is left (or
    the loop took the rest back), each outcome added to ``out`` as soon as it is known (a
    batch taken back has the ones run so far answered at once)."""
    clock = time.perf_counter
    while True:
        try:
            call = batch.popleft()
        except IndexError:
            return
        start = clock()
        try:
            value, error = call.context.run(fn, *call.args), None
        except BaseException as exc:  # handed to the caller, as asyncio.to_thread does
            value, error = None, exc
        out.append(_Outcome(call, value, error, clock() - start))
