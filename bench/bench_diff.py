"""``stateval diff`` of two large journaled runs: CPU seconds and peak RSS, in one run of this
script, against the implementation before issue 25 measured at a smaller size.

A suite of ``n`` 20-field flat cases is written, then two journals of it the way the run
writes them (`stateval.run.Journal`, one result record per case, `CaseResult.to_dict` with
the case's `compact_scores`, the header's `scores_fingerprint`): the baseline gets ten fields
right and one field wrong per case; the candidate the same with a seeded few percent of cases
worse on one field and better on another, so the diff has real regressions, improvements and
intervals to find. Each diff runs in a child process (``os.wait4``: user + system CPU seconds
and ``ru_maxrss``) through `stateval.cli` (``diff BASE CAND --json``):

- ``new``: the diff as shipped (each case's journaled compact scores reduced to its place in
  the columns; the paired normal interval from `NORMAL_FROM` cases on).
- ``rescore``: the same diff scoring both journals again (``local_run(...,
  journaled=False)``: what it does for runs journaled before compact scores, or a suite whose
  scoring changed), at ``--rescore-size``.
- ``old``: what the diff did before issue 25: every repetition's score kept for the whole run
  (`journaled_repetitions`) and the scipy bootstrap at every size, at ``--old-size``.

Printed: each size's CPU and peak RSS, new/rescore and new/old where both ran, the growth
25k -> 100k (linear is 4x), and whether the 100k diff meets the targets (<= 30 s CPU, <= 500
MiB). Every mode's verdicts at one size must agree (a line starting ``!!`` says they do not).

Usage:
    python bench/bench_diff.py              # sizes 25000,100000, rescore at 25000, old at 5000
    python bench/bench_diff.py --sizes 300,1200 --old-size 300 --rescore-size 300   # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_CPU = 30.0
TARGET_MIB = 500.0
FIELDS = 20

CHILD = """
import sys
mode = sys.argv[1]
if mode == "old":
    from stateval.regressions import _sources, _stats
    from stateval.regressions._scores import ScoredRun
    from stateval.run import Scoring, journaled_repetitions

    _stats.NORMAL_FROM = 1 << 62  # the scipy bootstrap at every size

    def local_run(journal, suite):
        scores = journaled_repetitions(suite, journal, Scoring.from_suite(suite))
        link = _sources.experiment_link(journal)
        return ScoredRun.from_scores(f"run {journal.run_id}", scores, experiment=link,
                                     suite_name=journal.header.suite_name)

    _sources.local_run = local_run
elif mode == "rescore":
    import functools
    from stateval.regressions import _sources

    _sources.local_run = functools.partial(_sources.local_run, journaled=False)
from stateval.cli import main
sys.argv = ["stateval", "diff", *sys.argv[2:]]
main()
"""


def write_suite(folder: Path, n: int) -> Path:
    """``n`` cases of 20-field flat states; each input changes the first ten fields."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "cases.jsonl").open("w") as handle:
        for i in range(n):
            pre = {f"f{j}": f"old{i}.{j}" for j in range(FIELDS)}
            expected = {**pre, **{f"f{j}": f"v{i}.{j}" for j in range(10)}}
            case = {"id": f"c{i}", "pre_state": pre, "input": {"prompt": str(i)}}
            handle.write(json.dumps({**case, "expected_post_state": expected}) + "\n")
    (folder / "mutator.py").write_text("def mutate(state, input):\n    return state\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: diffbench\n"
        "mutator: {type: python, callable: 'mutator:mutate', path: .}\n"
        "cases: {file: cases.jsonl}\n"
    )
    return suite


def write_run(home: Path, suite_path: Path, n: int, *, candidate: bool) -> str:
    """A journal of ``n`` results of the suite; the run id."""
    from stateval.run import (
        SCORES_KEY,
        CaseResult,
        Journal,
        RunHeader,
        Scoring,
        compact_scores,
        score_case,
        scores_fingerprint,
    )
    from stateval.suite import load_suite

    suite = load_suite(suite_path, load_mutator=False)
    scoring = Scoring.from_suite(suite)
    figures = scoring.accumulator()
    header = RunHeader(
        suite_path=str(suite_path.resolve()),
        suite_name=suite.name,
        suite_hash=suite.suite_hash,
        cases_hash=suite.cases_hash,
        case_ids=[c.id for c in suite.cases],
        scores_fingerprint=scores_fingerprint(scoring, suite.cases_hash),
    )
    journal = Journal.create(home, header)
    cases = iter(suite.cases)
    rng = random.Random(7)
    for i in range(n):
        post = {f"f{j}": f"old{i}.{j}" for j in range(FIELDS)}
        post.update({f"f{j}": f"v{i}.{j}" for j in range(10)})
        post["f3"] = "wrong"  # both runs miss f3
        if candidate:
            draw = rng.random()
            if draw < 0.04:
                post["f5"] = "wrong"  # the candidate regresses on f5 in 4% of cases
            elif draw < 0.06:
                post["f3"] = f"v{i}.3"  # and gets f3 right in 2%
        state = {"fields": {p: [{"value": v, "confidence": 1.0}] for p, v in post.items()}}
        record = {
            "case_id": f"c{i}",
            "post_state": state,
            "error": None,
            "error_type": None,
            "time_used": 0.001 + rng.random() * 1e-4,
            "trace_id": None,
            "span_id": None,
            "raw_output": None,
            "started_at": None,
            "judgements": [],
        }
        case = next(cases)
        scores = compact_scores(
            case, score_case(case, CaseResult.from_dict(record), scoring), scoring, figures
        )
        journal.submit_result(f"c{i}", {**record, SCORES_KEY: scores})
    journal.append_end()
    journal.flush()
    return journal.run_id


def measure(mode: str, home: Path, suite: Path, base: str, cand: str) -> tuple[float, float, dict]:
    """CPU seconds, peak RSS (MiB) and the JSON diff of one child process."""
    env = {**os.environ, "STATEVAL_HOME": str(home)}
    argv = [sys.executable, "-c", CHILD, mode, base, cand, "--suite", str(suite), "--json"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if code != 0:
            raise SystemExit(f"!! diff ({mode}) exited {code}: {err.read().decode()[-1500:]}")
        data = json.loads(out.read())
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, data


def verdicts(data: dict) -> dict[str, str]:
    """Field and metric -> verdict, to check both implementations agree."""
    out = {f"field {f['path']}": f["verdict"] for f in data["fields"]}
    out.update({f"metric {m['name']}": m["verdict"] for m in data["metrics"]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="25000,100000", help="new-implementation sizes")
    parser.add_argument("--old-size", type=int, default=5000, help="size the old one runs at")
    parser.add_argument(
        "--rescore-size", type=int, default=25000, help="size the rescoring diff runs at"
    )
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")} | {args.old_size, args.rescore_size})
    print(
        f"stateval diff of two journaled runs, {FIELDS}-field cases (load {os.getloadavg()[0]:.1f})"
    )
    results: dict[tuple[str, int], tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            folder = Path(tmp) / f"n{n}"
            suite = write_suite(folder, n)
            home = folder / ".stateval"
            start = time.perf_counter()
            base = write_run(home, suite, n, candidate=False)
            cand = write_run(home, suite, n, candidate=True)
            print(f"    {n:>7,} cases: two journals written in {time.perf_counter() - start:.1f} s")
            modes = ["new"]
            modes += ["rescore"] if n == args.rescore_size else []
            modes += ["old"] if n == args.old_size else []
            seen: dict[str, dict[str, str]] = {}
            for mode in modes:
                load = os.getloadavg()[0]
                cpu, rss, data = measure(mode, home, suite, base, cand)
                results[(mode, n)] = (cpu, rss)
                seen[mode] = verdicts(data)
                print(
                    f"    {n:>7,} cases  {mode}: {cpu:7.2f} s CPU  peak RSS {rss:7.1f} MiB  "
                    f"(regressed: {', '.join(data['regressed_fields']) or '-'}; "
                    f"improved: {', '.join(data['improved_fields']) or '-'}; load {load:.1f})"
                )
            for other in modes[1:]:
                if seen[other] != seen["new"]:
                    diff = {k: (v, seen[other].get(k)) for k, v in seen["new"].items()}
                    print(f"!! new and {other} verdicts differ at {n}: {diff}")
    for other, size in (("rescore", args.rescore_size), ("old", args.old_size)):
        new_cpu, new_rss = results[("new", size)]
        cpu, rss = results[(other, size)]
        print(
            f"    at {size:,} cases new/{other}: CPU {new_cpu / cpu:.2f}x, "
            f"peak RSS {new_rss / rss:.2f}x"
        )
    top = max(sizes)
    lower = [n for n in sizes if n < top]
    if lower:
        n0 = max(lower)
        cpu0, rss0 = results[("new", n0)]
        cpu1, rss1 = results[("new", top)]
        print(
            f"    growth {n0:,} -> {top:,} ({top / n0:.1f}x cases): CPU {cpu1 / cpu0:.2f}x, "
            f"peak RSS {rss1 / rss0:.2f}x"
        )
    cpu, rss = results[("new", top)]
    ok = cpu <= TARGET_CPU and rss <= TARGET_MIB
    print(
        f"    {top:,} cases: {cpu:.1f} s CPU (target <= {TARGET_CPU:.0f}), {rss:.0f} MiB "
        f"(target <= {TARGET_MIB:.0f}): {'ok' if ok else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
