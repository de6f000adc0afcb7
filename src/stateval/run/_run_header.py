"""A run's header (`RunHeader`, the first record of its journal), its id and where runs live:
``<root>/runs/<run_id>/journal.jsonl`` (`list_runs`)."""

from __future__ import annotations

import json
import secrets
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stateval.errors import JournalError
from stateval.suite import FieldsAs

__all__ = ["JOURNAL_NAME", "RunHeader", "header_from_record", "list_runs", "new_run_id", "runs_dir"]

JOURNAL_NAME = "journal.jsonl"


def new_run_id() -> str:
    """A sortable, unique run id: ``20250101-120000-ab12cd``."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class RunHeader(BaseModel):
    """The first record of a journal: what the run is."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(default_factory=new_run_id)
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    suite_path: str
    suite_name: str
    suite_hash: str
    cases_hash: str
    case_ids: list[str]
    mutator: str = ""
    stateval_version: str = ""
    git_commit: str | None = None
    phoenix_url: str | None = None
    dataset: str | None = None
    experiment_name: str | None = None
    project: str | None = None
    shard: str | None = None
    shared_run: str | None = None
    fields_as: FieldsAs = "evaluations"
    repetitions: int = Field(default=1, ge=1)
    mode: Literal["teacher_forced", "free_running"] = "teacher_forced"
    merged_from: list[str] = Field(default_factory=list)
    scores_fingerprint: str | None = None
    """The scoring settings its result records' ``scores`` were made under
    (`stateval.run.scores_fingerprint`); None in runs journaled before them."""


def runs_dir(root: str | Path) -> Path:
    """The folder of the runs under ``root``."""
    return Path(root) / "runs"


def list_runs(root: str | Path) -> list[str]:
    """Run ids with a journal under ``root``, oldest first.

    Ids sort by their start second; runs started in the same second (their random suffixes
    sort any way) are ordered by the start time their headers record.
    """
    runs = runs_dir(root)
    if not runs.is_dir():
        return []
    names = sorted(p.name for p in runs.iterdir() if (p / JOURNAL_NAME).is_file())
    seconds = Counter(name[:_SECOND] for name in names)
    return sorted(
        names,
        key=lambda name: (
            name[:_SECOND],
            _created_at(runs / name / JOURNAL_NAME) if seconds[name[:_SECOND]] > 1 else "",
            name,
        ),
    )


_SECOND = len("20250101-120000")


def _created_at(path: Path) -> str:
    """The ``created_at`` of a journal's header line ('' when unreadable)."""
    try:
        with path.open(encoding="utf-8") as handle:
            value = json.loads(handle.readline()).get("created_at", "")
    except (OSError, ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


def header_from_record(record: dict[str, Any], path: Path) -> RunHeader:
    """The `RunHeader` of a journal's first record (read from ``path``).

    Raises:
        JournalError: It is not a valid header.
    """
    if record.get("kind") != "header":
        raise JournalError(f"{path}: does not start with a run header")
    unknown = sorted(k for k in record if k != "kind" and k not in RunHeader.model_fields)
    if unknown:  # said so, not pydantic's "Extra inputs are not permitted"
        raise JournalError(
            f"{path}:1: the run header holds {', '.join(map(repr, unknown[:5]))}, which this "
            "stateval does not know: the run was journaled by a newer stateval (upgrade to "
            "read it)"
        )
    try:
        return RunHeader.model_validate({k: v for k, v in record.items() if k != "kind"})
    except ValidationError as exc:
        raise JournalError(f"{path}:1: invalid run header: {exc.errors()[0]['msg']}") from exc
