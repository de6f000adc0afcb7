"""The JSON report (``--report-json``), written one case at a time with orjson.

The cases are streamed from the summary (for a run, read back from its journal and scored
again, see `stateval.run.JournalScores`), so a report of 100,000 cases is never held in memory
whole. orjson encodes it about 20 times faster than the standard library (bench_scale.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from stateval.regressions import FieldStability, Reliability, RunDiff
from stateval.reports._atomic import atomic_file, write_atomically
from stateval.run import RunSummary, ThresholdResult

__all__ = ["add_diff", "add_stability", "write_json_report"]

_INDENT = orjson.OPT_INDENT_2


def _encode(value: Any) -> bytes:
    """``value`` as indented JSON; strings orjson refuses (lone surrogates) are escaped."""
    try:
        return orjson.dumps(value, option=_INDENT)
    except orjson.JSONEncodeError:
        return json.dumps(value, indent=2, ensure_ascii=True).encode()


def write_json_report(summary: RunSummary, path: str | Path) -> None:
    """Write `RunSummary.to_dict` as indented JSON to ``path``, one case at a time."""
    head = _encode(summary.head_dict())
    with atomic_file(path) as handle:
        handle.write(head[:-2])  # up to the last field, without "\n}"
        handle.write(b',\n  "cases": [')
        first = True
        for score in summary.cases:
            handle.write(b"\n    " if first else b",\n    ")
            handle.write(_encode(score.to_dict()).replace(b"\n", b"\n    "))
            first = False
        handle.write(b"]\n}\n" if first else b"\n  ]\n}\n")


def _add(path: Path, key: str, value: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data[key] = value
    write_atomically(path, json.dumps(data, indent=2) + "\n")


def add_diff(path: Path, diff: RunDiff, gate: ThresholdResult, summary: RunSummary) -> None:
    """Add the diff against the baseline, with the gate's result, as ``regressions``."""
    _add(path, "regressions", {**diff.to_dict(), "gate": gate.to_dict()})


def add_stability(
    path: Path, repetitions: int, fields: Sequence[FieldStability], pass_k: Reliability
) -> None:
    """Add each field's stability over the run's repetitions, and pass^k, as ``repetitions``."""
    section = {
        "repetitions": repetitions,
        "fields": [f.to_dict() for f in fields],
        "pass_k": pass_k.to_dict(),
    }
    _add(path, "repetitions", section)
