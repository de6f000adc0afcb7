"""Run the MultiWOZ example into a folder of reports, ids and times masked, to compare two trees.

A refactoring must not change what users read: ``snapshot`` runs ``examples/multiwoz/suite.yaml``
through the ``stateval`` of a source tree (its ``src/``) the ways a user would (every report
format, a baseline gate, repetitions, both episode modes, a rescore, a mutation test), with no
Phoenix, and writes each report and each command's stdout with run ids, timestamps and durations
masked. ``compare`` diffs two such folders and exits 1 when they differ::

    python scripts/report_snapshot.py snapshot /tmp/before --src /path/to/old/tree  # or tree/src
    python scripts/report_snapshot.py snapshot /tmp/after
    python scripts/report_snapshot.py compare /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUITE = "examples/multiwoz/suite.yaml"

REPORTS = ("--report-json", "--junit", "--markdown", "--report-html")
SUFFIX = {"--report-json": "json", "--junit": "xml", "--markdown": "md", "--report-html": "html"}

# (name, command after `stateval`, report options taken)
COMMANDS: list[tuple[str, list[str], tuple[str, ...]]] = [
    ("run", ["run", SUITE, "--no-phoenix"], REPORTS),
    ("gate", ["run", SUITE, "--no-phoenix", "--baseline", "latest"], REPORTS),
    ("repeat", ["run", SUITE, "--no-phoenix", "--repeat", "2", "--limit", "30"], REPORTS),
    ("both", ["run", SUITE, "--no-phoenix", "--mode", "both", "--limit", "40"], REPORTS),
    ("shard", ["run", SUITE, "--no-phoenix", "--shard", "1/2"], ("--report-json",)),
    ("rescore", ["rescore", "latest", "--suite", SUITE, "--no-phoenix"], REPORTS),
    (
        "mutate",
        ["mutate", SUITE, "--limit", "20", "--max-mutants", "6"],
        ("--report-json", "--junit"),
    ),
]

_MASKS = [
    # the diff's heading shows :x: when any metric regressed, mean_time included (timing)
    (re.compile(r"^### :\w+: stateval:"), "### ICON stateval:"),
    (re.compile(r"<tr><td>(mean_time|time_used)</td>.*?</tr>"), r"<tr>\1 T</tr>"),
    (re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}"), "RUN_ID"),
    # a shard's shared run is hashed from the suite and the git commit: another commit's differs
    (re.compile(r"shared run [0-9a-f]{12}\b"), "shared run SHARED"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "TIMESTAMP"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s|µs)\b"), "DURATION"),
    (re.compile(r'(time|seconds|duration|elapsed)([a-z_]*)"?(:|=)\s*"?[0-9.e-]+'), r"\1\2\3 T"),
    (re.compile(r"\d+:\d\d:\d\d"), "CLOCK"),
]
_TIME_KEYS = re.compile(r"time|seconds|duration|elapsed|started|finished|created|_at$")
_TIMED_ROW = re.compile(r"^\W*(mean_time|time_used)\b")


def _mask_json(value: Any) -> Any:
    # keys keep their order: a report whose keys come in another order is another report
    if isinstance(value, dict) and any(_TIME_KEYS.search(str(v)) for v in value.values()):
        return dict.fromkeys(value, "T")  # a timed metric's row: its values and verdict
    if isinstance(value, dict):
        return {k: ("T" if _TIME_KEYS.search(k) else _mask_json(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_json(v) for v in value]
    if isinstance(value, str):
        return _mask_text(value)
    return value


def _mask_text(text: str) -> str:
    lines = []
    for line in text.splitlines():
        if _TIMED_ROW.search(line):  # a timed metric's row in a diff: its verdict is timing
            line = _TIMED_ROW.search(line).group(0) + " T"  # type: ignore[union-attr]
        for pattern, repl in _MASKS:
            line = pattern.sub(repl, line)
        # table columns widen with a masked duration: compare the cells, not their padding
        lines.append(re.sub(r"━+", "━", re.sub(r"[ \t]+", " ", line)).rstrip())
    return "\n".join(lines) + "\n"


def _masked(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.dumps(_mask_json(json.loads(text)), indent=1) + "\n"
    return _mask_text(text)


def snapshot(out: Path, src: Path) -> None:
    """Run every command of `COMMANDS` with the stateval of ``src`` into ``out``."""
    if out.exists():
        shutil.rmtree(out)
    raw = out / "raw"
    raw.mkdir(parents=True)
    env = {**os.environ, "STATEVAL_HOME": str(out / "home"), "COLUMNS": "200"}
    env.pop("PHOENIX_COLLECTOR_ENDPOINT", None)
    boot = f"import sys; sys.path.insert(0, {str(src)!r}); from stateval.cli import main; main()"
    for name, argv, reports in COMMANDS:
        options = [x for opt in reports for x in (opt, str(raw / f"{name}.{SUFFIX[opt]}"))]
        done = subprocess.run(
            [sys.executable, "-c", boot, *argv, *options],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        (raw / f"{name}.stdout").write_text(
            f"exit {done.returncode}\n{done.stdout}", encoding="utf-8"
        )
        (raw / f"{name}.stderr").write_text(done.stderr, encoding="utf-8")
    for path in sorted(raw.iterdir()):
        (out / path.name).write_text(_masked(path), encoding="utf-8")


def compare(before: Path, after: Path) -> int:
    """Print the differences of two snapshots; 0 when there are none."""
    names = sorted({p.name for p in before.glob("*.*")} | {p.name for p in after.glob("*.*")})
    differ = 0
    for name in names:
        a, b = before / name, after / name
        left = a.read_text(encoding="utf-8").splitlines() if a.exists() else []
        right = b.read_text(encoding="utf-8").splitlines() if b.exists() else []
        lines = list(difflib.unified_diff(left, right, str(a), str(b), lineterm="", n=1))
        if lines:
            differ += 1
            print("\n".join(lines[:60]))
    print(f"{len(names)} files compared, {differ} differ")
    return 1 if differ else 0


def _package_root(given: Path) -> Path:
    """The folder holding the ``stateval`` package: ``given`` itself or its ``src/`` (a tree).
    Anything else stops the script: run as is, the editable install's stateval would be
    snapshotted instead, and "before" would silently be "after"."""
    for root in (given, given / "src"):
        if (root / "stateval" / "__init__.py").is_file():
            return root
    raise SystemExit(f"--src {given}: no stateval package there nor in its src/")


def main() -> int:
    """``snapshot OUT [--src TREE/src]`` or ``compare BEFORE AFTER``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot")
    snap.add_argument("out", type=Path)
    snap.add_argument("--src", type=Path, default=ROOT / "src")
    comp = sub.add_parser("compare")
    comp.add_argument("before", type=Path)
    comp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "snapshot":
        snapshot(args.out, _package_root(args.src.resolve()))
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
