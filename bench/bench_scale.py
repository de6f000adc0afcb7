"""Scale: run throughput and memory, the comparison core, the JSON report, mutation testing.

Everything below is measured in one run of this script, on the same machine:

(1) ``stateval run SUITE --no-phoenix`` (journaled, the CLI in a child process) on generated
    suites of 20-field flat states with a trivial Python mutator, at 10,000, 20,000 and 100,000
    cases: cases per second, time(100k) / time(10k), and each child's peak RSS
    (``os.wait4``'s ``ru_maxrss``).
(2) ``compare_states`` including building both states from flat dicts, against a bare Python
    dict-compare loop over the same 20-field records, and against ``stickler-eval`` 1.0 in an
    environment of its own (created on first use under ``--stickler-env``; never a stateval
    dependency), side by side.
(3) The JSON report's encoding: the standard library (``indent=2``) against orjson.
(4) ``stateval mutate`` on the full MultiWOZ 2.1 test set (``../shared/data/multiwoz21``
    beside the repository, or ``--multiwoz``): cases x mutants per second.

Usage:
    python bench/bench_scale.py                       # everything (about 10 minutes)
    python bench/bench_scale.py --sizes 2000,4000,10000 --mutate-limit 500   # quicker
    python bench/bench_scale.py --only compare
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {
    "cases_per_s": 1000.0,
    "growth": 11.0,
    "rss_mib": 300.0,
    "vs_bare": 10.0,
    "vs_stickler": 5.0,
}

MUTATOR = '''"""bench_scale's mutator: sets the ten fields the input changes, one of them wrong."""

from stateval.state import ValueConfidence


def mutate(state, input):
    i = input.prompt
    for j in range(10):
        state.set_value(f"f{j}", ValueConfidence("wrong" if j == 3 else f"v{i}.{j}", 1.0))
    return state
'''


VARIED_MUTATOR = '''"""bench_scale's varied mutator: the fields its input names, one wrong."""

from stateval.state import ValueConfidence


def mutate(state, input):
    i, changed, wrong = input.prompt.split(":")
    for j in changed.split(","):
        state.set_value(f"f{j}", ValueConfidence("wrong" if j == wrong else f"v{i}.{j}", 1.0))
    return state
'''


def varied_plan(i: int) -> tuple[list[int], int | None]:
    """Case ``i``'s fields changed by its input (1 to 10 of the 20) and the one of them the
    varied mutator gets wrong (None for one case in three): no two neighbouring cases alike."""
    import random

    rng = random.Random(i)
    changed = sorted(rng.sample(range(20), rng.randint(1, 10)))
    return changed, None if i % 3 == 0 else rng.choice(changed)


def _mark(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def write_suite(folder: Path, n: int, *, varied: bool = False, asynchronous: bool = False) -> Path:
    """A suite of ``n`` cases: 20-field flat pre-states, ten fields changed by each input, the
    fourth of them wrong; with ``varied``, which fields change and which one is wrong vary from
    case to case (`varied_plan`), as in real data, so no two neighbouring cases score alike;
    with ``asynchronous``, the same mutator written ``async def`` (run in the event loop, not
    in a worker thread)."""
    import orjson

    folder.mkdir(parents=True, exist_ok=True)
    mutator = VARIED_MUTATOR if varied else MUTATOR
    if asynchronous:
        mutator = mutator.replace("def mutate(", "async def mutate(", 1)
    (folder / "bench_mutator.py").write_text(mutator)
    with (folder / "cases.jsonl").open("wb") as handle:
        for i in range(n):
            pre = {f"f{j}": f"old{i}.{j}" for j in range(20)}
            if varied:
                changed, wrong = varied_plan(i)
                codes = ",".join(map(str, changed))
                prompt = f"{i}:{codes}:{'' if wrong is None else wrong}"
            else:
                changed, prompt = list(range(10)), str(i)
            expected = {**pre, **{f"f{j}": f"v{i}.{j}" for j in changed}}
            case = {
                "id": f"c{i}",
                "pre_state": pre,
                "input": {"prompt": prompt},
                "expected_post_state": expected,
            }
            handle.write(orjson.dumps(case) + b"\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: scale\n"
        "mutator: {type: python, callable: 'bench_mutator:mutate', path: .}\n"
        "cases: {file: cases.jsonl}\n"
        "thresholds: {max_error_rate: 0}\n"
    )
    return suite


def run_child(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS (MiB) and stderr tail of one child
    process."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read().decode(errors="replace")[-1500:]
    if child.returncode not in (0, 1):
        raise SystemExit(f"!! {' '.join(argv)} exited {child.returncode}:\n{tail}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, tail


def bench_run(sizes: list[int], work: Path) -> dict[int, tuple[float, float, float]]:
    """(1): wall time, CPU time and peak RSS of ``stateval run --no-phoenix`` per size."""
    print("(1) stateval run --no-phoenix, journaled; 20-field flat states, trivial mutator")
    out: dict[int, tuple[float, float, float]] = {}
    for n in sizes:
        folder = work / f"run-{n}"
        suite = write_suite(folder, n)
        env = {**os.environ, "STATEVAL_HOME": str(folder / ".stateval")}
        argv = [sys.executable, "-c", "from stateval.cli import main; main()"]
        load = os.getloadavg()[0]
        elapsed, cpu, rss, _ = run_child([*argv, "run", str(suite), "--no-phoenix"], folder, env)
        journal = next((folder / ".stateval" / "runs").glob("*/journal.jsonl"))
        results = sum(1 for line in journal.open("rb") if line.startswith(b'{"kind":"result"'))
        if results != n:
            print(f"!! {n} cases planned, {results} results journaled")
        out[n] = (elapsed, cpu, rss)
        print(
            f"    {n:>7,} cases  {elapsed:7.1f} s wall ({n / elapsed:6.0f} cases/s)  "
            f"{cpu:7.1f} s CPU ({n / cpu:6.0f} cases/CPU-s)  peak RSS {rss:6.1f} MiB  "
            f"(load {load:.1f})"
        )
    return out


def records(n: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``n`` (expected, actual) pairs of 20-field flat records: 16 equal, 2 different values,
    1 missing, 1 extra."""
    pairs = []
    for i in range(n):
        expected = {f"f{j}": f"v{i}.{j}" for j in range(20)}
        actual = dict(expected)
        actual["f3"] = actual["f7"] = "wrong"
        del actual["f11"]
        actual["extra"] = "x"
        pairs.append((expected, actual))
    return pairs


def bare_compare(expected: dict[str, Any], actual: dict[str, Any]) -> tuple[int, int, int, int]:
    """The baseline: a plain loop counting matching, mismatched, missing and extra keys."""
    matching = mismatched = missing = 0
    for key, value in expected.items():
        if key not in actual:
            missing += 1
        elif actual[key] == value:
            matching += 1
        else:
            mismatched += 1
    extra = sum(1 for key in actual if key not in expected)
    return matching, mismatched, missing, extra


def _per_call(fn: Any, pairs: list[tuple[dict[str, Any], dict[str, Any]]], repeat: int) -> float:
    """Best microseconds of CPU time per call of ``fn(expected, actual)`` over ``repeat``
    passes (the thread's CPU time, so other jobs on a shared machine do not count)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        for expected, actual in pairs:
            fn(expected, actual)
        best = min(best, (time.thread_time() - start) / len(pairs))
    return best * 1e6


STICKLER_SCRIPT = """
import json, sys, time
from typing import Optional
from pydantic import create_model
from stickler import ComparableField, StructuredModel
from stickler.comparators import ExactComparator

pairs = json.load(open(sys.argv[1]))
repeat = int(sys.argv[2])
names = sorted({k for e, a in pairs for k in (*e, *a)})
fields = {
    k: (Optional[str], ComparableField(comparator=ExactComparator(), threshold=1.0, default=None))
    for k in names
}
Record = create_model("Record", __base__=StructuredModel, **fields)
result = Record(**pairs[0][0]).compare_with(Record(**pairs[0][1]))
best = float("inf")
for _ in range(repeat):
    start = time.thread_time()
    for e, a in pairs:
        Record(**e).compare_with(Record(**a))
    best = min(best, (time.thread_time() - start) / len(pairs))
print(json.dumps({"us": best * 1e6, "score": result["overall_score"]}))
"""


def stickler_python(env_dir: Path) -> Path | None:
    """The interpreter of an environment holding stickler-eval 1.0 (created when missing)."""
    python = env_dir / "bin" / "python"
    if not python.exists():
        print(f"    creating {env_dir} with stickler-eval 1.0 (once)")
        made = subprocess.run(
            [sys.executable, "-m", "venv", str(env_dir)], capture_output=True, check=False
        )
        if made.returncode != 0:
            return None
    probe = [str(python), "-c", "import stickler"]
    if subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        install = [str(python), "-m", "pip", "install", "-q", "stickler-eval>=1.0,<1.1"]
        if subprocess.run(install, capture_output=True, check=False).returncode != 0:
            return None
    return python


def bench_compare(n: int, repeat: int, stickler_env: Path | None, work: Path) -> None:
    """(2): compare_states (building both states) vs a bare loop vs stickler-eval."""
    from stateval import InterpretiveState, compare_states

    print(f"(2) comparing {n} pairs of 20-field flat records (CPU time, best of {repeat} passes)")
    pairs = records(n)

    def stateval_compare(expected: dict[str, Any], actual: dict[str, Any]) -> object:
        comparison = compare_states(
            InterpretiveState.from_flat(expected), InterpretiveState.from_flat(actual)
        )
        return comparison.accuracy_score

    check = compare_states(
        InterpretiveState.from_flat(pairs[0][0]), InterpretiveState.from_flat(pairs[0][1])
    ).counts
    if tuple(check.values()) != bare_compare(*pairs[0]):
        print(f"!! stateval counts {check} differ from the bare loop's {bare_compare(*pairs[0])}")
    bare = _per_call(bare_compare, pairs, repeat)
    ours = _per_call(stateval_compare, pairs, repeat)
    print(f"    bare dict loop            {bare:8.2f} us per pair")
    vs_bare = ours / bare
    print(
        f"    stateval compare_states   {ours:8.2f} us per pair   {vs_bare:5.1f}x the bare loop "
        f"(target <= {TARGETS['vs_bare']:g}: {_mark(vs_bare <= TARGETS['vs_bare'])})"
    )
    python = None if stickler_env is None else stickler_python(stickler_env)
    if python is None:
        print("    stickler-eval             skipped (no environment; see --stickler-env)")
        return
    data = work / "pairs.json"
    data.write_text(json.dumps(pairs[: max(200, n // 10)]))
    script = work / "stickler_bench.py"
    script.write_text(STICKLER_SCRIPT)
    done = subprocess.run(
        [str(python), str(script), str(data), str(repeat)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"!! stickler-eval failed: {done.stderr[-800:]}")
        return
    theirs = json.loads(done.stdout.strip().splitlines()[-1])["us"]
    faster = theirs / ours
    print(
        f"    stickler-eval 1.0         {theirs:8.2f} us per pair   stateval is {faster:5.1f}x "
        f"faster (target >= {TARGETS['vs_stickler']:g}: "
        f"{_mark(faster >= TARGETS['vs_stickler'])})"
    )


def bench_report(n: int) -> None:
    """(3): encoding a JSON report's cases with the standard library and with orjson."""
    import orjson

    from stateval import InterpretiveState
    from stateval.mutators import StructuredInput
    from stateval.run import CaseResult, Scoring, score_case
    from stateval.suite import Case

    print(f"(3) JSON report of {n} cases (20 fields each)")
    scoring = Scoring()
    dicts = []
    for i, (expected, actual) in enumerate(records(n)):
        case = Case(
            f"c{i}",
            InterpretiveState(),
            StructuredInput(str(i), f"c{i}"),
            InterpretiveState.from_flat(expected),
        )
        result = CaseResult(case.id, InterpretiveState.from_flat(actual), None, None, 0.001)
        dicts.append(score_case(case, result, scoring).to_dict())
    start = time.perf_counter()
    standard = json.dumps(dicts, indent=2, ensure_ascii=False).encode()
    slow = time.perf_counter() - start
    start = time.perf_counter()
    fast = orjson.dumps(dicts, option=orjson.OPT_INDENT_2)
    quick = time.perf_counter() - start
    if json.loads(standard) != json.loads(fast):
        print("!! orjson and json disagree")
    print(
        f"    json.dumps(indent=2) {slow:6.2f} s   orjson {quick:6.2f} s   "
        f"orjson is {slow / quick:4.1f}x faster ({len(fast) / 1e6:.1f} MB)"
    )


def multiwoz_cases(source: Path, folder: Path, limit: int | None) -> Path:
    """The MultiWOZ example suite over every turn of ``source`` (or the first ``limit``)."""
    sys.path.insert(0, str(ROOT / "examples" / "multiwoz"))
    from make_slice import dialogue_kinds, read_turns, to_case, write_jsonl

    turns = read_turns(source)[:limit]
    kinds = dialogue_kinds(turns)
    folder.mkdir(parents=True, exist_ok=True)
    cases = (to_case(turn, kinds[turn["dialogue_id"]]) for turn in turns)
    write_jsonl(folder / "cases.jsonl", cases)
    example = ROOT / "examples" / "multiwoz"
    text = (example / "suite.yaml").read_text()
    text = text.replace("path: .", f"path: {example}").replace(
        "file: data/cases.jsonl", f"file: {folder / 'cases.jsonl'}"
    )
    suite = folder / "suite.yaml"
    suite.write_text(text)
    return suite


def bench_mutate(source: Path, limit: int | None, work: Path) -> None:
    """(4): ``stateval mutate`` on the MultiWOZ test set: cases x mutants per second."""
    import asyncio

    from stateval.mutation import run_mutation
    from stateval.suite import load_suite

    if not source.exists():
        print(f"(4) skipped: {source} is absent (pass --multiwoz FILE)")
        return
    suite_path = multiwoz_cases(source, work / "multiwoz", limit)
    start = time.perf_counter()
    suite = load_suite(suite_path)
    loaded = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    report = asyncio.run(run_mutation(suite))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    n_cases, n_mutants = len(suite.cases), len(report.results)
    print(f"(4) stateval mutate on MultiWOZ 2.1 test turns ({source.name})")
    print(
        f"    {n_cases:,} cases x {n_mutants} mutants in {elapsed:.1f} s wall, {cpu:.1f} s CPU "
        f"(+ {loaded:.1f} s to load): {n_cases * n_mutants / elapsed:,.0f} case-mutants/s, "
        f"{n_cases * n_mutants / cpu:,.0f} per CPU-second; mutation score "
        f"{report.score.value:.3f}, {report.count('killed')} killed, "
        f"{report.count('survived')} survived"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,20000,100000", help="run sizes (cases)")
    parser.add_argument("--pairs", type=int, default=2000, help="record pairs compared")
    parser.add_argument("--repeat", type=int, default=5, help="passes (best is kept)")
    parser.add_argument("--report-cases", type=int, default=5000)
    parser.add_argument(
        "--stickler-env",
        type=Path,
        default=Path.home() / ".cache" / "stateval-bench" / "stickler",
        help="an environment for stickler-eval 1.0 (created when missing)",
    )
    parser.add_argument("--no-stickler", action="store_true")
    parser.add_argument(
        "--multiwoz",
        type=Path,
        default=ROOT.parent / "shared" / "data" / "multiwoz21" / "multiwoz21_test_full.jsonl",
    )
    parser.add_argument("--mutate-limit", type=int, default=None, help="first N MultiWOZ turns")
    parser.add_argument("--only", choices=("run", "compare", "report", "mutate"))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        work = Path(tmp)
        if args.only in (None, "run"):
            times = bench_run(sizes, work)
            if 20000 in times:
                wall, cpu, _ = times[20000]
                target = TARGETS["cases_per_s"]
                print(
                    f"    cases/s at 20,000: {20000 / wall:,.0f} wall, {20000 / cpu:,.0f} per "
                    f"CPU-second (target >= {target:g}: wall {_mark(20000 / wall >= target)}, "
                    f"CPU {_mark(20000 / cpu >= target)})"
                )
            if 10000 in times and 100000 in times:
                growth = times[100000][0] / times[10000][0]
                cpu_growth = times[100000][1] / times[10000][1]
                limit = TARGETS["growth"]
                print(
                    f"    time(100k) / time(10k): {growth:.2f} wall, {cpu_growth:.2f} CPU "
                    f"(target <= {limit:g}: wall {_mark(growth <= limit)}, "
                    f"CPU {_mark(cpu_growth <= limit)})"
                )
            if 100000 in times:
                rss = times[100000][2]
                print(
                    f"    peak RSS at 100,000: {rss:.0f} MiB (target <= "
                    f"{TARGETS['rss_mib']:g}: {_mark(rss <= TARGETS['rss_mib'])})"
                )
        if args.only in (None, "compare"):
            stickler = None if args.no_stickler else args.stickler_env
            bench_compare(args.pairs, args.repeat, stickler, work)
        if args.only in (None, "report"):
            bench_report(args.report_cases)
        if args.only in (None, "mutate"):
            bench_mutate(args.multiwoz, args.mutate_limit, work)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
