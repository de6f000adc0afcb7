"""Loading a suite with a plain-text slot list of 5k to 200k slots: linear, not quadratic.

Each size is timed as CPU seconds of ``load_suite`` (best of ``--repeat``), and printed as a
ratio to a baseline measured in the same process: reading the same file and splitting its lines
(``Path.read_text()``). Linear loading keeps the ratio flat as the list grows; the
0.2 loader's ``list.count`` duplicate check made it grow with the size (5k/10k/20k slots:
1.0/1.8/5.6 s; 200k over 120 s).

Usage:
    python bench/bench_slots.py [--sizes 5000,10000,20000,200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stateval.suite import load_suite

SUITE = (
    'mutator: {type: python, callable: "builtins:print"}\n'
    "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}\n"
    "slots: {file: slots.txt}\n"
)


def best_cpu(action: Callable[[], object], repeat: int) -> float:
    """Best CPU seconds of ``action`` over ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return max(best, 1e-6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,10000,20000,200000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stateval-bench-slots-") as tmp:
        folder = Path(tmp)
        (folder / "suite.yaml").write_text(SUITE)
        first: float | None = None
        for size in (int(s) for s in args.sizes.split(",")):
            slots = folder / "slots.txt"
            slots.write_text("".join(f"service{i % 50}.slot_{i}\n" for i in range(size)))
            base = best_cpu(slots.read_text, args.repeat)
            load = best_cpu(lambda: load_suite(folder / "suite.yaml", load_mutator=False), 1)
            per_slot = load / size
            first = first or per_slot
            print(
                f"{size:>7,} slots: load_suite {load:.3f} s CPU ({load / base:,.0f}x reading "
                f"the file), {per_slot * 1e6:.2f} us per slot ({per_slot / first:.2f}x the "
                "smallest size's)"
            )


if __name__ == "__main__":
    main()
