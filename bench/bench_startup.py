"""Start-up cost: ``import stateval``, ``stateval --help``, and the Phoenix import stateval avoids.

Each command runs in a fresh subprocess; the best of ``--repeat`` runs is reported, wall time and
CPU time (user + system, of the child), each minus a bare ``python -c pass`` of the same
interpreter; and how many ``stateval`` modules ``import stateval`` loads, numpy or not.
``import phoenix.evals`` is timed in stateval's environment (evals + client only) and in the
Phoenix *server*'s environment, whose ``phoenix/__init__.py`` imports the whole server: the cost
the embedded server's separate environment keeps out of every stateval command.

Usage:
    python bench/bench_startup.py [--server-python /work/venvs/phx/bin/python]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best_of(argv: list[str], repeat: int) -> tuple[float, float] | None:
    """Best wall and best CPU time of ``argv`` in seconds, or None when it fails."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _child_cpu()
        result = subprocess.run(argv, capture_output=True, check=False)
        walls.append(time.perf_counter() - start)
        cpus.append(_child_cpu() - cpu)
        if result.returncode != 0:
            return None
    return min(walls), min(cpus)


LOADED = (
    "import sys, stateval; print(sum(m.split('.')[0] == 'stateval' for m in sys.modules), "
    "'numpy' in sys.modules)"
)


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
    baselines: dict[str, tuple[float, float]] = {}
    loaded = subprocess.run([py, "-c", LOADED], capture_output=True, text=True, check=True)
    modules, numpy = loaded.stdout.split()
    print(f"import stateval loads {modules} stateval modules; numpy loaded: {numpy}")
    print(f"best of {args.repeat}, minus the interpreter's own start-up")
    for label, argv, interpreter in rows:
        if not shutil.which(argv[0]) and not Path(argv[0]).exists():
            print(f"  {label:40s}    skipped ({argv[0]} not found)")
            continue
        if interpreter not in baselines:
            baselines[interpreter] = best_of([interpreter, "-c", "pass"], args.repeat) or (0, 0)
        measured = best_of(argv, args.repeat)
        if measured is None:
            print(f"  {label:40s}    skipped (command failed)")
            continue
        wall, cpu = measured
        base_wall, base_cpu = baselines[interpreter]
        print(
            f"  {label:40s} {(wall - base_wall) * 1000:8.0f} ms wall"
            f" {(cpu - base_cpu) * 1000:8.0f} ms CPU   (whole: {wall * 1000:6.0f} ms wall)"
        )


if __name__ == "__main__":
    main()
