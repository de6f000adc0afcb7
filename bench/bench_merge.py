"""Past one machine: shards merged into the run, and ``--workers 2`` against ``--workers 1``.

Measured in one run of this script, on the same machine:

(1) The MultiWOZ 2.1 test set (7,372 turns, ``examples/multiwoz/full_test.yaml``, its cases made
    from ``../shared/data/multiwoz21`` beside the repository, or ``--multiwoz``) run once in one
    process and once as 4 shards (``--shard I/4``) then ``stateval merge``: the two JSON reports
    must be identical, run ids and times aside (every figure, interval, calibration, slice,
    episode metric and case). Prints the keys that differ (none) and the merge's own time.
(2) ``stateval run SUITE --no-phoenix`` on a generated suite of 100,000 20-field cases (the
    suite of ``bench_scale.py``) with ``--workers 1`` (one process) and ``--workers 2`` (two
    processes over the shard hash, then merged): wall time, the speed-up, and the load average
    before each (the machine is shared: the target ≥ 1.7x holds only where 2 cores are free).

Usage:
    python bench/bench_merge.py                        # both (about 10 minutes on 2 cores)
    python bench/bench_merge.py --only merge
    python bench/bench_merge.py --only workers --cases 20000
    python bench/bench_merge.py --only workers --rounds 2   # 1, 2, 1, 2: the best of each
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_scale import write_suite  # noqa: E402  (a sibling script)

EXAMPLE = ROOT / "examples" / "multiwoz"
SHARED = ROOT.parent / "shared" / "data" / "multiwoz21" / "multiwoz21_test_full.jsonl"
SHARDS = 4
TARGET_SPEEDUP = 1.7
STATEVAL = [sys.executable, "-c", "from stateval.cli import main; main()"]


def _stateval(args: list[str], home: Path, cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the command and every process it started)
    of one ``stateval`` command (exit 0 or 1, else stop)."""
    env = {**os.environ, "STATEVAL_HOME": str(home)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*STATEVAL, *args], cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"!! stateval {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def _runs(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "runs").iterdir())


def comparable(path: Path) -> dict[str, Any]:
    """A JSON report without the run id and the mutator's times."""
    report = json.loads(path.read_text())
    report.pop("run_id")
    report.pop("mean_time")
    for case in report["cases"]:
        case.pop("time_used", None)
    return dict(report)


def full_suite(work: Path, source: Path, every: int) -> Path:
    """The MultiWOZ test set's suite (every ``every``-th dialogue), its cases made under
    ``work``."""
    out = work / "full"
    make = [sys.executable, str(EXAMPLE / "make_slice.py"), str(source), "--every", str(every)]
    subprocess.run([*make, "--out-dir", str(out)], check=True, capture_output=True)
    data = yaml.safe_load((EXAMPLE / "full_test.yaml").read_text())
    data["cases"]["file"] = str(out / "cases.jsonl")
    data["mutator"]["path"] = data["slots"]["path"] = str(EXAMPLE)
    path = work / "full_test.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def bench_merge(work: Path, source: Path, every: int) -> bool:
    """(1): single run against 4 merged shards, JSON reports compared."""
    print(f"(1) MultiWOZ 2.1 test set: one process against {SHARDS} shards merged")
    suite = full_suite(work, source, every)
    single_home, shard_home = work / "single", work / "shards"
    load = os.getloadavg()[0]
    wall, cpu = _stateval(
        ["run", str(suite), "--no-phoenix", "--report-json", str(work / "single.json")],
        single_home,
        work,
    )
    print(f"    single run            {wall:7.1f} s wall  {cpu:6.1f} s CPU  (load {load:.1f})")
    shard_wall = 0.0
    for i in range(1, SHARDS + 1):
        spent, _ = _stateval(
            ["run", str(suite), "--no-phoenix", "--shard", f"{i}/{SHARDS}"], shard_home, work
        )
        shard_wall += spent
    shards = _runs(shard_home)
    load = os.getloadavg()[0]
    merge_wall, merge_cpu = _stateval(
        ["merge", *shards, "--report-json", str(work / "merged.json")], shard_home, work
    )
    print(f"    {SHARDS} shards, one by one  {shard_wall:7.1f} s wall")
    print(
        f"    stateval merge        {merge_wall:7.1f} s wall  {merge_cpu:6.1f} s CPU  "
        f"(load {load:.1f})"
    )
    one, merged = comparable(work / "single.json"), comparable(work / "merged.json")
    differ = sorted(k for k in one.keys() | merged.keys() if one.get(k) != merged.get(k))
    same = not differ
    print(
        f"    {one['n_cases']:,} cases; JSON reports identical (ids and times aside): "
        f"{'yes' if same else '!! NO: ' + ', '.join(differ)}"
    )
    print(
        f"    joint goal accuracy {one['joint_goal_accuracy']:.4f} (merged "
        f"{merged['joint_goal_accuracy']:.4f}), slot accuracy {one['slot_accuracy']:.4f} "
        f"(merged {merged['slot_accuracy']:.4f})"
    )
    return same


def bench_workers(work: Path, n: int, rounds: int = 1) -> float:
    """(2): ``--workers 1`` against ``--workers 2`` on ``n`` generated cases, alternating for
    ``rounds`` rounds (the best wall and CPU of each kept: a shared machine's load comes and
    goes); the speed-up."""
    print(f"(2) stateval run --no-phoenix on {n:,} 20-field cases: --workers 1 against 2")
    suite = write_suite(work / "scale", n)
    walls: dict[int, float] = {}
    cpus: dict[int, float] = {}
    for round_ in range(rounds):
        for workers in (1, 2):
            home = work / f"workers-{workers}-{round_}"
            load = os.getloadavg()
            wall, cpu = _stateval(
                ["run", str(suite), "--no-phoenix", "--workers", str(workers)], home, suite.parent
            )
            walls[workers] = min(wall, walls.get(workers, wall))
            cpus[workers] = min(cpu, cpus.get(workers, cpu))
            print(
                f"    --workers {workers}  {wall:7.1f} s wall  ({n / wall:6.0f} cases/s)  "
                f"{cpu:7.1f} s CPU  load before {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
                f"(1/5/15 min) on {os.cpu_count()} CPUs"
            )
    if rounds > 1:
        print(f"    best of {rounds}: --workers 1 {walls[1]:.1f} s, --workers 2 {walls[2]:.1f} s")
    speedup = walls[1] / walls[2]
    mark = "ok" if speedup >= TARGET_SPEEDUP else "MISSED"
    print(
        f"    speed-up {speedup:.2f}x (target >= {TARGET_SPEEDUP}x where 2 cores are free: {mark})"
    )
    print(
        f"    CPU of --workers 2 against --workers 1: {cpus[2] / cpus[1]:.2f}x (the shards, the "
        f"driver's load and merge); on 2 free cores the speed-up is at most "
        f"{2 * cpus[1] / cpus[2]:.2f}x"
    )
    return speedup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("merge", "workers"))
    parser.add_argument("--cases", type=int, default=100_000, help="cases of (2)")
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds of (2)")
    parser.add_argument("--multiwoz", type=Path, default=SHARED, help="the test set's JSONL")
    parser.add_argument("--every", type=int, default=1, help="every N-th dialogue of (1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-merge-") as tmp:
        work = Path(tmp)
        ok = True
        if args.only in (None, "merge"):
            if not args.multiwoz.exists():
                raise SystemExit(f"!! the MultiWOZ test set is absent ({args.multiwoz})")
            ok = bench_merge(work, args.multiwoz, args.every)
        if args.only in (None, "workers"):
            bench_workers(work, args.cases, args.rounds)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
