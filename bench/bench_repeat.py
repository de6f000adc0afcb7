"""Repeated runs at scale: ``stateval run --repeat N`` against a run of one repetition.

On a generated suite of ``--cases`` 20-field cases (bench_scale's; with ``--flaky`` its mutator
also gets one field wrong on a random 30% of its calls, so every case is flaky there and the
stability table has an interval to compute), in one run of this script, alternating, each
command its own process in a fresh ``STATEVAL_HOME``:

(1) ``stateval run SUITE --no-phoenix``: one repetition;
(2) ``stateval run SUITE --no-phoenix --repeat N``: N repetitions, then the stability table
    (per field: mean, interval, flakiness, pass^k) and pass^k of the cases.

Prints each one's CPU (user + system) and peak RSS, and the ratios: the repeated run's CPU
against N times the single run's (its N runs plus its stability pass, which reads each case's
journaled scores once), and its peak RSS against the single run's (flat in N: the journal holds
offsets, the stability pass counts in arrays). Measured in docs/benchmarks.md (Repeated runs).

Usage:
    python bench/bench_repeat.py                              # 20,000 cases, --repeat 3, flaky
    python bench/bench_repeat.py --cases 100000 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_scale import run_child, write_suite  # noqa: E402  (a sibling script)

STATEVAL = [sys.executable, "-c", "from stateval.cli import main; main()"]

FLAKY = '''

import random as _random

_steady = mutate


def mutate(state, input):
    """bench_scale's mutator, and field f5 wrong on a random 30% of calls."""
    out = _steady(state, input)
    if _random.random() < 0.3:
        out.set_value("f5", ValueConfidence("flaky", 1.0))
    return out
'''


def _run(suite: Path, home: Path, repetitions: int) -> tuple[float, float]:
    """CPU seconds and peak RSS (MiB) of one ``stateval run`` (exit 0 or 1, else stop)."""
    argv = [*STATEVAL, "run", str(suite), "--no-phoenix"]
    if repetitions > 1:
        argv += ["--repeat", str(repetitions)]
    env = {**os.environ, "STATEVAL_HOME": str(home)}
    _, cpu, rss, _ = run_child(argv, suite.parent, env)
    return cpu, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--steady", action="store_true", help="bench_scale's mutator as it is (no flaky field)"
    )
    args = parser.parse_args()
    n, reps = args.cases, args.repetitions
    with tempfile.TemporaryDirectory(prefix="bench-repeat-") as tmp:
        work = Path(tmp)
        suite = write_suite(work / "suite", n)
        if not args.steady:
            mutator = work / "suite" / "bench_mutator.py"
            mutator.write_text(mutator.read_text() + FLAKY)
        kind = "steady" if args.steady else "f5 flaky on 30% of calls"
        print(f"{n:,} cases of 20 fields ({kind}), --repeat {reps}, {os.cpu_count()} cores")
        singles, repeats = [], []
        for round_ in range(1, args.rounds + 1):
            load = os.getloadavg()[0]
            one = _run(suite, work / f"one-{round_}", 1)
            many = _run(suite, work / f"many-{round_}", reps)
            singles.append(one)
            repeats.append(many)
            print(
                f"    round {round_}: one repetition {one[0]:6.1f} s CPU {one[1]:6.0f} MiB;"
                f"  --repeat {reps} {many[0]:6.1f} s CPU {many[1]:6.0f} MiB  (load {load:.1f})"
            )
        one_cpu = min(c for c, _ in singles)
        many_cpu = min(c for c, _ in repeats)
        one_rss = min(r for _, r in singles)
        many_rss = min(r for _, r in repeats)
        print(f"least of {args.rounds} round(s):")
        print(
            f"    CPU: --repeat {reps} {many_cpu:.1f} s = {many_cpu / (reps * one_cpu):.2f}x "
            f"{reps} x one repetition ({one_cpu:.1f} s)"
        )
        print(
            f"    peak RSS: --repeat {reps} {many_rss:.0f} MiB = {many_rss / one_rss:.2f}x "
            f"one repetition ({one_rss:.0f} MiB)"
        )
        print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
