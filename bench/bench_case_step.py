"""The per-case cost around the mutator call, measured interleaved within one run.

On bench_scale.py's generated suite (20-field flat states, a trivial ``python`` mutator), one
run's `CasePipeline.run` alternates every ``--block`` cases between the pipeline's own step and
a bare one (the mutator's ``mutate`` awaited and its state recorded: no `call_mutator` copy
and check, no binding, no start time, no span decision), and the main thread's CPU time
(`time.thread_time`) is added up for each. Both halves meet the same load at the same moments,
so their difference, the wrapper around the mutator call, is resolved to about a microsecond
on a shared machine where two separate runs differ by tens.

The mutator is written ``async def`` by default: no case is in flight when the step changes,
so each case's main-thread time goes to its own half. With ``--sync-mutator`` each call waits
for a worker thread and the cases on either side of a switch overlap: the difference is then
rougher.

Usage:
    python bench/bench_case_step.py                   # 20,000 cases, 5 rounds
    python bench/bench_case_step.py --cases 5000 --rounds 9 --block 50
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import write_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--block", type=int, default=100, help="cases before the step changes")
    parser.add_argument("--sync-mutator", action="store_true", help="the mutator a plain def")
    args = parser.parse_args()

    from stateval.run import CaseResult, start_journal
    from stateval.run._pipeline import CasePipeline
    from stateval.suite import load_suite
    from stateval.upload import run_suite

    n, block = args.cases, args.block
    pipeline_step = CasePipeline.run

    async def bare_step(
        self: CasePipeline, case: Any, repetition: int = 1, pre_state: Any = None
    ) -> CaseResult:
        post = await self.mutator.mutate(case.pre_state, case.input)
        return await self.record(case, CaseResult(case.id, post, None, None, 0.0))

    steps = (pipeline_step, bare_step)
    clock: dict[str, Any] = {}

    async def alternate(
        self: CasePipeline, case: Any, repetition: int = 1, pre_state: Any = None
    ) -> CaseResult:
        clock["k"] += 1
        if clock["k"] % block == 0:
            now, side = time.thread_time(), clock["side"]
            clock["cpu"][side] += now - clock["at"]
            clock["n"][side] += block
            clock["at"], clock["side"] = now, 1 - side
        return await steps[clock["side"]](self, case, repetition, pre_state)

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    per_round: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-case-step-") as tmp:
        folder = Path(tmp)
        suite_path = write_suite(folder, n, asynchronous=not args.sync_mutator)
        os.chdir(folder)  # the suite's mutator module is found from its folder
        suite = load_suite(suite_path)
        CasePipeline.run = alternate  # type: ignore[method-assign]
        try:
            for i in range(args.rounds):
                clock.update(k=0, side=i % 2, at=time.thread_time(), cpu=[0.0, 0.0], n=[0, 0])
                journal = start_journal(folder / f"home-{i}", suite)
                outcome = asyncio.run(
                    run_suite(suite, journal, concurrency=suite.model.concurrency)
                )
                if outcome.summary.n_cases != n:
                    raise SystemExit(f"!! {n} cases, {outcome.summary.n_cases} scored")
                if min(clock["n"]) == 0:
                    raise SystemExit(f"!! {n} cases are too few for blocks of {block}")
                full, bare = (clock["cpu"][s] / clock["n"][s] * 1e6 for s in (0, 1))
                per_round.append((full, bare))
                print(
                    f"    round {i + 1}: pipeline step {full:6.1f}, bare step {bare:6.1f} us/case "
                    f"(main thread), load {os.getloadavg()[0]:.1f}"
                )
        finally:
            CasePipeline.run = pipeline_step  # type: ignore[method-assign]
    wrapper = [full - bare for full, bare in per_round]
    kind = "a sync def mutator" if args.sync_mutator else "an async def mutator"
    print(f"{n:,} cases ({kind}), blocks of {block}, median of {args.rounds} round(s):")
    print(
        f"    the step around the mutator call: {statistics.median(wrapper):.1f} us a case "
        f"(rounds {min(wrapper):.1f} to {max(wrapper):.1f}); the whole step "
        f"{statistics.median(f for f, _ in per_round):.1f} us a case"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
