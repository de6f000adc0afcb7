"""Past one machine: what a Ray task pays for the suite before it runs its shard.

``stateval run SUITE --workers N --backend ray`` hands each shard to a Ray task. A task used to
load the suite file again (`load_suite`: read, validate and hash every case of the case file,
although it runs 1/N of them); it now gets the driver's loaded suite from the object store
(`stateval.orchestrator._workers.shipped`, put once) and builds only the mutator and the judge
(`stateval.suite.with_mutator`). Measured in one run of this script, in one local Ray
(``--cpus`` CPUs), on the generated suite of ``bench_scale.py`` (20-field flat states, a
trivial Python mutator), the two ways alternating (A B A B ...) in the same Ray workers:

(1) The suite step alone, CPU seconds inside the task (``time.process_time``): `load_suite` of
    the suite file against fetching the shipped suite from the object store and `with_mutator`.
(2) The whole task, `run_shard` of shard ``1/N`` without Phoenix (``run_shard(task)``, which
    loads the suite, against ``run_shard(task, shipped)``): CPU seconds inside the task.
(3) The shipped object's size (pickled), and the driver's CPU to make and put it.

The load average is printed before each round (the machine is shared).

Usage:
    python bench/bench_ray_suite.py                       # 100,000 cases, shards of 1/16
    python bench/bench_ray_suite.py --cases 2000 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_scale import write_suite  # noqa: E402  (a sibling script)


def _load_step(path: str) -> float:
    """CPU seconds of what a task did before: load the suite file."""
    from stateval.suite import load_suite

    start = time.process_time()
    load_suite(path)
    return time.process_time() - start


def _shipped_step(boxed: list[Any]) -> float:
    """CPU seconds of what a task does now: fetch the shipped suite (the reference comes in a
    list, so Ray does not fetch it before the clock starts) and build its mutator."""
    import ray

    from stateval.suite import with_mutator

    start = time.process_time()
    with_mutator(ray.get(boxed[0]))
    return time.process_time() - start


def _whole_task(task: Any, boxed: list[Any] | None) -> float:
    """CPU seconds of `run_shard` of ``task``: loading the suite (``boxed`` None) or of the
    shipped suite (fetched inside the clock)."""
    import ray

    from stateval.orchestrator import run_shard

    start = time.process_time()
    done = run_shard(task) if boxed is None else run_shard(task, ray.get(boxed[0]))
    if done.failure is not None:
        raise SystemExit(f"!! shard failed: {done.failure}")
    return time.process_time() - start


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=16, help="N of the shard 1/N a task runs")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2)
    args = parser.parse_args()

    import ray

    from stateval.orchestrator import ShardTask, shipped
    from stateval.suite import load_suite

    work = Path(tempfile.mkdtemp(prefix="bench-ray-suite-"))
    path = str(write_suite(work / "suite", args.cases).resolve())
    suite = load_suite(path)
    start = time.process_time()
    data = pickle.dumps(shipped(suite), protocol=5)
    pickled = time.process_time() - start
    print(f"{args.cases:,} cases; the shipped suite pickles to {len(data) / 2**20:.2f} MiB")
    print(f"  (driver: shipped + pickle.dumps {pickled * 1000:.0f} ms of CPU)")

    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    try:
        start = time.process_time()
        boxed = [ray.put(shipped(suite))]
        print(f"  (driver: shipped + ray.put {(time.process_time() - start) * 1000:.0f} ms of CPU)")
        load_step = ray.remote(num_cpus=1)(_load_step)
        shipped_step = ray.remote(num_cpus=1)(_shipped_step)
        whole = ray.remote(num_cpus=1)(_whole_task)
        warm = [shipped_step.remote(boxed) for _ in range(args.cpus)]
        ray.get([*warm, *(load_step.remote(path) for _ in range(args.cpus))])  # imports
        task = ShardTask(
            suite_path=path,
            home=None,
            shard=f"1/{args.shards}",
            groups=("bench",),
            modes=(None,),
            limit=None,
            repetitions=1,
            fields_as=None,
            phoenix_url=None,
            concurrency=None,
        )
        steps: dict[str, list[float]] = {name: [] for name in ("load", "ship", "old", "new")}
        for i in range(args.rounds):
            print(f"round {i + 1}, load average before {_load()}")
            steps["load"].append(ray.get(load_step.remote(path)))
            steps["ship"].append(ray.get(shipped_step.remote(boxed)))
            steps["old"].append(ray.get(whole.remote(task, None)))
            steps["new"].append(ray.get(whole.remote(task, boxed)))
            shown = ", ".join(f"{name} {values[-1]:.3f} s" for name, values in steps.items())
            print(f"  {shown}")
    finally:
        ray.shutdown()
    print(f"load average after {_load()}")

    def line(label: str, values: list[float]) -> str:
        cells = " ".join(f"{v:.3f}" for v in values)
        return f"{label:<44} median {statistics.median(values):.3f} s  ({cells})"

    print(f"(1) suite step, CPU in the task ({args.cases:,} cases)")
    print("    " + line("load_suite (before)", steps["load"]))
    print("    " + line("ray.get(shipped) + with_mutator (now)", steps["ship"]))
    print(f"(2) run_shard of shard 1/{args.shards}, CPU in the task")
    print("    " + line("loading the suite (before)", steps["old"]))
    print("    " + line("the shipped suite (now)", steps["new"]))
    ratio = statistics.median(steps["old"]) / statistics.median(steps["new"])
    print(f"    before / now: {ratio:.2f}x")


if __name__ == "__main__":
    main()
