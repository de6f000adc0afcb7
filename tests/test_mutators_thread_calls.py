"""A sync mutator's calls share worker-thread hops while cheap, run in the event loop's thread
once quicker than a hop, and a blocking one still runs concurrently with the others
(stateval.mutators._thread_calls, through PythonMutator)."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
import time
import weakref

import pytest

from stateval import InterpretiveState, PythonMutator, StructuredInput
from stateval.mutators._thread_calls import FAST_RUN, INLINE_AFTER, SLOW, ThreadCalls

CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="none")
HANG_GUARD = 120.0  # seconds: only so that a broken hand-back fails instead of hanging


def track(state: InterpretiveState, input: StructuredInput) -> dict[str, object]:
    if input.prompt.startswith("fail"):
        raise ValueError(f"no state for {input.prompt}")
    return {"said": input.prompt, "caller": CALLER.get()}


async def _called(mutator: PythonMutator, prompt: str) -> dict[str, object] | str:
    CALLER.set(f"task {prompt}")  # each task's own context
    try:
        post = await mutator.mutate(InterpretiveState(), StructuredInput(prompt, "m"))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return post.to_flat()


async def test_each_call_gets_its_own_result_error_and_context_in_every_round() -> None:
    mutator = PythonMutator(track)
    for round_ in range(3):  # the first rounds go one call per thread, later ones batched
        prompts = [f"{'fail' if i % 7 == 3 else 'ok'}-{round_}-{i}" for i in range(3 * FAST_RUN)]
        got = await asyncio.gather(*(_called(mutator, p) for p in prompts))
        for prompt, post in zip(prompts, got, strict=True):
            if prompt.startswith("fail"):
                assert post == f"ValueError: no state for {prompt}"
            else:
                assert post == {"said": prompt, "caller": f"task {prompt}"}


async def test_a_call_that_blocks_does_not_hold_up_the_calls_batched_behind_it() -> None:
    released = threading.Event()

    def waits_or_releases(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        if input.prompt == "wait":  # blocks until a later call of the same batch has run
            if not released.wait(HANG_GUARD):
                raise AssertionError("the call behind the blocking one never ran")
        elif input.prompt == "release":
            released.set()
        return state

    mutator = PythonMutator(waits_or_releases)
    # cheap calls first, so that calls are batched
    for _ in range(2):
        await asyncio.gather(
            *(
                mutator.mutate(InterpretiveState(), StructuredInput("x", "m"))
                for _ in range(FAST_RUN)
            )
        )
    calls = [
        mutator.mutate(InterpretiveState(), StructuredInput(p, "m")) for p in ("wait", "release")
    ]
    await asyncio.gather(*calls)
    assert released.is_set()


async def test_the_calls_run_before_a_blocking_one_of_their_batch_are_answered_meanwhile() -> None:
    released = threading.Event()

    def blocks_until_released(
        state: InterpretiveState, input: StructuredInput
    ) -> InterpretiveState:
        if input.prompt == "block" and not released.wait(HANG_GUARD):
            raise AssertionError("the call batched before the blocking one was never answered")
        return state

    mutator = PythonMutator(blocks_until_released)
    for _ in range(2):  # cheap calls first, so that calls are batched
        await asyncio.gather(
            *(
                mutator.mutate(InterpretiveState(), StructuredInput("x", "m"))
                for _ in range(FAST_RUN)
            )
        )
    before, blocked = (
        asyncio.ensure_future(mutator.mutate(InterpretiveState(), StructuredInput(p, "m")))
        for p in ("before", "block")
    )
    await asyncio.wait_for(asyncio.shield(before), HANG_GUARD)  # answered while "block" waits
    assert not blocked.done()
    released.set()
    await blocked


async def test_a_call_that_blocks_does_not_hold_up_the_batches_handed_over_after_it() -> None:
    # batches run one after the other in one thread: a later batch waiting behind a call
    # that blocks is taken back and run elsewhere
    released = threading.Event()

    def waits_or_releases(prompt: str) -> str:
        if prompt == "wait" and not released.wait(HANG_GUARD):
            raise AssertionError("the batch behind the blocking call never ran")
        if prompt == "release":
            released.set()
        return prompt

    calls = ThreadCalls(waits_or_releases)
    for _ in range(2):  # cheap calls first, so that calls are batched
        await asyncio.gather(*(calls.call("x") for _ in range(FAST_RUN)))
    waiting = asyncio.ensure_future(calls.call("wait"))
    for _ in range(3):  # its batch is handed over in a turn of its own
        await asyncio.sleep(0)
    assert not waiting.done()
    assert await calls.call("release") == "release"
    assert await waiting == "wait"


async def test_a_cancelled_caller_leaves_the_other_calls_of_its_batch_answered() -> None:
    calls = ThreadCalls(lambda x: x)
    for _ in range(2):
        await asyncio.gather(*(calls.call(i) for i in range(FAST_RUN)))
    tasks = [asyncio.ensure_future(calls.call(i)) for i in range(4)]
    await asyncio.sleep(0)  # the calls are made (and queued as one batch)
    tasks[1].cancel()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    assert [done[0], done[2], done[3]] == [0, 2, 3]
    assert isinstance(done[1], asyncio.CancelledError)


def test_a_loop_that_closed_leaves_no_call_waiting() -> None:
    calls = ThreadCalls(lambda x: x + 1)
    for _ in range(3):  # a fresh event loop each time, as evaluate_sync makes one
        assert asyncio.run(calls.call(1)) == 2


@pytest.mark.parametrize("n", [1, FAST_RUN * 4])
async def test_results_come_back_in_the_callers_own_order(n: int) -> None:
    calls = ThreadCalls(lambda x: x * x)
    assert await asyncio.gather(*(calls.call(i) for i in range(n))) == [i * i for i in range(n)]


def test_calls_from_loops_in_two_threads_at_once_each_get_their_own_results() -> None:
    calls = ThreadCalls(lambda x: x * 10)
    both = threading.Barrier(2, timeout=HANG_GUARD)
    got: dict[int, list[int]] = {}

    async def rounds(base: int) -> list[int]:
        out: list[int] = []
        for round_ in range(4):  # the later rounds batched, both loops' batches interleaved
            both.wait()
            out += await asyncio.gather(*(calls.call(base + round_ * 100 + i) for i in range(12)))
        return out

    def run(base: int) -> None:
        got[base] = asyncio.run(rounds(base))

    threads = [threading.Thread(target=run, args=(base,)) for base in (1000, 2000)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD)
    for base in (1000, 2000):
        assert got[base] == [(base + r * 100 + i) * 10 for r in range(4) for i in range(12)]


def test_a_closed_loop_is_not_kept_alive_by_the_calls_it_made() -> None:
    calls = ThreadCalls(lambda x: x)

    async def rounds() -> None:
        for _ in range(3):  # batched from the second round on
            await asyncio.gather(*(calls.call(i) for i in range(FAST_RUN)))

    loop = asyncio.new_event_loop()
    loop.run_until_complete(rounds())
    loop.close()
    gone = weakref.ref(loop)
    del loop
    gc.collect()
    assert gone() is None


class _Where:
    """A callable that notes the thread each call ran in, and whether it had a running loop;
    the calls given in ``slow``, ``fail`` and ``loop`` are slow, fail and run an event loop
    of their own."""

    def __init__(self) -> None:
        self.threads: list[int] = []
        self.slow: set[int] = set()
        self.fail: set[int] = set()
        self.loop: set[int] = set()

    def __call__(self, x: int) -> tuple[int, str, bool]:
        self.threads.append(threading.get_ident())
        if x in self.slow:
            time.sleep(2 * SLOW)  # the call itself is slow (a stand-in for a blocking one)
        if x in self.fail:
            raise ValueError(f"no state for {x}")
        if x in self.loop:
            x = asyncio.run(_doubled(x))
        CALLER.set("changed by the call")  # in its own copy of the context
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            loop = False
        else:
            loop = True
        return x, CALLER.get(), loop


async def _doubled(x: int) -> int:
    await asyncio.sleep(0)
    return 2 * x


async def _until_in_loop_thread(calls: ThreadCalls, where: _Where, most: int) -> int:
    """Batches of calls until one ran in this thread; how many calls that took (at most
    ``most``, else the test fails)."""
    here, made = threading.get_ident(), 0
    while made < most:
        CALLER.set("caller")
        got = await asyncio.gather(*(calls.call(made + i) for i in range(FAST_RUN)))
        assert got == [(made + i, "changed by the call", False) for i in range(FAST_RUN)]
        assert CALLER.get() == "caller"
        made += FAST_RUN
        if where.threads[-1] == here:
            return made
    raise AssertionError(f"no call ran in the loop's thread after {made} quick calls")


async def test_quick_calls_run_in_the_loops_thread_as_if_in_a_thread() -> None:
    where = _Where()
    calls = ThreadCalls(where)
    made = await _until_in_loop_thread(calls, where, 40 * INLINE_AFTER)
    assert made >= INLINE_AFTER  # not before that many quick calls
    here = threading.get_ident()
    assert here not in where.threads[:INLINE_AFTER]
    # now each call runs in this thread, in a copy of its caller's context, with no running
    # loop (asserted by _until_in_loop_thread), and a call's error reaches its caller
    before = len(where.threads)
    await _until_in_loop_thread(calls, where, FAST_RUN)
    assert set(where.threads[before:]) == {here}

    where.fail.add(-7)
    with pytest.raises(ValueError, match="no state for -7"):
        await calls.call(-7)
    assert where.threads[-1] == here


async def test_a_slow_call_in_the_loops_thread_sends_the_calls_back_to_threads() -> None:
    where = _Where()
    calls = ThreadCalls(where)
    first = await _until_in_loop_thread(calls, where, 40 * INLINE_AFTER)
    where.slow.add(-1)
    assert await calls.call(-1) == (-1, "changed by the call", False)
    assert where.threads[-1] == threading.get_ident()  # the slow call ran in the loop's thread
    await asyncio.gather(*(calls.call(i) for i in range(FAST_RUN)))
    assert threading.get_ident() not in where.threads[-FAST_RUN:]  # back in threads
    again = await _until_in_loop_thread(calls, where, 80 * INLINE_AFTER)
    # twice as many quick calls in a row as the first time (the batch above among them)
    assert again >= 2 * INLINE_AFTER - FAST_RUN
    assert first >= INLINE_AFTER


async def test_a_call_in_the_loops_thread_can_run_an_event_loop_of_its_own() -> None:
    where = _Where()
    calls = ThreadCalls(where)
    await _until_in_loop_thread(calls, where, 40 * INLINE_AFTER)
    where.loop.add(-3)  # asyncio.run needs no running loop in its thread
    assert await calls.call(-3) == (-6, "changed by the call", False)
    assert where.threads[-1] == threading.get_ident()
    assert asyncio.get_running_loop().is_running()


async def test_inline_false_keeps_every_call_in_a_thread() -> None:
    where = _Where()
    mutator = PythonMutator(where, inline=False)
    calls = mutator._threads
    for start in range(0, 3 * INLINE_AFTER, FAST_RUN):
        await asyncio.gather(*(calls.call(start + i) for i in range(FAST_RUN)))
    assert threading.get_ident() not in where.threads
