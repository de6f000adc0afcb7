"""One case through a run (`stateval.run._pipeline`): the mutator's call recorded as a
`CaseResult` without a span when nothing is traced, its start time, a mutator that changes
its case's own pre-state recorded as that case's error while the run goes on, and a run whose
calls never wait still letting other tasks run."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from stateval import (
    InterpretiveState,
    StructuredInput,
    Suite,
    ValueConfidence,
    load_suite,
    run_suite,
    start_journal,
)
from stateval.mutators import PythonMutator
from stateval.run import Journal
from stateval.run._pipeline import _UtcNow
from stateval.run._runner import YIELD_EVERY

_LAST_NS = 253_402_300_799 * 10**9 + 999_999_999  # 9999-12-31T23:59:59.999999999


def _isoformat(ns: int) -> str:
    """What `datetime.now(UTC).isoformat()` gives at ``ns`` (its microseconds floored)."""
    seconds, rest = divmod(ns, 10**9)
    return datetime.fromtimestamp(seconds, UTC).replace(microsecond=rest // 1000).isoformat()


@given(
    st.integers(0, _LAST_NS - 10 * 10**9),
    st.lists(st.integers(0, 10 * 10**9), max_size=20),
    st.sampled_from([0, 999, 1000, 999_999_000, 1]),
)
def test_the_start_time_is_the_text_datetime_isoformat_gives(
    base: int, offsets: list[int], nudge: int
) -> None:
    clock = _UtcNow()
    # times close together (the same second, formatted once) and apart, in any order,
    # whole seconds among them (isoformat leaves the fraction out)
    for ns in [base, base - base % 10**9 + nudge, *(base + o for o in offsets)]:
        assert clock.at(ns) == _isoformat(ns)


def test_the_clock_reads_now() -> None:
    before = datetime.now(UTC)
    stamp = _UtcNow()()
    after = datetime.now(UTC)
    assert before <= datetime.fromisoformat(stamp) <= after


def _suite(tmp_path: Path, n: int = 4) -> Suite:
    cases = [
        {"id": f"c{i}", "input": {"prompt": f"p{i}"}, "expected_post_state": {"area": f"p{i}"}}
        for i in range(n)
    ]
    path = tmp_path / "suite.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "mutator": {"type": "python", "callable": "builtins:print"},
                "cases": {"inline": cases},
            }
        )
    )
    return load_suite(path, load_mutator=False)


def test_an_untraced_run_records_each_call_with_its_start_and_no_span(tmp_path: Path) -> None:
    def fill(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        if input.prompt == "p2":
            raise ValueError("no\narea")
        return InterpretiveState.from_flat({"area": input.prompt})

    suite = dataclasses.replace(_suite(tmp_path), mutator=PythonMutator(fill))
    journal = start_journal(tmp_path / "home", suite)
    before = datetime.now(UTC)
    outcome = asyncio.run(run_suite(suite, journal, concurrency=2))
    after = datetime.now(UTC)
    assert outcome.summary.n_cases == 4
    assert outcome.summary.n_errors == 1
    records = Journal.open(tmp_path / "home", journal.run_id).results
    for case_id, record in records.items():
        assert before <= datetime.fromisoformat(record["started_at"]) <= after
        assert record["trace_id"] is None
        assert record["span_id"] is None
        assert record["time_used"] >= 0.0
        assert "repetition" not in record
        assert "pre_state" not in record
        if case_id == "c2":
            assert record["error"] == "no area"
            assert record["error_type"] == "ValueError"
            assert record["post_state"] is None
        else:
            assert record["error"] is None
            assert (
                record["post_state"]
                == InterpretiveState.from_flat({"area": "p" + case_id[1:]}).to_dict()
            )


def test_a_mutator_changing_its_cases_own_pre_state_is_that_cases_error(tmp_path: Path) -> None:
    loaded = _suite(tmp_path)
    originals = {c.id: c.pre_state for c in loaded.cases}

    def reach(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        if input.prompt == "p1":  # through a closure, not the copy it was given
            originals["c1"].set_value("area", ValueConfidence("changed", 1.0))
        return InterpretiveState.from_flat({"area": input.prompt})

    suite = dataclasses.replace(loaded, mutator=PythonMutator(reach))
    journal = start_journal(tmp_path / "home", suite)
    outcome = asyncio.run(run_suite(suite, journal, concurrency=1))
    assert outcome.summary.n_cases == 4
    records = Journal.open(tmp_path / "home", journal.run_id).results
    assert "changed the pre_state" in records["c1"]["error"]
    assert records["c1"]["error_type"] == "MutatorError"
    assert all(records[c]["error"] is None for c in ("c0", "c2", "c3"))


async def test_a_run_whose_calls_never_wait_lets_other_tasks_run(tmp_path: Path) -> None:
    # an `async def` mutator that only computes (as a sync one run in the loop's thread): no
    # case awaits anything, yet the loop runs other tasks (Ctrl-C's cancellation) meanwhile
    calls = 0

    async def fill(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        nonlocal calls
        calls += 1
        return InterpretiveState.from_flat({"area": input.prompt})

    workers, n = 2, 8 * YIELD_EVERY
    suite = dataclasses.replace(_suite(tmp_path, n), mutator=PythonMutator(fill))
    journal = start_journal(tmp_path / "home", suite)
    seen: list[int] = []

    async def watch() -> None:
        seen.append(calls)  # how far the run had gone when this task first ran

    run = asyncio.ensure_future(run_suite(suite, journal, concurrency=workers))
    await asyncio.sleep(0)  # the run starts first
    await asyncio.gather(watch(), run)
    assert run.result().summary.n_cases == n
    assert seen
    assert seen[0] <= workers * YIELD_EVERY < n
