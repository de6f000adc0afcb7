"""The run journal: every case result and upload acknowledgement, appended as it happens.

A run lives in ``<root>/runs/<run_id>/journal.jsonl`` (``root`` is ``.stateval`` by default).
Each line is one JSON record:

- ``{"kind": "header", ...}``: the run (suite, hashes, planned case ids, Phoenix names);
- ``{"kind": "result", "case_id", ...}``: one case's result (the mutator's post-state or error,
  as ``stateval.run.CaseResult.to_dict``); a run with ``repetitions`` > 1 (``--repeat``) has
  one per case and repetition (``"repetition": 2``...);
- ``{"kind": "ack", "what": "dataset" | "experiment" | "run" | "evaluations", ...}``: Phoenix
  accepted an upload (so a resumed run never sends it again); a case's acknowledgement counts
  only until a later result record of that case supersedes it (``--retry-errors``);
- ``{"kind": "spans", "seq", "count", "otlp"}``: a batch of spans Phoenix did not accept
  (base64 OTLP protobuf), sent again by a resumed run (then acknowledged as ``spans``);
- ``{"kind": "delivered", "span_ids"}``: Phoenix accepted these cases' mutator-call spans (a
  resumed run re-creates, from their result records, the mutator-call spans of cases not listed
  here nor kept as a ``spans`` batch: those the process died holding);
- ``{"kind": "end"}``: the run finished (every planned case has a result).

Writes are grouped: records go to a writer thread that appends whatever is pending, up to
`WINDOW` records, with one ``write`` and one ``fsync`` (a group commit), so a fast mutator does
not wait on one ``fsync`` per case. `Journal.submit_result` returns a future that is done once
its record is durable; `Journal.append_result`, `append_ack` and `flush` block until then. A
process killed mid-run loses at most the records not yet written, and a resumed run re-runs
exactly those cases: nothing that reached the file runs twice.

Only case ids and file offsets are kept in memory; a result record is read back from the file
when asked for (`Journal.results`), so a journal of 100,000 cases stays small. A crash can leave
a torn last line; opening the journal drops it.

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
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stateval.errors import JournalBusyError, JournalError, JournalWriteError
from stateval.run._run_lock import release_run_lock, take_run_lock
from stateval.suite import FieldsAs

__all__ = ["WINDOW", "Journal", "JournalResults", "RunHeader", "list_runs", "new_run_id"]

JOURNAL_NAME = "journal.jsonl"
WINDOW = 256
"""The most records one ``fsync`` covers."""
_IDLE = 1.0  # seconds the writer thread waits for work before it exits


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


class _GroupWriter:
    """Appends byte records to one file from a thread of its own, a batch per ``fsync``.

    The thread starts on the first record and exits after `_IDLE` seconds without work. A
    failed write fails its batch and every later record (the journal is then unusable).
    """

    def __init__(self, path: Path, size: int, window: int) -> None:
        self.path = path
        self.size = size
        self.window = window
        self.fsyncs = 0
        self._cond = threading.Condition()
        self._pending: list[tuple[bytes, Future[None]]] = []
        self._last: Future[None] | None = None
        self._thread: threading.Thread | None = None
        self._error: JournalError | None = None

    def submit(self, data: bytes) -> tuple[int, Future[None]]:
        """Queue ``data``; return its offset in the file and a future done once it is durable."""
        done: Future[None] = Future()
        with self._cond:
            if self._error is not None:
                raise self._error
            offset = self.size
            self.size += len(data)
            self._pending.append((data, done))
            self._last = done
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"stateval-journal-{self.path.parent.name}", daemon=True
                )
                self._thread.start()
            self._cond.notify()
        return offset, done

    def flush(self) -> None:
        """Block until every record submitted so far is durable.

        Raises:
            JournalError: A write failed.
        """
        with self._cond:
            last = self._last
        if last is not None:
            last.result()

    def _take(self) -> list[tuple[bytes, Future[None]]] | None:
        with self._cond:
            if not self._pending:
                self._cond.wait(_IDLE)
            if not self._pending:
                self._thread = None
                return None
            batch = self._pending[: self.window]
            del self._pending[: self.window]
            return batch

    def _run(self) -> None:
        while (batch := self._take()) is not None:
            try:
                _append(self.path, b"".join(data for data, _ in batch))
            except OSError as exc:
                error = JournalWriteError(f"cannot write {self.path}: {exc.strerror or exc}")
                with self._cond:
                    self._error = error
                    batch += self._pending
                    self._pending = []
                    self._thread = None
                for _, done in batch:
                    done.set_exception(error)
                return
            self.fsyncs += 1
            for _, done in batch:
                done.set_result(None)


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _append_whole(fd, data)
    finally:
        os.close(fd)


def _encode_result(record: Mapping[str, Any]) -> bytes:
    """A result record's line: orjson, whose output reads back the same, for the one record
    per case (its values come from states and strings, never NaN, which orjson writes as
    null); what orjson refuses goes through `_encode`."""
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # an integer over 64 bits, a non-string key, an unpaired surrogate
        return _encode(record)


def _encode(record: Mapping[str, Any]) -> bytes:
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        return line.encode()
    except UnicodeEncodeError:  # an unpaired surrogate got through: \u-escape everything
        return (json.dumps(record, separators=(",", ":")) + "\n").encode()


class JournalResults(Mapping[str, dict[str, Any]]):
    """Case id -> the latest result record for it, read from the journal file when asked for.

    Iterates case ids in the order their results were recorded; only ids and file offsets are
    held in memory.
    """

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self._offsets: dict[str, int] = {}

    def _record(self, case_id: str, offset: int) -> None:
        self._offsets.pop(case_id, None)
        self._offsets[case_id] = offset

    def _forget(self, case_id: str) -> None:
        self._offsets.pop(case_id, None)

    def __getitem__(self, case_id: str) -> dict[str, Any]:
        for _, record in self.read([case_id]):
            if record is not None:
                return record
        raise KeyError(case_id)

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._offsets

    def __iter__(self) -> Iterator[str]:
        return iter(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    def read(self, case_ids: Iterable[str]) -> Iterator[tuple[str, dict[str, Any] | None]]:
        """``(case_id, record or None)`` for each of ``case_ids``, through one open file.

        Raises:
            JournalError: The file cannot be read, or a record is not where it was written.
        """
        journal = self._journal
        journal.flush()
        try:
            with journal.path.open("rb") as handle:
                for case_id in case_ids:
                    offset = self._offsets.get(case_id)
                    if offset is None:
                        yield case_id, None
                        continue
                    handle.seek(offset)
                    record = _parse(handle.readline(), journal.path, None)
                    if record.get("case_id") != case_id:
                        raise JournalError(f"{journal.path}: changed while the run was open")
                    yield case_id, record
        except OSError as exc:
            raise JournalError(f"cannot read {journal.path}: {exc}") from exc


def _parse(raw: bytes, path: Path, number: int | None) -> dict[str, Any]:
    where = f"{path}:{number}" if number is not None else str(path)
    try:
        record = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise JournalError(f"{where}: not a JSON record: {exc}") from exc
    if not isinstance(record, dict):
        raise JournalError(f"{where}: not a JSON object")
    return record


class Journal:
    """An open run journal (see the module docstring). Appends are thread-safe.

    Attributes:
        path: The ``journal.jsonl`` file.
        header: The run.
        results: Case id -> the latest result record for it (``CaseResult.to_dict`` form),
            read from the file when asked for; with repetitions, the first repetition's.
        repeated: (case id, repetition) -> result record, for repetitions 2 and up (held in
            memory: only ``--repeat`` runs have them).
        complete: True once an ``end`` record was written.
        delivered_spans: Ids of the mutator-call spans Phoenix acknowledged (``delivered``).
    """

    def __init__(self, path: Path, header: RunHeader, size: int, window: int = WINDOW) -> None:
        self.path = path
        self.header = header
        self.results = JournalResults(self)
        self.repeated: dict[tuple[str, int], dict[str, Any]] = {}
        self._acks: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
        self._latest: dict[str, int] = {}  # ack key -> offset of its latest result record
        self.complete = False
        self._spans: list[dict[str, Any]] = []
        self.delivered_spans: set[str] = set()
        self._lock = threading.Lock()
        self._writer = _GroupWriter(path, size, window)
        self._torn_at: int | None = None  # a torn last line to cut before the next write
        self._torn_end = 0  # where that torn line ended
        self._owner: int | None = None  # the descriptor holding the run's write lock

    @property
    def run_id(self) -> str:
        """The run's id (its folder name)."""
        return self.header.run_id

    @property
    def folder(self) -> Path:
        """The run's folder."""
        return self.path.parent

    @property
    def fsyncs(self) -> int:
        """How many ``fsync`` calls this process made on the journal."""
        return self._writer.fsyncs

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def create(cls, root: str | Path, header: RunHeader, *, window: int = WINDOW) -> Journal:
        """Start a new run's journal under ``root``.

        Args:
            root: The stateval folder (``.stateval``).
            header: The run.
            window: The most records one ``fsync`` covers.
        """
        folder = _runs_dir(root) / header.run_id
        try:
            folder.mkdir(parents=True, exist_ok=False)
        except OSError as exc:
            raise JournalWriteError(
                f"cannot create run folder {folder}: {exc.strerror or exc}"
            ) from exc
        journal = cls(folder / JOURNAL_NAME, header, 0, window)
        journal._append({"kind": "header", **header.model_dump(mode="json")}).result()
        return journal

    @classmethod
    def open(cls, root: str | Path, run_id: str = "latest", *, window: int = WINDOW) -> Journal:
        """Open an existing run (``latest`` = the newest), reading it in one pass.

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
        return cls.open_path(path, window=window)

    @classmethod
    def open_path(cls, path: str | Path, *, window: int = WINDOW) -> Journal:
        """Open the journal at ``path`` (a run folder, or its ``journal.jsonl``), wherever it
        is (a shard's run copied from another machine, say).

        Raises:
            JournalError: No journal there, or it is unreadable.
        """
        path = Path(path)
        if path.is_dir():
            path = path / JOURNAL_NAME
        if not path.is_file():
            raise JournalError(f"no run journal at {path}")
        try:
            with path.open("rb") as handle:
                return cls._read(path, handle, window)
        except OSError as exc:
            raise JournalError(f"cannot read {path}: {exc}") from exc

    @classmethod
    def _read(cls, path: Path, handle: Any, window: int) -> Journal:
        journal: Journal | None = None
        offset = 0
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                break  # a torn last line left by a crash mid-write
            if raw.strip():
                record = _parse(raw, path, number)
                if journal is None:
                    journal = cls(path, _header(record, path), 0, window)
                else:
                    journal._absorb(record, offset)
            offset += len(raw)
        if journal is None:
            raise JournalError(f"{path}: does not start with a run header")
        end = path.stat().st_size
        if offset < end:
            journal._torn_at, journal._torn_end = offset, end  # cut when written, not when read
        journal._writer.size = offset
        return journal

    # -- one writer per run --------------------------------------------------------------------

    def lock(self) -> None:
        """Take the run for writing (``fcntl.flock`` on ``<run>/lock``, released by `unlock`
        or when the process ends, however it ends).

        Raises:
            JournalBusyError: Another process is writing the run, or wrote it since this
                journal was read (its view of what is missing would be stale).
        """
        if self._owner is not None:
            return
        fd = take_run_lock(self.folder, self.run_id)
        known = self._writer.size if self._torn_at is None else self._torn_end
        if self.path.stat().st_size > known:
            release_run_lock(fd)
            raise JournalBusyError(
                f"run {self.run_id} was written by another process since it was read; "
                "run the command again"
            )
        self._owner = fd

    def unlock(self) -> None:
        """Give the run up for writing (see `lock`)."""
        fd, self._owner = self._owner, None
        if fd is not None:
            release_run_lock(fd)

    # -- reading -------------------------------------------------------------------------------

    def _absorb(self, record: dict[str, Any], offset: int) -> None:
        kind = record.get("kind")
        if kind == "result":
            case_id = record.get("case_id")
            if not isinstance(case_id, str):
                raise JournalError(f"{self.path}: a result record has no case_id")
            self._keep(case_id, record, offset)
        elif kind == "ack":
            what = str(record.get("what"))
            key = str(record.get("case_id", ""))
            self._acks[(what, key)] = (offset, record)
        elif kind == "end":
            self.complete = True
        elif kind == "spans":
            self._spans.append(record)
        elif kind == "delivered":
            self.delivered_spans.update(str(s) for s in record.get("span_ids") or ())

    def ack(self, what: str, case_id: str = "") -> dict[str, Any] | None:
        """The acknowledgement recorded for ``what`` (and ``case_id``), or None.

        A case's acknowledgement made before its latest result record (a retried case's old
        upload) is not returned: that result has not been uploaded.
        """
        found = self._acks.get((what, case_id))
        if found is None or not self._current(what, case_id, found[0]):
            return None
        return found[1]

    def acked(self, what: str) -> dict[str, dict[str, Any]]:
        """Case id -> acknowledgement, for per-case acknowledgements of kind ``what`` (those
        of the case's latest result, as `ack`)."""
        return {
            key: rec
            for (kind, key), (offset, rec) in self._acks.items()
            if kind == what and key and self._current(kind, key, offset)
        }

    def current_acks(self) -> list[dict[str, Any]]:
        """Every acknowledgement that still counts (as `ack` and `acked` return them), in the
        order they were recorded."""
        found = sorted(
            (offset, record)
            for (what, key), (offset, record) in self._acks.items()
            if self._current(what, key, offset)
        )
        return [record for _, record in found]

    def _current(self, what: str, key: str, offset: int) -> bool:
        return what == "spans" or offset > self._latest.get(key, -1)

    def _keep(self, case_id: str, record: dict[str, Any], offset: int) -> None:
        repetition = int(record.get("repetition") or 1)
        if repetition == 1:
            self.results._record(case_id, offset)
            self._latest[case_id] = offset
        else:
            self.repeated[(case_id, repetition)] = record
            self._latest[f"{case_id}#{repetition}"] = offset

    def retry_errors(self) -> list[str]:
        """Plan the failed cases (their latest result is an error) to run again, as
        ``stateval run --resume --retry-errors`` does: they count as missing, and what was
        uploaded of their failures no longer counts as uploaded (the new result replaces the
        failed experiment run in Phoenix). Their new results supersede the old records.

        Returns:
            The ids of the cases with a failed repetition, in plan order.
        """
        end = self._writer.size  # every ack so far precedes the results still to come
        failed: set[str] = set()
        for case_id, record in self.results.read(list(self.results)):
            if record is not None and record.get("error") is not None:
                self.results._forget(case_id)
                self._latest[case_id] = end
                failed.add(case_id)
        for (case_id, repetition), record in list(self.repeated.items()):
            if record.get("error") is not None:
                del self.repeated[(case_id, repetition)]
                self._latest[f"{case_id}#{repetition}"] = end
                failed.add(case_id)
        return [c for c in self.header.case_ids if c in failed]

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

    def submit_result(self, case_id: str, result: dict[str, Any]) -> Future[None]:
        """Record a case result without waiting; the future is done once it is durable.

        Raises:
            JournalError: An earlier write failed.
        """
        record = {"kind": "result", **result, "case_id": case_id}
        offset, done = self._submit(_encode_result(record))
        self._keep(case_id, record, offset)
        return done

    def append_result(self, case_id: str, result: dict[str, Any]) -> None:
        """Record a case result (durably, before returning)."""
        self.submit_result(case_id, result).result()

    def append_ack(self, what: str, case_id: str | None = None, **data: Any) -> None:
        """Record that Phoenix accepted an upload (durably, before returning)."""
        self.submit_ack(what, case_id, **data).result()

    def submit_ack(self, what: str, case_id: str | None = None, **data: Any) -> Future[None]:
        """`append_ack` without waiting; the future is done once the record is durable."""
        record: dict[str, Any] = {"kind": "ack", "what": what}
        if case_id is not None:
            record["case_id"] = case_id
        record.update(data)
        offset, done = self._submit(_encode(record))
        self._acks[(what, case_id or "")] = (offset, record)
        return done

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
        self._append(record).result()
        with self._lock:
            self._spans.append(record)

    def append_delivered(self, span_ids: Iterable[str]) -> None:
        """Record that Phoenix accepted the mutator-call spans ``span_ids`` (durably)."""
        ids = sorted(set(span_ids) - self.delivered_spans)
        if ids:
            self._append({"kind": "delivered", "span_ids": ids}).result()
            with self._lock:
                self.delivered_spans.update(ids)

    def kept_spans(self) -> list[bytes]:
        """Every span batch kept for Phoenix (sent since or not), as OTLP protobuf."""
        return [base64.b64decode(record["otlp"]) for record in list(self._spans)]

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
            self._append({"kind": "end", "at": datetime.now(UTC).isoformat()}).result()
            self.complete = True

    def flush(self) -> None:
        """Block until every record written so far is durable.

        Raises:
            JournalError: A write failed.
        """
        self._writer.flush()

    def _append(self, record: dict[str, Any]) -> Future[None]:
        return self._submit(_encode(record))[1]

    def _submit(self, data: bytes) -> tuple[int, Future[None]]:
        if self._torn_at is not None:  # the first write cuts a torn last line
            with self._lock:
                if self._torn_at is not None:
                    _truncate(self.path, self._torn_at)
                    self._torn_at = None
        return self._writer.submit(data)


def _header(record: dict[str, Any], path: Path) -> RunHeader:
    if record.get("kind") != "header":
        raise JournalError(f"{path}: does not start with a run header")
    try:
        return RunHeader.model_validate({k: v for k, v in record.items() if k != "kind"})
    except ValidationError as exc:
        raise JournalError(f"{path}:1: invalid run header: {exc.errors()[0]['msg']}") from exc


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
