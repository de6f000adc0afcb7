"""``stateval mutate`` on the MultiWOZ 2.1 test set: CPU seconds and peak memory at two mutant
counts, in one run of this script, to show the memory is flat in the number of mutants.

The example MultiWOZ suite over every turn of ``../shared/data/multiwoz21/
multiwoz21_test_full.jsonl`` (7,372 turns; `bench_scale.multiwoz_cases` writes it), mutated
with every registered operator, a seeded sample of ``--mutants`` of them (`MutationConfig.
max_mutants`). Each count runs in a child process (``os.wait4``: user + system CPU seconds,
``ru_maxrss``), which also reports the Python heap held by the finished report and its
peak while the test ran (tracemalloc, with ``--tracemalloc``: it slows the run about 2x,
so the CPU printed beside is under it):

- ``counters``: what a mutation test keeps by default (each mutant's counts and figures).
- ``keep``: with ``MutationConfig.keep_cases`` (what ``--phoenix`` asks for: the changed
  cases' scores of every mutant), at the larger count, for contrast.

Printed: each count's CPU, peak RSS and held memory, and the ratios larger/smaller: CPU grows
with the mutants, memory should not (ratio ~1).

Usage:
    python bench/bench_mutate.py                          # 10 and 40 mutants, all 7,372 turns
    python bench/bench_mutate.py --mutants 4,8 --limit 500  # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "multiwoz21" / "multiwoz21_test_full.jsonl"

CHILD = """
import asyncio, gc, json, sys, time, tracemalloc
from dataclasses import replace
from stateval.mutation import run_mutation, suite_config
from stateval.suite import load_suite

suite_path, mutants = sys.argv[1], int(sys.argv[2])
keep, traced = sys.argv[3] == "1", sys.argv[4] == "1"
suite = load_suite(suite_path)
config = replace(suite_config(suite, max_mutants=mutants), keep_cases=keep)
if traced:
    tracemalloc.start()
cpu = time.process_time()
report = asyncio.run(run_mutation(suite, config))
cpu = time.process_time() - cpu
held = peak = None
if traced:
    gc.collect()  # what the report holds, not garbage waiting for the collector
    held, peak = tracemalloc.get_traced_memory()
print(json.dumps({
    "cpu": cpu, "held": held, "peak": peak, "mutants": len(report.results),
    "cases": report.baseline.n_cases, "score": report.score.value,
    "killed": report.count("killed"), "survived": report.count("survived"),
}))
"""


def measure(suite: Path, mutants: int, *, keep: bool, traced: bool) -> dict[str, float]:
    """The child's figures, with its whole CPU (load included) and peak RSS in MiB."""
    argv = [sys.executable, "-c", CHILD, str(suite), str(mutants), str(int(keep)), str(int(traced))]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, stdout=out, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"!! mutate child failed: {err.read().decode()[-1500:]}")
        data: dict[str, float] = json.loads(out.read())
    data["process_cpu"] = usage.ru_utime + usage.ru_stime
    data["rss"] = usage.ru_maxrss / 1024
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--multiwoz", type=Path, default=DATA, help="the test set JSONL")
    parser.add_argument("--mutants", default="10,40", help="two mutant counts")
    parser.add_argument("--limit", type=int, default=None, help="only the first N turns")
    parser.add_argument("--tracemalloc", action="store_true", help="also trace the heap")
    parser.add_argument("--no-keep", action="store_true", help="skip the keep_cases contrast")
    args = parser.parse_args()
    small, large = sorted(int(n) for n in args.mutants.split(","))
    if not args.multiwoz.exists():
        raise SystemExit(f"!! {args.multiwoz} is absent (pass --multiwoz FILE)")
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_scale import multiwoz_cases

    with tempfile.TemporaryDirectory() as tmp:
        suite = multiwoz_cases(args.multiwoz, Path(tmp) / "multiwoz", args.limit)
        runs = [("counters", small, False), ("counters", large, False)]
        if not args.no_keep:
            runs.append(("keep", large, True))
        print(f"stateval mutate on MultiWOZ 2.1 test turns (load {os.getloadavg()[0]:.1f})")
        seen: dict[tuple[str, int], dict[str, float]] = {}
        for label, mutants, keep in runs:
            load = os.getloadavg()[0]
            data = measure(suite, mutants, keep=keep, traced=args.tracemalloc)
            seen[(label, mutants)] = data
            heap = ""
            if data["held"] is not None:
                heap = (
                    f", heap held {data['held'] / 2**20:6.1f} MiB"
                    f" (peak {data['peak'] / 2**20:6.1f})"
                )
            print(
                f"    {label:8} {int(data['cases']):,} cases x {int(data['mutants'])} mutants: "
                f"mutate {data['cpu']:6.1f} s CPU (process {data['process_cpu']:6.1f}), "
                f"peak RSS {data['rss']:7.1f} MiB{heap}; score {data['score']:.3f} "
                f"({int(data['killed'])} killed, {int(data['survived'])} survived; load {load:.1f})"
            )
    a, b = seen[("counters", small)], seen[("counters", large)]
    ratio = f"{b['mutants'] / a['mutants']:.1f}x mutants"
    line = f"    {small} -> {large} mutants ({ratio}): CPU {b['cpu'] / a['cpu']:.2f}x, "
    line += f"peak RSS {b['rss'] / a['rss']:.2f}x"
    if a["held"] is not None:
        line += f", heap held {b['held'] / a['held']:.2f}x, heap peak {b['peak'] / a['peak']:.2f}x"
    print(line)
    if ("keep", large) in seen:
        k = seen[("keep", large)]
        print(f"    keep_cases at {large} mutants / counters: peak RSS {k['rss'] / b['rss']:.2f}x")


if __name__ == "__main__":
    main()
