"""The local pipeline per case, and rescoring against the run it rescores, in one process.

On bench_scale.py's generated suite (20-field flat states, ten fields changed by each input,
one of them wrong; a trivial ``python`` mutator), each measured with the process's CPU time
(every thread: the journal's writer and the mutator's worker threads count):

(a) the floor: a bare loop doing per case what the pipeline cannot avoid: ``orjson.loads`` of
    the case line, a dict compare of the expected and produced states (the bare loop of
    bench_scale.py), ``orjson.dumps`` of a result record of the post-state;
(b) a run as ``stateval run SUITE --no-phoenix`` does it, without the interpreter's start-up:
    ``load_suite`` (the validating pass over the case file), ``start_journal``, ``run_suite``
    (cases, mutator calls, journal, scores, tally, summary);
(c) ``stateval rescore`` of that run: ``load_suite`` without the mutator, ``Journal.open``,
    ``rescore`` (the journaled post-states scored and counted again, summary).

It prints cases per CPU-second of (b), its ratio to the floor (a), and rescore / run: the run
and the rescore are the median of ``--rounds`` rounds (the parts alternate, so load on a shared
machine falls on both alike), the floor the least of them (it moved 9-16 us a case from round
to round under load), with the load average.

Usage:
    python bench/bench_pipeline.py                  # 20,000 cases, 3 rounds
    python bench/bench_pipeline.py --cases 100000 --rounds 1
    python bench/bench_pipeline.py --varied         # which fields change varies by case
    python bench/bench_pipeline.py --async-mutator  # the mutator written `async def`
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

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import bare_compare, write_suite

TARGETS = {"cases_per_cpu_s": 10_000.0, "rescore_vs_run": 0.8}


def _mark(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def floor(cases: Path, varied: bool = False) -> float:
    """(a): CPU seconds of the bare per-case loop over the case file."""
    start = time.process_time()
    with cases.open("rb") as handle:
        for line in handle:
            case = orjson.loads(line)
            expected = case["expected_post_state"]
            actual = dict(case["pre_state"])
            if varied:  # the varied mutator's work
                i, changed, wrong = case["input"]["prompt"].split(":")
                for j in changed.split(","):
                    actual[f"f{j}"] = "wrong" if j == wrong else f"v{i}.{j}"
            else:
                actual.update({f"f{j}": f"v{case['input']['prompt']}.{j}" for j in range(10)})
                actual["f3"] = "wrong"
            bare_compare(expected, actual)
            orjson.dumps({"kind": "result", "case_id": case["id"], "post_state": actual})
    return time.process_time() - start


def run(suite_path: Path, home: Path) -> tuple[float, str]:
    """(b): CPU seconds of loading the suite and running it (no Phoenix); the run id."""
    from stateval.run import start_journal
    from stateval.suite import load_suite
    from stateval.upload import run_suite

    start = time.process_time()
    suite = load_suite(suite_path)
    journal = start_journal(home, suite)
    outcome = asyncio.run(run_suite(suite, journal, concurrency=suite.model.concurrency))
    cpu = time.process_time() - start
    if outcome.summary.n_cases != len(suite.cases):
        raise SystemExit(f"!! {len(suite.cases)} cases, {outcome.summary.n_cases} scored")
    return cpu, journal.run_id


def rescore(suite_path: Path, home: Path, run_id: str) -> tuple[float, float]:
    """(c): CPU seconds of rescoring the run; its overall match rate."""
    from stateval.run import Journal
    from stateval.run import rescore as rescore_run
    from stateval.suite import load_suite

    start = time.process_time()
    suite = load_suite(suite_path, load_mutator=False)
    summary = rescore_run(suite, Journal.open(home, run_id))
    return time.process_time() - start, summary.overall_match_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--varied",
        action="store_true",
        help="vary which fields each case changes and gets wrong (bench_scale.varied_plan); "
        "by default every case changes the same ten fields and gets the fourth wrong",
    )
    parser.add_argument(
        "--async-mutator",
        action="store_true",
        help="the same mutator written `async def`: called in the event loop, not in a thread",
    )
    args = parser.parse_args()
    n = args.cases
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    floors: list[float] = []
    runs: list[float] = []
    rescores: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        folder = Path(tmp)
        suite_path = write_suite(folder, n, varied=args.varied, asynchronous=args.async_mutator)
        os.chdir(folder)  # the suite's mutator module is found from its folder
        warm = write_suite(folder / "warm", 50, varied=args.varied, asynchronous=args.async_mutator)
        run(warm, folder / "warm-home")  # imports, caches
        for i in range(args.rounds):
            home = folder / f"home-{i}"
            floors.append(floor(folder / "cases.jsonl", args.varied))
            cpu, run_id = run(suite_path, home)
            runs.append(cpu)
            again, rate = rescore(suite_path, home, run_id)
            rescores.append(again)
            print(
                f"    round {i + 1}: floor {floors[-1] / n * 1e6:6.1f} us/case, run "
                f"{cpu / n * 1e6:6.1f} us/case ({n / cpu:7,.0f} cases/CPU-s), rescore "
                f"{again / n * 1e6:6.1f} us/case ({again / cpu:.2f}x the run; overall match "
                f"{rate:.3f}), load {os.getloadavg()[0]:.1f}"
            )
    # The floor is the least its loop took: on a shared machine a slower round measures the
    # neighbours, and the ratio to the floor should move with the run, not with them.
    bare = min(floors)
    cpu, again = (statistics.median(x) for x in (runs, rescores))
    rate, ratio = n / cpu, again / cpu
    kind = "varied fields" if args.varied else "the same ten fields changed"
    kind += ", an async def mutator" if args.async_mutator else ""
    print(f"{n:,} cases, 20 fields ({kind}), median of {args.rounds} round(s):")
    print(
        f"    floor (orjson line, dict compare, orjson record; least of the rounds): "
        f"{bare / n * 1e6:6.1f} us/case"
    )
    print(
        f"    run (load + run, no Phoenix): {cpu / n * 1e6:6.1f} us/case, {rate:,.0f} cases per "
        f"CPU-second, {cpu / bare:.1f}x the floor (target >= {TARGETS['cases_per_cpu_s']:,.0f}:"
        f" {_mark(rate >= TARGETS['cases_per_cpu_s'])})"
    )
    print(
        f"    rescore (load + rescore): {again / n * 1e6:6.1f} us/case, {ratio:.2f}x the run "
        f"(target <= {TARGETS['rescore_vs_run']:g}: {_mark(ratio <= TARGETS['rescore_vs_run'])})"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
