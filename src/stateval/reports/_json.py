"""The JSON report (``--report-json``)."""

from __future__ import annotations

import json
from pathlib import Path

from stateval.run import RunSummary

__all__ = ["write_json_report"]


def write_json_report(summary: RunSummary, path: str | Path) -> None:
    """Write `RunSummary.to_dict` as indented JSON to ``path``."""
    text = json.dumps(summary.to_dict(), indent=2, ensure_ascii=False)
    Path(path).write_text(text + "\n", encoding="utf-8")
