"""The run journal: every case result and upload acknowledgement, appended as it happens.

A run lives in ``<root>/runs/<run_id>/journal.jsonl`` (``root`` is ``.stateval`` by default).
Each line is one JSON record, written and ``fsync``'d before the call returns:

- ``{"kind": "header", ...}``: the run (suite, hashes, planned case ids, Phoenix names);
- ``{"kind": "result", "case_id", ...}``: one case's result (the mutator's post-state or error,
  as ``stateval.run.CaseResult.to_dict``); a run with ``repetitions`` > 1 (``--repeat``) has
  one per case and repetition (``"repetition": 2``...);
- ``{"kind": "ack", "what": "dataset" | "experiment" | "run" | "evaluations", ...}``: Phoenix
  accepted an upload (so a resumed run never sends it again);
- ``{"kind": "spans", "seq", "count", "otlp"}``: a batch of spans Phoenix did not accept
  (base64 OTLP protobuf), sent again by a resumed run (then acknowledged as ``spans``);
- ``{"kind": "end"}``: the run finished (every planned case has a result).

A crash can leave a torn last line; opening the journal drops it.

Example:
    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> journal = Journal.create(root, RunHeader(suite_path="s.yaml", suite_name="s",
    ...     suite_hash="h", cases_hash="c", case_ids=["a"]))
    >>> journal.append_ack("experiment", experiment_id="E1")
    >>> Journal.open(root, "latest").ack("experiment")["experiment_id"]
    'E1'
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import threading
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stateval.errors import JournalError, JournalWriteError

__all__ = ["Journal", "RunHeader", "list_runs", "new_run_id"]

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
    fields_as: Literal["evaluations", "annotations", "both"] = "evaluations"
    repetitions: int = Field(default=1, ge=1)


def _runs_dir(root: str | Path) -> Path:
    return Path(root) / "runs"


def list_runs(root: str | Path) -> list[str]:
    """Run ids with a journal under ``root``, oldest first.

    Ids sort by their start second; runs started in the same second (their random suffixes
    sort any way) are ordered by the start time their headers record.
    """
    runs = _runs_dir(root)
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


class Journal:
    """An open run journal (see the module docstring). Appends are thread-safe.

    Attributes:
        path: The ``journal.jsonl`` file.
        header: The run.
        results: Case id -> the latest result record for it (``CaseResult.to_dict`` form); with
            repetitions, the first repetition's.
        repeated: (case id, repetition) -> result record, for repetitions 2 and up.
        complete: True once an ``end`` record was written.
    """

    def __init__(self, path: Path, header: RunHeader, records: list[dict[str, Any]]) -> None:
        self.path = path
        self.header = header
        self.results: dict[str, dict[str, Any]] = {}
        self.repeated: dict[tuple[str, int], dict[str, Any]] = {}
        self._acks: dict[tuple[str, str], dict[str, Any]] = {}
        self.complete = False
        self._spans: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        for record in records:
            self._absorb(record)

    @property
    def run_id(self) -> str:
        """The run's id (its folder name)."""
        return self.header.run_id

    @property
    def folder(self) -> Path:
        """The run's folder."""
        return self.path.parent

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def create(cls, root: str | Path, header: RunHeader) -> Journal:
        """Start a new run's journal under ``root``."""
        folder = _runs_dir(root) / header.run_id
        try:
            folder.mkdir(parents=True, exist_ok=False)
        except OSError as exc:
            raise JournalWriteError(
                f"cannot create run folder {folder}: {exc.strerror or exc}"
            ) from exc
        journal = cls(folder / JOURNAL_NAME, header, [])
        journal._write({"kind": "header", **header.model_dump(mode="json")})
        return journal

    @classmethod
    def open(cls, root: str | Path, run_id: str = "latest") -> Journal:
        """Open an existing run (``latest`` = the newest).

        Raises:
            JournalError: No such run, or its journal is unreadable.
        """
        if run_id == "latest":
            runs = list_runs(root)
            if not runs:
                raise JournalError(f"no runs under {_runs_dir(root)}")
            run_id = runs[-1]
        path = _runs_dir(root) / run_id / JOURNAL_NAME
        if not path.is_file():
            known = ", ".join(list_runs(root)[-5:]) or "none"
            raise JournalError(f"no run {run_id!r} under {_runs_dir(root)} (latest: {known})")
        records, good = _read(path)
        if good < path.stat().st_size:
            _truncate(path, good)  # drop a torn last line left by a crash mid-write
        if not records or records[0].get("kind") != "header":
            raise JournalError(f"{path}: does not start with a run header")
        header_data = {k: v for k, v in records[0].items() if k != "kind"}
        try:
            header = RunHeader.model_validate(header_data)
        except ValidationError as exc:
            raise JournalError(f"{path}:1: invalid run header: {exc.errors()[0]['msg']}") from exc
        return cls(path, header, records[1:])

    # -- reading -------------------------------------------------------------------------------

    def _absorb(self, record: dict[str, Any]) -> None:
        kind = record.get("kind")
        if kind == "result":
            case_id = record.get("case_id")
            if not isinstance(case_id, str):
                raise JournalError(f"{self.path}: a result record has no case_id")
            self._keep(case_id, record)
        elif kind == "ack":
            what = str(record.get("what"))
            key = str(record.get("case_id", ""))
            self._acks[(what, key)] = record
        elif kind == "end":
            self.complete = True
        elif kind == "spans":
            self._spans.append(record)

    def ack(self, what: str, case_id: str = "") -> dict[str, Any] | None:
        """The acknowledgement recorded for ``what`` (and ``case_id``), or None."""
        return self._acks.get((what, case_id))

    def acked(self, what: str) -> dict[str, dict[str, Any]]:
        """Case id -> acknowledgement, for per-case acknowledgements of kind ``what``."""
        return {key: rec for (kind, key), rec in self._acks.items() if kind == what and key}

    def _keep(self, case_id: str, record: dict[str, Any]) -> None:
        repetition = record.get("repetition") or 1
        if repetition == 1:
            self.results[case_id] = record
        else:
            self.repeated[(case_id, int(repetition))] = record

    @property
    def missing(self) -> list[str]:
        """Planned case ids without a result (of their first repetition), in plan order."""
        return [c for c in self.header.case_ids if c not in self.results]

    @property
    def missing_repetitions(self) -> list[tuple[str, int]]:
        """(case id, repetition) of the repetitions after the first still without a result."""
        return [
            (c, r)
            for r in range(2, self.header.repetitions + 1)
            for c in self.header.case_ids
            if (c, r) not in self.repeated
        ]

    def repetitions_of(self, case_id: str) -> list[dict[str, Any]]:
        """Every journaled result record of a case, in repetition order."""
        first = self.results.get(case_id)
        rest = [
            self.repeated[(case_id, r)]
            for r in range(2, self.header.repetitions + 1)
            if (case_id, r) in self.repeated
        ]
        return ([first] if first is not None else []) + rest

    # -- writing -------------------------------------------------------------------------------

    def append_result(self, case_id: str, result: dict[str, Any]) -> None:
        """Record a case result (durably, before returning)."""
        record = {"kind": "result", **result, "case_id": case_id}
        self._write(record)
        self._keep(case_id, record)

    def append_ack(self, what: str, case_id: str | None = None, **data: Any) -> None:
        """Record that Phoenix accepted an upload."""
        record: dict[str, Any] = {"kind": "ack", "what": what}
        if case_id is not None:
            record["case_id"] = case_id
        record.update(data)
        self._write(record)
        self._acks[(what, case_id or "")] = record

    def append_spans(self, otlp: bytes, count: int) -> None:
        """Keep a batch of spans Phoenix did not accept (OTLP protobuf) to send on resume."""
        with self._lock:
            seq = len(self._spans)
        record = {
            "kind": "spans",
            "seq": seq,
            "count": count,
            "otlp": base64.b64encode(otlp).decode("ascii"),
        }
        self._write(record)
        with self._lock:
            self._spans.append(record)

    def unsent_spans(self) -> list[tuple[str, bytes, int]]:
        """Kept span batches not yet acknowledged (``ack`` of ``spans``): (key, OTLP, count)."""
        out = []
        for record in list(self._spans):
            key = str(record.get("seq"))
            if self.ack("spans", key) is None:
                out.append((key, base64.b64decode(record["otlp"]), int(record.get("count", 0))))
        return out

    def append_end(self) -> None:
        """Record that every planned case has a result."""
        if not self.complete:
            self._write({"kind": "end", "at": datetime.now(UTC).isoformat()})
            self.complete = True

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            data = line.encode()
        except UnicodeEncodeError:  # an unpaired surrogate got through: \u-escape everything
            data = (json.dumps(record, separators=(",", ":")) + "\n").encode()
        with self._lock:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    _append_whole(fd, data)
                finally:
                    os.close(fd)
            except OSError as exc:
                raise JournalWriteError(f"cannot write {self.path}: {exc.strerror or exc}") from exc


def _append_whole(fd: int, data: bytes) -> None:
    """Append ``data`` and fsync; on a short or failed write (disk full) cut the file back to
    where it was, so the journal never keeps half a record followed by more records."""
    start = os.lseek(fd, 0, os.SEEK_END)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def _truncate(path: Path, size: int) -> None:
    try:
        with path.open("r+b") as handle:
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise JournalError(f"cannot repair {path}: {exc}") from exc


def _read(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The records, and the byte length of the complete (newline-terminated) lines."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"cannot read {path}: {exc}") from exc
    good = data.rfind(b"\n") + 1
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(data[:good].split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise JournalError(f"{path}:{number}: not a JSON record: {exc}") from exc
        if not isinstance(record, dict):
            raise JournalError(f"{path}:{number}: not a JSON object")
        records.append(record)
    return records, good
