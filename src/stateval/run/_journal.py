"""The run journal: every case result and upload acknowledgement, appended as it happens.

A run lives in ``<root>/runs/<run_id>/journal.jsonl`` (``root`` is ``.stateval`` by default).
Each line is one JSON record:

- ``{"kind": "header", ...}``: the run (suite, hashes, planned case ids, Phoenix names);
- ``{"kind": "result", "case_id", ...}``: one case's result (the mutator's post-state or error,
  as ``stateval.run.CaseResult.to_dict``); a run with ``repetitions`` > 1 (``--repeat``) has
  one per case and repetition (``"repetition": 2``...); with ``"scores"``, what ``stateval
  diff`` reads of it, made under the header's ``scores_fingerprint``
  (`stateval.run.compact_scores`);
- ``{"kind": "ack", "what": "dataset" | "experiment" | "run" | "evaluations", ...}``: Phoenix
  accepted an upload (so a resumed run never sends it again); a case's acknowledgement counts
  only until a later result record of that case supersedes it (``--retry-errors``);
- ``{"kind": "spans", "seq", "count", "otlp"}``: a batch of spans Phoenix did not accept
  (base64 OTLP protobuf), sent again by a resumed run (then acknowledged as ``spans``);
- ``{"kind": "delivered", "span_ids"}``: Phoenix accepted these cases' mutator-call spans (a
  resumed run re-creates, from their result records, the mutator-call spans of cases not listed
  here nor kept as a ``spans`` batch: those the process died holding);
- ``{"kind": "end"}``: the run finished (every planned case has a result).

Writes are grouped: records go to a writer thread that appends what is pending (lingering ~20 ms
for more while nobody waits for one), up to `WINDOW` records, with one ``write`` and one
``fsync`` (a group commit). `Journal.submit_result` returns a future that is done once its
record is durable; `Journal.append_result`, `append_ack` and `flush` block until then. A
process killed mid-run loses at most the records not yet written, and a resumed run re-runs
exactly those cases: nothing that reached the file runs twice.

Only case ids and file offsets are kept in memory; a result record is read back from the file
when asked for (`Journal.results`), so a journal of 100,000 cases stays small, and opening it
reads a first repetition's result line only up to its case id. Opening drops a torn last line.

The parts: the header and where runs live (``_run_header.py``), the records on disk and the
group writer (``_journal_file.py``), the results read by offset (``_journal_results.py``), what
a worker hands the driver to open its journal unread (``_journal_index.py``), and the journal.

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
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stateval.errors import JournalBusyError, JournalError, JournalWriteError
from stateval.run._journal_file import (
    WINDOW,
    FileRange,
    GroupWriter,
    encode_record,
    encode_result,
    parse_record,
    plain_result_id,
    truncate,
)
from stateval.run._journal_index import JournalIndex
from stateval.run._journal_results import JournalResults, RepeatedResults, repetition_of
from stateval.run._run_header import (
    JOURNAL_NAME,
    RunHeader,
    header_from_record,
    list_runs,
    runs_dir,
)
from stateval.run._run_lock import release_run_lock, take_run_lock

__all__ = ["Journal"]


class Journal:
    """An open run journal (see the module docstring). Appends are thread-safe.

    Attributes:
        path: The ``journal.jsonl`` file.
        header: The run.
        results: Case id -> the latest result record for it (``CaseResult.to_dict`` form),
            read from the file when asked for; with repetitions, the first repetition's.
        repeated: (case id, repetition) -> result record, for repetitions 2 and up
            (``--repeat``), read from the file when asked for, as ``results``.
        complete: True once an ``end`` record was written.
        delivered_spans: Ids of the mutator-call spans Phoenix acknowledged (``delivered``).
    """

    def __init__(self, path: Path, header: RunHeader, size: int, window: int = WINDOW) -> None:
        self.path = path
        self.header = header
        self.results = JournalResults(path, self.flush)
        self.repeated = RepeatedResults(path, self.flush)
        self._acks: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
        self._latest: dict[str, int] = {}  # ack key -> offset of its latest result record
        self.complete = False
        self._spans: list[dict[str, Any]] = []
        self.delivered_spans: set[str] = set()
        self._lock = threading.Lock()
        self._writer = GroupWriter(path, size, window)
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
        folder = runs_dir(root) / header.run_id
        try:
            folder.mkdir(parents=True, exist_ok=False)
        except OSError as exc:
            why = exc.strerror or exc
            raise JournalWriteError(f"cannot create run folder {folder}: {why}") from exc
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
                raise JournalError(f"no runs under {runs_dir(root)}")
            run_id = runs[-1]
        path = runs_dir(root) / run_id / JOURNAL_NAME
        if not path.is_file():
            known = ", ".join(list_runs(root)[-5:]) or "none"
            raise JournalError(f"no run {run_id!r} under {runs_dir(root)} (latest: {known})")
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
            if journal is not None and (case_id := plain_result_id(raw)) is not None:
                journal._note_first(case_id, offset)  # a first repetition's: parsed when read
            elif raw.strip():
                record = parse_record(raw, path, number)
                if journal is None:
                    journal = cls(path, header_from_record(record, path), 0, window)
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

    def index(self) -> JournalIndex:
        """What this journal knows of its file, every record durable first (to open it in
        another process without reading it, `from_index`)."""
        self.flush()
        with self._lock:
            return JournalIndex(
                header=self.header,
                size=self._writer.size,
                offsets=self.results.offsets(),
                repeated=self.repeated.offsets(),
                acks=dict(self._acks),
                latest=dict(self._latest),
                complete=self.complete,
                spans=tuple(self._spans),
                delivered_spans=frozenset(self.delivered_spans),
            )

    @classmethod
    def from_index(cls, root: str | Path, index: JournalIndex, *, window: int = WINDOW) -> Journal:
        """Open the run ``index`` describes under ``root`` (`index`, taken where the file was
        written, by a worker), without reading its journal.

        Raises:
            JournalError: No such run, or its journal is not the size the index says.
        """
        path = runs_dir(root) / index.header.run_id / JOURNAL_NAME
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise JournalError(f"no run journal at {path}: {exc.strerror or exc}") from exc
        if size != index.size:
            raise JournalError(f"{path}: {size} bytes, not the {index.size} its run wrote")
        journal = cls(path, index.header, index.size, window)
        for case_id, offset in index.offsets.items():
            journal.results.note(case_id, offset)
        for key, offset in index.repeated.items():
            journal.repeated.note(key, offset)
        journal.complete = index.complete
        journal._acks, journal._latest = dict(index.acks), dict(index.latest)
        journal._spans, journal.delivered_spans = list(index.spans), set(index.delivered_spans)
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
            self._acks[(str(record.get("what")), str(record.get("case_id", "")))] = (offset, record)
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

    def _note_first(self, case_id: str, offset: int) -> None:
        self.results.note(case_id, offset)  # a case's first repetition: its latest result
        self._latest[case_id] = offset

    def _keep(self, case_id: str, record: dict[str, Any], offset: int) -> None:
        repetition = repetition_of(record)
        if repetition == 1:
            self._note_first(case_id, offset)
        else:
            self.repeated.note((case_id, repetition), offset)
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
                self.results.forget(case_id)
                self._latest[case_id] = end
                failed.add(case_id)
        for (case_id, repetition), record in self.repeated.items():  # its keys copied first
            if record.get("error") is not None:
                self.repeated.forget((case_id, repetition))
                self._latest[f"{case_id}#{repetition}"] = end
                failed.add(case_id)
        return [c for c in self.header.case_ids if c in failed]

    @property
    def missing(self) -> list[str]:
        """Planned case ids without a result (of their first repetition), in plan order."""
        return self.results.missing(self.header.case_ids)

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
        later = [(case_id, r) for r in range(2, self.header.repetitions + 1)]
        rest = [record for _, record in self.repeated.read(k for k in later if k in self.repeated)]
        return ([first] if first is not None else []) + rest

    # -- writing -------------------------------------------------------------------------------

    def submit_result(self, case_id: str, result: dict[str, Any]) -> Future[None]:
        """Record a case result without waiting; the future is done once it is durable.

        Raises:
            JournalError: An earlier write failed.
        """
        record = {"kind": "result", **result, "case_id": case_id}
        offset, done = self._submit(encode_result(record))
        self._keep(case_id, record, offset)
        return done

    def submit_result_block(
        self, data: bytes | FileRange, case_ids: Sequence[str], starts: Sequence[int]
    ) -> Future[None]:
        """`submit_result` of first repetitions' records already encoded, written as one
        block: ``data`` (bytes, or a range of another file copied as it is) holds the line of
        each of ``case_ids`` from its place in ``starts`` (another journal's lines, copied
        whole by a merge). Raises `JournalError` when an earlier write failed."""
        offset, done = self._submit(data)
        offsets = [offset + start for start in starts]
        self.results.note_many(case_ids, offsets)  # no "repetition": the first
        self._latest.update(zip(case_ids, offsets, strict=True))
        return done

    def submit_result_line(self, case_id: str, line: bytes) -> Future[None]:
        """`submit_result` of a first repetition's record already encoded (its line)."""
        offset, done = self._submit(line)
        self._note_first(case_id, offset)
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
        offset, done = self._submit(encode_record(record))
        self._acks[(what, case_id or "")] = (offset, record)
        return done

    def append_spans(self, otlp: bytes, count: int) -> None:
        """Keep a batch of spans Phoenix did not accept (OTLP protobuf) to send on resume."""
        with self._lock:
            seq = len(self._spans)
        otlp_text = base64.b64encode(otlp).decode("ascii")
        record = {"kind": "spans", "seq": seq, "count": count, "otlp": otlp_text}
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
        """Record that every planned case has a result (durably, before returning)."""
        self.submit_end().result()

    def submit_end(self) -> Future[None]:
        """`append_end` without waiting; the future is done once the record is durable."""
        if self.complete:
            done: Future[None] = Future()
            done.set_result(None)
            return done
        self.complete = True
        return self._append({"kind": "end", "at": datetime.now(UTC).isoformat()})

    def flush(self) -> None:
        """Block until every record written so far is durable.

        Raises:
            JournalError: A write failed.
        """
        self._writer.flush()

    def _append(self, record: dict[str, Any]) -> Future[None]:
        return self._submit(encode_record(record))[1]

    def _submit(self, data: bytes | FileRange) -> tuple[int, Future[None]]:
        if self._torn_at is not None:  # the first write cuts a torn last line
            with self._lock:
                if self._torn_at is not None:
                    truncate(self.path, self._torn_at)
                    self._torn_at = None
        return self._writer.submit(data)
