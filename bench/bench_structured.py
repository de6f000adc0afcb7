"""Structured values: stateval against stickler-eval 1.0 on the shared fixture, and speed.

Measured in one run of this script, on the same machine:

(1) The 200 cases of ``tests/data/structured/fixture.json`` (invoices with line items, meetings
    with attendees, contacts with addresses; see ``bench/structured_fixture.py``) scored by
    stateval and by stickler-eval 1.0 (in an environment of its own, ``--stickler-env``, created
    on first use; never a stateval dependency). Where both define the same quantity, the
    largest difference: the weighted state score (stickler's ``overall_score``), the list's
    score, paired items, and each sub-field's correct / wrong counts on paired items.
    ``--write-stickler`` stores stickler's figures in ``tests/data/structured/
    stickler_scores.json``, which ``tests/test_structured_fixture.py`` checks stateval against.
(2) CPU time per case of both on that fixture, side by side.
(3) Two 1,000-item lists of records (reordered, every 20th item with one wrong sub-field)
    compared once: seconds (target < 1 s).
(4) 20-field flat states: ``compare_states`` against a bare dict loop (the ratio of
    ``bench_scale.py``'s part 2, measured again here).

Usage:
    python bench/bench_structured.py [--stickler-env DIR] [--write-stickler]
    python bench/bench_structured.py --no-stickler --list-size 100 --repeat 1   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import _per_call, bare_compare, records, stickler_python
from structured_fixture import (
    FIXTURE,
    LISTS,
    POLICIES,
    STICKLER_MODELS,
    STICKLER_SCORES,
)

STICKLER_SCRIPT = """
import json, sys, time
ns = {}
exec(open(sys.argv[1]).read(), ns)
cases = json.load(open(sys.argv[2]))
lists = json.loads(sys.argv[3])
repeat = int(sys.argv[4])
out = {}
for c in cases:
    model = ns["MODELS"][c["kind"]]
    r = model(**c["expected"]).compare_with(model(**c["actual"]), include_confusion_matrix=True)
    key = lists[c["kind"]]
    cm = r["confusion_matrix"]["fields"][key]
    objects = {k: cm["overall"][k] for k in ("tp", "fd", "fn", "fa")}
    subs = {
        name: {k: f["overall"][k] for k in ("tp", "fd", "fn", "fa")}
        for name, f in cm.get("fields", {}).items()
    }
    out[c["id"]] = {
        "overall": r["overall_score"],
        "list": r["field_scores"][key],
        "objects": objects,
        "sub_fields": subs,
    }
best = float("inf")
for _ in range(repeat):
    start = time.thread_time()
    for c in cases:
        model = ns["MODELS"][c["kind"]]
        model(**c["expected"]).compare_with(model(**c["actual"]))
    best = min(best, (time.thread_time() - start) / len(cases))
print(json.dumps({"us": best * 1e6, "scores": out}))
"""


_POLICIES: dict[tuple[str, float | None], Any] = {}


def _policies(kind: str, threshold: float | None) -> Any:
    from stateval.compare import FieldPolicies

    found = _POLICIES.get((kind, threshold))
    if found is None:
        spec = json.loads(json.dumps(POLICIES[kind]))
        if threshold is not None:
            spec[LISTS[kind]]["item_threshold"] = threshold
        found = _POLICIES[kind, threshold] = FieldPolicies.from_mapping(spec)
    return found


def stateval_figures(case: dict[str, Any], threshold: float | None = None) -> dict[str, Any]:
    """stateval's figures of one fixture case (``threshold`` overrides the item threshold)."""
    from stateval import InterpretiveState
    from stateval.compare import compare_states, score_comparison

    key = LISTS[case["kind"]]
    policies = _policies(case["kind"], threshold)
    comparison = compare_states(
        InterpretiveState.from_flat(case["expected"]),
        InterpretiveState.from_flat(case["actual"]),
        policies,
    )
    weighted = score_comparison(comparison, policies=policies).weighted_state_accuracy(always=True)
    field = comparison.field(key)
    assert weighted is not None
    assert field is not None
    assert field.records is not None
    counts = field.records.counts()
    subs: dict[str, dict[str, int]] = {}
    for item in field.records.items:
        if item.status not in ("matched", "partial"):
            continue
        for sub in item.fields:
            name = sub.path.rsplit("[].", 1)[-1]
            tally = subs.setdefault(name, {"tp": 0, "fd": 0})
            tally["tp" if sub.status == "correct" else "fd"] += 1
    return {
        "overall": weighted.score,
        "list": field.score,
        "paired": counts["matched"] + counts["partial"],
        "sub_fields": subs,
        "wrong_sub_fields": sum(1 for s in field.records.sub_outcomes() if s.status == "wrong"),
    }


def compare_with_stickler(
    cases: list[dict[str, Any]], theirs: dict[str, Any]
) -> tuple[dict[str, float], list[str]]:
    """The largest difference per shared quantity, and the cases where they differ."""
    worst = {"overall": 0.0, "list": 0.0, "overall@0": 0.0, "list@0": 0.0}
    differ = []
    for case in cases:
        ours, ours0, t = stateval_figures(case), stateval_figures(case, 0.0), theirs[case["id"]]
        for name, mine in (("overall", ours), ("list", ours), ("overall@0", ours0)):
            key = name.split("@")[0]
            worst[name] = max(worst[name], abs(mine[key] - t[key]))
        worst["list@0"] = max(worst["list@0"], abs(ours0["list"] - t["list"]))
        paired_sub = {k: {"tp": v["tp"], "fd": v["fd"]} for k, v in t["sub_fields"].items()}
        paired_t = t["objects"]["tp"]
        if (
            abs(ours["overall"] - t["overall"]) > 1e-9
            or ours["paired"] != paired_t
            or ours["sub_fields"] != paired_sub
        ):
            differ.append(f"{case['id']} ({case['variation']})")
    return worst, differ


def bench_lists(n: int = 1000, every: int = 20) -> float:
    """Seconds to compare two ``n``-item lists of records (reordered, 1 in ``every``
    perturbed)."""
    from stateval import InterpretiveState
    from stateval.compare import FieldPolicies, compare_states

    want = [{"sku": f"S{i}", "name": f"item {i}", "qty": i % 9, "price": i * 0.5} for i in range(n)]
    got = [dict(x) for x in reversed(want)]
    for x in got[::every]:
        x["qty"] += 1
    policies = FieldPolicies.from_mapping({"items": {"list_mode": "align"}})
    e = InterpretiveState.from_flat({"items": want})
    a = InterpretiveState.from_flat({"items": got})
    start = time.perf_counter()
    field = compare_states(e, a, policies).field("items")
    seconds = time.perf_counter() - start
    assert field is not None
    assert field.records is not None
    print(f"    {field.records.summary()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stickler-env", type=Path, default=Path(".bench-stickler-env"))
    parser.add_argument("--write-stickler", action="store_true")
    parser.add_argument(
        "--no-stickler",
        action="store_true",
        help="do not run stickler-eval; compare with its stored figures",
    )
    parser.add_argument("--list-size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = json.loads(FIXTURE.read_text())
    print(f"(1) {len(cases)} fixture cases: stateval vs stickler-eval 1.0")
    python = None if args.no_stickler else stickler_python(args.stickler_env)
    theirs = None
    stickler_us = None
    if python is None:
        print("    stickler-eval skipped (no environment; see --stickler-env)")
    else:
        with tempfile.TemporaryDirectory() as work:
            models = Path(work) / "models.py"
            models.write_text(STICKLER_MODELS)
            script = Path(work) / "score.py"
            script.write_text(STICKLER_SCRIPT)
            done = subprocess.run(
                [
                    str(python),
                    str(script),
                    str(models),
                    str(FIXTURE),
                    json.dumps(LISTS),
                    str(args.repeat),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
        if done.returncode != 0:
            print(f"!! stickler-eval failed: {done.stderr[-800:]}")
        else:
            result = json.loads(done.stdout.strip().splitlines()[-1])
            theirs, stickler_us = result["scores"], result["us"]
            if args.write_stickler:
                STICKLER_SCORES.write_text(json.dumps(theirs, indent=1, sort_keys=True) + "\n")
                print(f"    wrote {STICKLER_SCORES}")
    if theirs is None and STICKLER_SCORES.exists():
        print(f"    (using the stored figures of {STICKLER_SCORES.name})")
        theirs = json.loads(STICKLER_SCORES.read_text())
    if theirs is not None:
        worst, differ = compare_with_stickler(cases, theirs)
        print(f"    weighted state score vs overall_score: max |diff| {worst['overall']:.3g}")
        print(f"    list score:                            max |diff| {worst['list']:.3g}")
        print(
            f"    with item_threshold 0 (stickler credits sub-threshold pairs): "
            f"overall {worst['overall@0']:.3g}, list {worst['list@0']:.3g}"
        )
        print(f"    cases differing in score, paired items or sub-field counts: {len(differ)}")
        for line in differ:
            print(f"      {line}")

    from stateval.compare import FieldPolicies, compare_states  # noqa: F401 (warm import)

    def ours(case: dict[str, Any], _unused: Any = None) -> object:
        return stateval_figures(case)

    pairs = [(c, None) for c in cases]
    us = _per_call(ours, pairs, args.repeat)
    print("(2) CPU time per fixture case (compare + scores)")
    print(f"    stateval          {us:9.1f} us")
    if stickler_us is not None:
        print(
            f"    stickler-eval 1.0 {stickler_us:9.1f} us   "
            f"stateval is {stickler_us / us:5.1f}x faster"
        )
    print(f"(3) two {args.list_size:,}-item lists of records, reordered")
    for every, what in ((20, "every 20th item"), (1, "every item")):
        seconds = bench_lists(args.list_size, every=every)
        mark = "ok" if seconds < 1 else "MISSED"
        print(f"    {what} with one wrong sub-field: {seconds:.3f} s (target < 1 s: {mark})")
    print("(4) 20-field flat states (compare_states incl. building both states vs a bare loop)")
    from stateval import InterpretiveState

    flat = records(200 if args.no_stickler else 2000)

    def flat_compare(e: dict[str, Any], a: dict[str, Any]) -> object:
        return compare_states(
            InterpretiveState.from_flat(e), InterpretiveState.from_flat(a)
        ).accuracy_score

    bare = _per_call(bare_compare, flat, args.repeat)
    mine = _per_call(flat_compare, flat, args.repeat)
    print(
        f"    bare {bare:.2f} us, stateval {mine:.2f} us per pair: {mine / bare:.1f}x the bare loop"
    )


if __name__ == "__main__":
    main()
