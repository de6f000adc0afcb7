"""Episodes: what grouping cases into episodes and running them free-running cost.

One generated suite of E episodes x T turns (flat 10-field states, a trivial Python mutator that
copies its pre-state and sets the turn's field, one wrong value in every seventh episode), run
with ``stateval run SUITE --no-phoenix`` in a child process three ways, in this one script:

(a) without ``episodes:`` (the baseline: today's run);
(b) with ``episodes:``, teacher-forced (episode index at load, trajectory metrics);
(c) with ``episodes:``, ``--mode free_running`` (turns in order per episode, pre-states
    journaled).

Prints wall time, cases per second and peak RSS of each, and (b) and (c) as ratios of (a).

Usage:
    python bench/bench_episodes.py                        # 2,000 episodes x 10 turns
    python bench/bench_episodes.py --episodes 200 --turns 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MUTATOR = '''"""bench_episodes' mutator: the pre-state plus the turn's field."""

from stateval.state import ValueConfidence


def mutate(state, input):
    episode, turn = input.prompt.split()
    value = "wrong" if int(episode) % 7 == 0 and turn == "2" else f"v{turn}"
    state.set_value(f"f{turn}", ValueConfidence(value, 1.0))
    return state
'''


def write_suite(folder: Path, episodes: int, turns: int) -> tuple[Path, Path]:
    """The cases and two suites over them: without and with ``episodes:``."""
    (folder / "bench_episodes_mutator.py").write_text(MUTATOR)
    with (folder / "cases.jsonl").open("w") as handle:
        for e in range(episodes):
            state: dict[str, str] = {}
            for t in range(turns):
                post = {**state, f"f{t}": f"v{t}"}
                case = {
                    "id": f"e{e}:{t}",
                    "pre_state": state,
                    "input": {"prompt": f"{e} {t}"},
                    "expected_post_state": post,
                    "metadata": {"episode": e, "turn": t},
                }
                handle.write(json.dumps(case) + "\n")
                state = post
    base = {
        "mutator": {"type": "python", "callable": "bench_episodes_mutator:mutate", "path": "."},
        "cases": {"file": "cases.jsonl"},
        "thresholds": {"max_error_rate": None},
        "concurrency": 8,
    }
    plain = folder / "plain.json"
    plain.write_text(json.dumps(base))
    grouped = folder / "episodes.json"
    grouped.write_text(
        json.dumps({**base, "episodes": {"by": "metadata.episode", "order": "metadata.turn"}})
    )
    return plain, grouped


def run_child(argv: list[str], cwd: Path) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS (MiB) and the stdout of one ``stateval`` child."""
    env = {**os.environ, "STATEVAL_HOME": str(cwd / ".stateval"), "COLUMNS": "200"}
    command = [sys.executable, "-c", "from stateval.cli import main; main()", *argv]
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        tail = err.read().decode(errors="replace")[-1500:]
    if code not in (0, 1):
        raise SystemExit(f"!! stateval {' '.join(argv)} exited {code}:\n{tail}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    n = args.episodes * args.turns
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plain, grouped = write_suite(work, args.episodes, args.turns)
        runs = {
            "(a) no episodes": ["run", plain.name, "--no-phoenix"],
            "(b) episodes, teacher-forced": ["run", grouped.name, "--no-phoenix"],
            "(c) episodes, free-running": [
                "run",
                grouped.name,
                "--no-phoenix",
                "--mode",
                "free_running",
            ],
        }
        print(f"{args.episodes} episodes x {args.turns} turns = {n} cases")
        base: tuple[float, float] | None = None
        for label, argv in runs.items():
            wall, cpu, rss, out = run_child(argv, work)
            if "(a)" not in label and "episode success" not in out:
                print(f"!! {label}: no episode figures in the summary")
            base = base or (wall, cpu)
            print(
                f"{label:30} {wall:7.2f} s wall ({n / wall:6.0f} cases/s, x{wall / base[0]:.2f})"
                f"  {cpu:7.2f} s CPU (x{cpu / base[1]:.2f})  peak RSS {rss:6.1f} MiB"
                f"  (load {os.getloadavg()[0]:.1f})"
            )


if __name__ == "__main__":
    main()
