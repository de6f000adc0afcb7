"""Fuzz campaign: N generated inputs per target, counting defects and hangs.

The targets and strategies are tests/fuzzing.py's (tests/test_fuzz.py runs them with a few
hundred examples): the LLM-output parser with everything a run does to an accepted reply, state
construction and comparison, suite loading, and the renderers (a run with hostile field paths,
values, case ids and suite name through the terminal, JSON, Markdown, HTML, JUnit and diff
reports). A defect is an exception outside stateval's
error hierarchy (or any exception after a reply was accepted); a hang is an input that uses
more than ``--hang`` seconds of CPU (it is stopped by a CPU-time alarm, and counted by its
measured CPU time even where the alarm lands somewhere that swallows it). CPU time, not wall
time: on a shared machine a slow input and a starved process look alike on the clock.

Each target's rate is printed as a ratio to a baseline measured in the same process: the
inputs per second of ``json.loads`` on the same generated texts.

Usage:
    python bench/fuzz.py [--examples 10000] [--targets llm_output,state,suite,reports] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import contextlib

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import fuzzing


class _Hang(BaseException):
    """Raised by the alarm in an input that ran past the hang limit."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Hang


def campaign(
    name: str,
    strategy: st.SearchStrategy[Any],
    target: Callable[[Any], None],
    examples: int,
    hang_after: float,
    rng_seed: int,
) -> dict[str, Any]:
    """Run ``target`` on ``examples`` inputs; return the counts."""
    defects: Counter[str] = Counter()
    samples: dict[str, str] = {}
    counts = {"inputs": 0, "defects": 0, "hangs": 0, "slowest_s": 0.0, "slowest_cpu_s": 0.0}

    @seed(rng_seed)
    @settings(
        max_examples=examples,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def run(item: Any) -> None:
        counts["inputs"] += 1
        start, cpu_start = time.perf_counter(), time.process_time()
        signal.setitimer(signal.ITIMER_VIRTUAL, hang_after)
        hung = False
        try:
            target(item)
        except fuzzing.Defect as defect:
            counts["defects"] += 1
            key = f"{defect.stage}: {type(defect.error).__name__}"
            defects[key] += 1
            samples.setdefault(key, f"{str(defect.error)[:120]!r} <- {repr(item)[:160]}")
        except _Hang:
            hung = True
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            cpu = time.process_time() - cpu_start
            counts["slowest_s"] = max(counts["slowest_s"], time.perf_counter() - start)
            counts["slowest_cpu_s"] = max(counts["slowest_cpu_s"], cpu)
            if hung or cpu >= hang_after:
                counts["hangs"] += 1
                samples.setdefault("hang", repr(item)[:200])

    started = time.perf_counter()
    run()
    counts["seconds"] = round(time.perf_counter() - started, 1)
    counts["slowest_s"] = round(counts["slowest_s"], 3)
    counts["slowest_cpu_s"] = round(counts["slowest_cpu_s"], 3)
    return {"target": name, **counts, "by_kind": dict(defects), "samples": samples}


def json_baseline(examples: int, rng_seed: int) -> float:
    """Inputs per second of json.loads on generated replies (the same generator's cost)."""
    done = [0]

    @seed(rng_seed)
    @settings(
        max_examples=examples,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(fuzzing.llm_outputs())
    def run(raw: str) -> None:
        done[0] += 1
        with contextlib.suppress(ValueError, RecursionError):
            json.loads(raw)

    start = time.perf_counter()
    run()
    return done[0] / (time.perf_counter() - start)


TARGETS = ("llm_output", "state", "suite", "reports")


def target(name: str, folder: Path) -> tuple[st.SearchStrategy[Any], Callable[[Any], None]]:
    """The strategy and the target function of campaign ``name``; suite files are written to
    ``folder`` (one folder for the whole campaign: no directory made per input)."""
    if name == "llm_output":
        return fuzzing.llm_outputs(), fuzzing.llm_output
    if name == "state":
        return fuzzing.state_inputs(), fuzzing.state
    if name == "reports":
        return fuzzing.report_inputs(), lambda item: fuzzing.reports(item, folder)
    return fuzzing.suite_files(), lambda item: fuzzing.suite(item, folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--hang", type=float, default=10.0, help="CPU seconds making a hang")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    signal.signal(signal.SIGVTALRM, _on_alarm)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1_000))
    baseline = json_baseline(min(args.examples, 2_000), args.seed)
    print(f"baseline: json.loads on generated replies, {baseline:,.0f} inputs/s")
    results = []
    folder = Path(tempfile.mkdtemp(prefix="stateval-fuzz-"))
    for name in args.targets.split(","):
        if name not in TARGETS:
            parser.error(f"unknown target {name!r} (targets: {', '.join(TARGETS)})")
        strategy, run = target(name, folder)
        result = campaign(name, strategy, run, args.examples, args.hang, args.seed)
        rate = result["inputs"] / max(result["seconds"], 1e-9)
        result["rate_vs_json_loads"] = round(rate / baseline, 4)
        results.append(result)
        print(
            f"{name}: {result['inputs']:,} inputs in {result['seconds']} s "
            f"({rate / baseline:.3f}x json.loads), {result['defects']} defects, "
            f"{result['hangs']} hangs, slowest input {result['slowest_cpu_s']} s CPU "
            f"({result['slowest_s']} s wall)"
        )
        for kind, count in sorted(result["by_kind"].items(), key=lambda kv: -kv[1]):
            print(f"  !! {count} x {kind}: {result['samples'][kind]}")
        if result["hangs"]:
            print(f"  !! hang: {result['samples']['hang']}")
    shutil.rmtree(folder, ignore_errors=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    if any(r["defects"] or r["hangs"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
