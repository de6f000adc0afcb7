"""What the edit-operation matrix and the retention curve cost a run of episodes.

Runs one suite of episodes (default: the MultiWOZ 2.1 test set, ``examples/multiwoz/
full_test.yaml``, 1,000 dialogues, 7,372 turns) in both modes, in this one process, two ways
per round, alternating which goes first:

(a) baseline: the run as it was before them (no field edits, no memory ages, no retention);
(b) the run with both (the default).

Each run is local (no Phoenix, no reports: the op evaluations are made only when a report or
an upload reads them). Prints the CPU seconds (``time.process_time``) of each and (b) over (a),
per round and as the median, with the load average, and the run's matrix and retention figures.

Usage:
    python examples/multiwoz/make_slice.py ../shared/data/multiwoz21/multiwoz21_test_full.jsonl \\
        --every 1 --out-dir examples/multiwoz/data/full
    python bench/bench_updates.py [--suite SUITE] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stateval import load_suite
from stateval.episodes import RetentionTally, score_episode
from stateval.episodes import _score as episode_score
from stateval.run import CaseScore, start_journal
from stateval.run import _episode_tracker as tracker
from stateval.upload import run_suite

ROOT = Path(__file__).resolve().parents[1]
MODES = ("teacher_forced", "free_running")


@contextlib.contextmanager
def baseline() -> Iterator[None]:
    """The run without field edits, memory ages and retention (as before they existed)."""
    saved = (CaseScore.edits_under, tracker.turn_fields, RetentionTally.add)
    saved_ages = episode_score.memory_ages
    CaseScore.edits_under = lambda self, scoring, case: None  # type: ignore[method-assign,assignment]
    tracker.turn_fields = lambda case, comparison: ()  # type: ignore[assignment]
    RetentionTally.add = lambda self, turns: None  # type: ignore[method-assign]
    episode_score.memory_ages = lambda turns: iter(())  # type: ignore[assignment]
    try:
        yield
    finally:
        CaseScore.edits_under, tracker.turn_fields, RetentionTally.add = saved  # type: ignore[method-assign,assignment]
        episode_score.memory_ages = saved_ages  # type: ignore[assignment]


def run_both(suite_path: Path, home: Path) -> tuple[float, list[Any]]:
    """CPU seconds of running the suite in both modes; the two summaries."""
    summaries = []
    start = time.process_time()
    for mode in MODES:
        suite = load_suite(suite_path)
        journal = start_journal(home, suite, mode=mode)
        outcome = asyncio.run(run_suite(suite, journal, concurrency=8))
        summaries.append(outcome.summary)
    return time.process_time() - start, summaries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=ROOT / "examples/multiwoz/full_test.yaml")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(args.suite.parent))
    assert score_episode is not None  # imported so the patch above reaches its module
    ratios = []
    summaries: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            order = ("base", "full") if r % 2 == 0 else ("full", "base")
            cpu = {}
            for which in order:
                home = Path(tmp) / f"{which}{r}"
                if which == "base":
                    with baseline():
                        cpu[which], _ = run_both(args.suite, home)
                else:
                    cpu[which], summaries = run_both(args.suite, home)
            ratios.append(cpu["full"] / cpu["base"])
            print(
                f"round {r + 1}: baseline {cpu['base']:.2f} s CPU, with matrix and retention "
                f"{cpu['full']:.2f} s CPU, ratio {ratios[-1]:.3f}; load average "
                f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
            )
    print(f"median ratio {statistics.median(ratios):.3f} over {args.rounds} rounds")
    for summary in summaries:
        mode = summary.episodes.mode if summary.episodes else "cases"
        pooled = summary.edits.pooled
        print(
            f"{mode}: errors {dict(pooled.errors)}; update propagation "
            f"{pooled.update_propagation_rate}, staleness {pooled.staleness_rate}, deletion "
            f"success {pooled.deletion_success}"
        )
        curve = summary.episodes.retention if summary.episodes else None
        if curve is not None:
            points = ", ".join(f"{p.age}: {p.accuracy:.3f} ({p.n})" for p in curve.points[:16])
            print(f"  retention by age: {points}")
            print(f"  retention_at_5 {curve.accuracy_from(5)}, slope {curve.slope}")


if __name__ == "__main__":
    main()
