"""The scoring half of a run's case (`CasePipeline.record` without the journal), in one process.

On bench_scale.py's generated suite (20-field flat states, ten fields changed by each input,
one of them wrong, as its mutator sets them), with the mutator's results made beforehand, each
measured with the process's CPU time:

(a) the floor: bench_pipeline.py's bare per-case loop (``orjson.loads`` of the case line, a
    dict compare, ``orjson.dumps`` of a result record);
(b) what ``CasePipeline.record`` does to a result besides journaling it: ``score_case``,
    ``RunTally.add`` (metrics, calibration, edits), ``compact_scores`` (what a diff reads) and
    the result record (``CaseResult.to_dict``, encoded by orjson);
(c) with ``--parts``, each of the four steps timed on its own (the timer's own cost, a few
    microseconds a step, falls on the parts).

It prints (b) per case and as a multiple of (a), the median of ``--rounds`` rounds (the parts
alternate, so load on a shared machine falls on both alike), and a hash of the records and the
summary's headline figures, so two versions of stateval can be checked to give the same bytes
(``PYTHONPATH=/other/tree/src python bench/bench_record.py``).

Usage:
    python bench/bench_record.py                   # 20,000 cases, 3 rounds
    python bench/bench_record.py --cases 5000 --parts
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pipeline import floor
from bench_scale import write_suite


def prepare(folder: Path, n: int) -> tuple[Any, list[Any], list[Any]]:
    """The suite's scoring, its cases, and each case's result as bench_scale's mutator makes it."""
    from stateval.run import CaseResult, Scoring
    from stateval.state import ValueConfidence
    from stateval.suite import load_suite

    suite = load_suite(write_suite(folder, n), load_mutator=False)
    cases = list(suite.cases)
    results = []
    for i, case in enumerate(cases):
        state = case.pre_state.copy()
        for j in range(10):
            state.set_value(f"f{j}", ValueConfidence("wrong" if j == 3 else f"v{i}.{j}", 1.0))
        results.append(CaseResult(case.id, state, None, None, 0.001))
    return Scoring.from_suite(suite), cases, results


def record(scoring: Any, cases: list[Any], results: list[Any], parts: bool) -> tuple[float, ...]:
    """(b): CPU seconds of the scoring half over every case (with ``parts``, also of each
    step); the records' hash and the headline figures are printed."""
    from stateval.run import SCORES_KEY, RunTally, compact_scores, score_case

    tally = RunTally(scoring)
    figures = scoring.accumulator()
    digest = hashlib.sha256()
    clock = time.process_time
    steps = [0.0, 0.0, 0.0, 0.0]
    start = clock()
    for i, (case, result) in enumerate(zip(cases, results, strict=True)):
        if parts:
            a = clock()
        score = score_case(case, result, scoring)
        if parts:
            b = clock()
        tally.add(case, score, i)
        if parts:
            c = clock()
        scores = compact_scores(case, score, scoring, figures)
        if parts:
            d = clock()
        line = score.result.to_dict()
        line[SCORES_KEY] = scores
        digest.update(orjson.dumps(line))
        if parts:
            e = clock()
            for k, (x, y) in enumerate(((a, b), (b, c), (c, d), (d, e))):
                steps[k] += y - x
    total = clock() - start
    summary = tally.summary((), suite_name="bench", run_id="bench", n_planned=len(cases))
    headline = (summary.overall_match_rate, summary.accuracy, summary.metrics.f1)
    print(f"    records {digest.hexdigest()[:16]}, headline {headline}")
    return (total, *steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parts", action="store_true", help="time each step on its own too")
    args = parser.parse_args()
    n = args.cases
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    floors: list[float] = []
    totals: list[tuple[float, ...]] = []
    with tempfile.TemporaryDirectory(prefix="bench-record-") as tmp:
        folder = Path(tmp)
        scoring, cases, results = prepare(folder, n)
        for i in range(args.rounds):
            floors.append(floor(folder / "cases.jsonl"))
            totals.append(record(scoring, cases, results, args.parts))
            print(
                f"    round {i + 1}: floor {floors[-1] / n * 1e6:5.1f} us/case, scoring half "
                f"{totals[-1][0] / n * 1e6:6.1f} us/case, load {os.getloadavg()[0]:.1f}"
            )
    bare = statistics.median(floors)
    cpu = statistics.median(t[0] for t in totals)
    print(f"{n:,} cases, 20 fields, median of {args.rounds} round(s):")
    print(f"    floor (orjson line, dict compare, orjson record): {bare / n * 1e6:6.1f} us/case")
    print(
        f"    scoring half (score_case, RunTally.add, compact_scores, record): "
        f"{cpu / n * 1e6:6.1f} us/case, {cpu / bare:.1f}x the floor"
    )
    if args.parts:
        names = ("score_case", "RunTally.add", "compact_scores", "record + orjson")
        for k, name in enumerate(names, start=1):
            part = statistics.median(t[k] for t in totals)
            print(f"      {name:<16} {part / n * 1e6:6.1f} us/case (timer included)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
