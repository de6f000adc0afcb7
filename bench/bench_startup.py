"""Start-up cost: ``import stateval``, ``stateval --help``, and the Phoenix import stateval avoids.

Each command runs in a fresh subprocess; the best of ``--repeat`` runs is reported, minus a bare
``python -c pass`` of the same interpreter. ``import phoenix.evals`` is timed in stateval's
environment (evals + client only) and in the Phoenix *server*'s environment, whose
``phoenix/__init__.py`` imports the whole server: the cost the embedded server's separate
environment keeps out of every stateval command.

Usage:
    python bench/bench_startup.py [--server-python /work/venvs/phx/bin/python]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path


def best_of(argv: list[str], repeat: int) -> float | None:
    """Best wall time of ``argv`` in seconds, or None when it fails."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = subprocess.run(argv, capture_output=True, check=False)
        elapsed = time.perf_counter() - start
        if result.returncode != 0:
            return None
        times.append(elapsed)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="stateval's interpreter")
    parser.add_argument("--server-python", default="/work/venvs/phx/bin/python")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    py = args.python
    stateval_cli = Path(py).parent / "stateval"
    rows: list[tuple[str, list[str], str]] = [
        ("import stateval", [py, "-c", "import stateval"], py),
        ("import stateval.phoenix", [py, "-c", "import stateval.phoenix"], py),
        ("stateval --help", [str(stateval_cli), "--help"], py),
        ("import phoenix.evals (stateval env)", [py, "-c", "import phoenix.evals"], py),
        ("import phoenix.client (stateval env)", [py, "-c", "import phoenix.client"], py),
        (
            "import phoenix.evals (server env)",
            [args.server_python, "-c", "import phoenix.evals"],
            args.server_python,
        ),
    ]
    baselines: dict[str, float] = {}
    print(f"best of {args.repeat}, minus the interpreter's own start-up")
    for label, argv, interpreter in rows:
        if not shutil.which(argv[0]) and not Path(argv[0]).exists():
            print(f"  {label:40s}    skipped ({argv[0]} not found)")
            continue
        if interpreter not in baselines:
            base = best_of([interpreter, "-c", "pass"], args.repeat)
            baselines[interpreter] = base or 0.0
        seconds = best_of(argv, args.repeat)
        if seconds is None:
            print(f"  {label:40s}    skipped (command failed)")
            continue
        net = seconds - baselines[interpreter]
        print(f"  {label:40s} {net * 1000:8.0f} ms   (wall {seconds * 1000:6.0f} ms)")


if __name__ == "__main__":
    main()
