"""The journal file's records on disk: encoding and parsing a line, and the group writer that
appends records from a thread of its own, up to `WINDOW` per ``fsync``, cutting back a failed
write so the file never keeps half a record (see `stateval.run.Journal`).

Waking a sleeping thread is one of the dearest things a fast run does (a system call, and the
interpreter lock passed back and forth), so the writer is not woken for every record while it
is working: after a write it lingers `LINGER` seconds for more records, and is woken before that
only when a batch holds `WAKE_AT` records or someone waits for a record to be durable (the
future's ``result``, ``exception`` or ``add_done_callback``, as ``asyncio.wrap_future`` does, or
`GroupWriter.flush`). A record submitted while the writer is idle wakes it at once, so a slow
run's records are durable as soon as each exists."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import threading
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from stateval._wide_numbers import wide_integer_in
from stateval.errors import JournalError, JournalWriteError

__all__ = [
    "LINGER",
    "RESULT_HEAD",
    "WAKE_AT",
    "WINDOW",
    "FileRange",
    "GroupWriter",
    "encode_record",
    "encode_result",
    "line_number",
    "parse_record",
    "plain_result_id",
    "truncate",
]

WINDOW = 1024
"""The most records one ``fsync`` covers."""
LINGER = 0.02
"""Seconds the writer waits for more records after a write before it writes what came."""
WAKE_AT = 512
"""Records in a batch that wake the writer before `LINGER` is over (a write and its ``fsync``
cost the writer ~0.3-0.5 ms of CPU here, whatever the batch: fewer, larger batches are
cheaper)."""
_IDLE = 1.0  # seconds the writer thread waits for work before it exits


@dataclass(frozen=True, slots=True)
class FileRange:
    """``length`` bytes of the file at ``path`` from ``start``, appended by the writer as they
    are (copied in the kernel, `os.copy_file_range`, where it can: a merge's copied lines)."""

    path: Path
    start: int
    length: int


class _Durable(Future[None]):
    """The future of a batch of records: asking for its outcome wakes the writer (see the
    module docstring); it cannot be cancelled (its records are written all the same; a
    cancelled one would fail the writer's ``set_result``, as a task awaiting it through
    ``asyncio.wrap_future`` and cancelled on Ctrl-C would ask)."""

    def __init__(self, writer: GroupWriter) -> None:
        super().__init__()
        self._writer = weakref.ref(writer)  # not a cycle: the writer holds its last future

    def _wake(self) -> None:
        writer = self._writer()
        if writer is not None:
            writer.wake()

    def result(self, timeout: float | None = None) -> None:
        self._wake()
        return super().result(timeout)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        self._wake()
        return super().exception(timeout)

    def add_done_callback(self, fn: Callable[[Future[None]], object]) -> None:
        self._wake()
        super().add_done_callback(fn)

    def cancel(self) -> bool:
        return False


class GroupWriter:
    """Appends byte records to one file from a thread of its own, a batch per ``fsync``.

    The thread starts on the first record and exits after `_IDLE` seconds without work. A
    failed write fails its batch and every later record (the journal is then unusable).
    Records queued while the thread is busy or lingering form batches of at most ``window``
    records, and the records of one batch share the future that says it is durable (one future
    made and set per batch, not per record). When the thread is woken: see the module
    docstring.
    """

    def __init__(self, path: Path, size: int, window: int) -> None:
        self.path = path
        self.size = size
        self.window = window
        self.fsyncs = 0
        self._wake_at = min(WAKE_AT, window)
        self._cond = threading.Condition()
        self._pending: list[tuple[list[bytes | FileRange], Future[None]]] = []  # batches, in order
        self._last: Future[None] | None = None
        self._thread: threading.Thread | None = None
        self._idle = False  # the thread waits for a record, not lingering
        self._urgent = False  # the thread is to write without lingering
        self._error: JournalError | None = None

    def submit(self, data: bytes | FileRange) -> tuple[int, Future[None]]:
        """Queue ``data``; return its offset in the file and a future done once it is durable
        (the same future as the other records of its batch)."""
        with self._cond:
            if self._error is not None:
                raise self._error
            offset = self.size
            self.size += data.length if isinstance(data, FileRange) else len(data)
            pending = self._pending
            if pending and len(pending[-1][0]) < self.window:
                batch, done = pending[-1]
                batch.append(data)
                if self._idle or (len(batch) >= self._wake_at and not self._urgent):
                    self._urge()
                return offset, done
            done = _Durable(self)
            pending.append(([data], done))
            self._last = done
            if self._thread is None:
                self._urgent = True  # the first record after a pause is written at once
                self._thread = threading.Thread(
                    target=self._run, name=f"stateval-journal-{self.path.parent.name}", daemon=True
                )
                self._thread.start()
            elif self._idle or len(pending) > 1 or self._wake_at == 1:
                self._urge()  # a full batch waits, or the thread is not lingering
        return offset, done

    def wake(self) -> None:
        """Have the thread write what is pending now (someone waits for it)."""
        with self._cond:
            self._urge()

    def _urge(self) -> None:
        self._urgent = True
        self._cond.notify()

    def flush(self) -> None:
        """Block until every record submitted so far is durable.

        Raises:
            JournalError: A write failed.
        """
        with self._cond:
            last = self._last
        if last is not None:
            last.result()

    def _take(self) -> tuple[list[bytes | FileRange], Future[None]] | None:
        with self._cond:
            if not self._urgent:  # linger: the records submitted meanwhile join the batch
                self._cond.wait(LINGER)
            if not self._pending:
                self._idle = True  # the next record wakes the thread
                self._cond.wait(_IDLE)
                self._idle = False
            if not self._pending:
                self._thread = None
                return None
            self._urgent = len(self._pending) > 1  # a batch before the last one is full
            return self._pending.pop(0)

    def _run(self) -> None:
        while (taken := self._take()) is not None:
            batch, done = taken
            try:
                _append(self.path, batch)
            except OSError as exc:
                error = JournalWriteError(f"cannot write {self.path}: {exc.strerror or exc}")
                with self._cond:
                    self._error = error
                    failed = [done, *(later for _, later in self._pending)]
                    self._pending = []
                    self._thread = None
                for future in failed:
                    future.set_exception(error)
                return
            self.fsyncs += 1
            done.set_result(None)


def _append(path: Path, parts: list[bytes | FileRange]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _append_whole(fd, path, parts)
    finally:
        os.close(fd)


def encode_result(record: Mapping[str, Any]) -> bytes:
    """A result record's line: orjson, whose output reads back the same, for the one record
    per case (its values come from states and strings, never NaN, which orjson writes as
    null); what orjson refuses goes through `encode_record`."""
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # an integer over 64 bits, a non-string key, an unpaired surrogate
        return encode_record(record)


def encode_record(record: Mapping[str, Any]) -> bytes:
    """A record's line (JSON, one line, ending in a newline)."""
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        return line.encode()
    except UnicodeEncodeError:  # an unpaired surrogate got through: \u-escape everything
        return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def parse_record(raw: bytes, path: Path, number: int | None) -> dict[str, Any]:
    """The record of one line of ``path`` (its line ``number``, when known).

    Raises:
        JournalError: The line is not a JSON object.
    """
    where = f"{path}:{number}" if number is not None else str(path)
    # orjson reads an integer past 64 bits (20 digits or more, or a minus sign and 19: under
    # -2**63) as a float: such lines, and what orjson refuses (NaN, an escaped unpaired surrogate:
    # `encode_record`'s lines), are read by the json module, as every line was before
    if wide_integer_in(raw):
        record = _parse_standard(raw, where)
    else:
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            record = _parse_standard(raw, where)
    if not isinstance(record, dict):
        raise JournalError(f"{where}: not a JSON object")
    return record


RESULT_HEAD = b'{"kind":"result","case_id":'
"""How a first repetition's result line begins, as the journal writes it: its case id's JSON
string follows (`plain_result_id`, `stateval.run._result_line.read_result_line`)."""
_RESULT_ID = RESULT_HEAD + b'"'


def plain_result_id(raw: bytes) -> str | None:
    """The case id of a first repetition's result line as the journal writes it (the kind, then
    the case id, no ``repetition`` or ``pre_state`` before them), read off its bytes; None for any
    other line (read it with `parse_record`).

    Only the head is read: the rest of the line is parsed when the record is read (a line that is
    not JSON then raises there, with its line number: `line_number`).

    Example:
        >>> plain_result_id(b'{"kind":"result","case_id":"c7","post_state":null}\\n')
        'c7'
        >>> plain_result_id(b'{"kind":"result","repetition":2,"case_id":"c7"}\\n') is None
        True
    """
    if not raw.startswith(_RESULT_ID):
        return None
    start = len(_RESULT_ID)
    end = raw.find(b'"', start)
    # an escape in the id, or "repetition" anywhere (a hand-made line may put it after the id):
    # parsed whole instead
    if end < 0 or raw[end + 1 : end + 2] != b"," or b"\\" in raw[start:end]:
        return None
    if b'"repetition"' in raw:
        return None
    try:
        return raw[start:end].decode()
    except UnicodeDecodeError:
        return None


def line_number(path: Path, offset: int) -> int | None:
    """The number of the line that starts at byte ``offset`` of ``path`` (None if unreadable):
    counted when a line read by its offset turns out broken, to name it as `parse_record` does."""
    lines, left = 1, offset
    try:
        with path.open("rb") as handle:
            while left > 0 and (block := handle.read(min(left, 1 << 20))):
                lines += block.count(b"\n")
                left -= len(block)
    except OSError:
        return None
    return lines


def _parse_standard(raw: bytes, where: str) -> Any:
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise JournalError(f"{where}: not a JSON record: {exc}") from exc


def _append_whole(fd: int, path: Path, parts: list[bytes | FileRange]) -> None:
    """Append ``parts`` and fsync; on a short or failed write (disk full) cut the file back to
    where it was, so the journal never keeps half a record followed by more records."""
    start = os.lseek(fd, 0, os.SEEK_END)
    try:
        data: list[bytes] = []
        for part in parts:
            if isinstance(part, bytes):
                data.append(part)
                continue
            _write(fd, b"".join(data))
            data = []
            _copy_range(path, part)
        _write(fd, b"".join(data))
        os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _copy_range(path: Path, part: FileRange) -> None:
    """Append ``part`` to ``path``: in the kernel where it can (`os.copy_file_range` writes
    at a descriptor's offset, not in append mode), else read and written."""
    source = os.open(part.path, os.O_RDONLY)
    target = os.open(path, os.O_WRONLY)
    try:
        os.lseek(target, 0, os.SEEK_END)
        offset, left = part.start, part.length
        while left:
            try:
                copied = _kernel_copy(source, target, left, offset) if _kernel_copy else 0
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                copied = 0
            if not copied:  # no kernel copy here (or the source ended): read and write
                data = os.pread(source, min(left, 1 << 22), offset)
                if not data:
                    raise OSError(errno.EIO, f"{part.path} ended before byte {offset + left}")
                _write(target, data)
                copied = len(data)
            offset += copied
            left -= copied
    finally:
        os.close(target)
        os.close(source)


_kernel_copy = getattr(os, "copy_file_range", None)  # Linux only
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP}
"""What ``copy_file_range`` raises where it cannot copy (another file system, an old kernel)."""


def truncate(path: Path, size: int) -> None:
    """Cut ``path`` back to ``size`` bytes, durably (a torn last line).

    Raises:
        JournalError: It cannot be cut.
    """
    try:
        with path.open("r+b") as handle:
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise JournalError(f"cannot repair {path}: {exc}") from exc
