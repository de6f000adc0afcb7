"""A run's results read back from its journal file when asked for (`JournalResults`, and
`RepeatedResults` for the repetitions after the first): only case ids and file offsets stay in
memory, so a journal of 100,000 cases (repeated or not) stays small."""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, ValuesView
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

import orjson

from stateval.errors import JournalError
from stateval.run._journal_file import RESULT_HEAD, line_number, parse_record
from stateval.run._result_line import read_result_line
from stateval.run._results import CaseResult

__all__ = ["JournalResults", "RepeatedResults", "repetition_of"]

K = TypeVar("K", str, tuple[str, int])


class _Offsets(Generic[K]):
    """Keys -> the offsets of their records in a journal file, in the order kept (what
    `JournalResults` and `RepeatedResults` hold in memory of the records they read).

    Args:
        path: The journal file.
        flush: Blocks until every record written so far is durable (`Journal.flush`).
    """

    def __init__(self, path: Path, flush: Callable[[], None]) -> None:
        self._path = path
        self._flush = flush
        self._offsets: dict[K, int] = {}

    def offsets(self) -> dict[K, int]:
        """Key -> the offset of its record, in the order kept (a copy)."""
        return dict(self._offsets)

    def forget(self, key: K) -> None:
        """Drop ``key``'s result (it is to run again)."""
        self._offsets.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._offsets

    def __iter__(self) -> Iterator[K]:
        return iter(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)


class JournalResults(_Offsets[str], Mapping[str, dict[str, Any]]):
    """Case id -> the latest result record for it, read from the journal file when asked for.

    Iterates case ids in the order their results were recorded; only ids and file offsets are
    held in memory.

    Args:
        path: The journal file.
        flush: Blocks until every record written so far is durable (`Journal.flush`).
    """

    def note(self, case_id: str, offset: int) -> None:
        """Record that ``case_id``'s latest result is the record at ``offset``."""
        self._offsets.pop(case_id, None)
        self._offsets[case_id] = offset

    def note_many(self, case_ids: Iterable[str], offsets: Iterable[int]) -> None:
        """`note` of each case id at its offset."""
        known = self._offsets
        for case_id, offset in zip(case_ids, offsets, strict=True):
            known.pop(case_id, None)
            known[case_id] = offset

    def __getitem__(self, case_id: str) -> dict[str, Any]:
        for _, record in self.read([case_id]):
            if record is not None:
                return record
        raise KeyError(case_id)

    def missing(self, case_ids: Iterable[str]) -> list[str]:
        """Those of ``case_ids`` without a result, in their order."""
        known = self._offsets
        return [case_id for case_id in case_ids if case_id not in known]

    def read(self, case_ids: Iterable[str]) -> Iterator[tuple[str, dict[str, Any] | None]]:
        """``(case_id, record or None)`` for each of ``case_ids``, through one open file.

        Raises:
            JournalError: The file cannot be read, or a record is not where it was written.
        """
        path = self._path
        self._flush()
        try:
            with path.open("rb") as handle:
                for case_id in case_ids:
                    offset = self._offsets.get(case_id)
                    if offset is None:
                        yield case_id, None
                        continue
                    handle.seek(offset)
                    yield case_id, self._record(handle.readline(), offset, case_id)
        except OSError as exc:
            raise JournalError(f"cannot read {path}: {exc}") from exc

    def results(self, case_ids: Iterable[str]) -> Iterator[tuple[str, CaseResult | None]]:
        """``(case_id, result or None)`` for each of ``case_ids``, through one mapping of the
        file: a line as a run writes it read straight off its bytes (`read_result_line`), any
        other as `read` reads it, then `CaseResult.from_dict`.

        Raises:
            JournalError: The file cannot be read, a record is not where it was written, or
                it is not a case result.
        """
        path = self._path
        self._flush()
        offsets = self._offsets
        try:
            with path.open("rb") as handle, _mapped(handle) as data:
                find, read, offset_of = data.find, read_result_line, offsets.get
                for case_id in case_ids:
                    offset = offset_of(case_id)
                    if offset is None:
                        yield case_id, None
                        continue
                    line = data[offset : find(b"\n", offset) + 1]
                    if not line:  # past the mapping (written since), or the file's last line
                        handle.seek(offset)
                        line = handle.readline()
                    result = read(line, case_id)
                    if result is None:
                        result = CaseResult.from_dict(self._record(line, offset, case_id))
                    yield case_id, result
        except (OSError, ValueError) as exc:
            raise JournalError(f"cannot read {path}: {exc}") from exc

    def _record(self, raw: bytes, offset: int, case_id: str) -> dict[str, Any]:
        """The record of ``case_id``'s line ``raw``, checked to be its.

        Raises:
            JournalError: The line is not a JSON object, or not ``case_id``'s.
        """
        record = _parse_at(raw, self._path, offset)
        if record.get("case_id") != case_id:
            raise JournalError(f"{self._path}: changed while the run was open")
        return record

    def lines(self) -> Iterator[tuple[str, int, int, dict[str, Any] | None]]:
        """``(case_id, start, end, None)``: where each result's line is in the file, in file
        order, through one mapping of the file and not parsed (a merge copies them whole); a
        line that does not name its case id where a journal writes it (first after the kind,
        or last) comes parsed instead, and checked: ``(case_id, start, end, record)``.

        Raises:
            JournalError: The file cannot be read, or a record is not where it was written.
        """
        path = self._path
        self._flush()
        first = RESULT_HEAD
        try:
            with path.open("rb") as handle, _mapped(handle) as data:
                for case_id, offset in sorted(self._offsets.items(), key=lambda kv: kv[1]):
                    end = data.find(b"\n", offset) + 1 or len(data)
                    named = orjson.dumps(case_id)
                    last = b'"case_id":' + named + b"}\n"  # the line's bytes are not copied
                    if data[end - len(last) : end] == last or (
                        data[offset : offset + len(first) + len(named) + 1] == first + named + b","
                    ):
                        yield case_id, offset, end, None
                        continue
                    record = _parse_at(data[offset:end], path, offset)
                    if record.get("case_id") != case_id:
                        raise JournalError(f"{path}: changed while the run was open")
                    yield case_id, offset, end, record
        except (OSError, ValueError) as exc:
            raise JournalError(f"cannot read {path}: {exc}") from exc


Repetition = tuple[str, int]
"""(case id, repetition): one repetition of a case, 2 and up."""


class RepeatedResults(_Offsets[Repetition], Mapping[Repetition, dict[str, Any]]):
    """(case id, repetition) -> the result record of that repetition, for repetitions 2 and up
    (``--repeat``), read from the journal file when asked for: only the keys and the records'
    offsets stay in memory, in the order the records were first written.

    Iterating its items or values reads the records in that order through one open file.

    Args:
        path: The journal file.
        flush: Blocks until every record written so far is durable (`Journal.flush`).
    """

    def note(self, key: Repetition, offset: int) -> None:
        """Record that ``key``'s latest result is the record at ``offset``."""
        self._offsets[key] = offset

    def __getitem__(self, key: Repetition) -> dict[str, Any]:
        if key not in self._offsets:
            raise KeyError(key)
        return next(self.read([key]))[1]

    def items(self) -> ItemsView[Repetition, dict[str, Any]]:
        return _ReadItems(self)

    def values(self) -> ValuesView[dict[str, Any]]:
        return _ReadValues(self)

    def read(self, keys: Iterable[Repetition]) -> Iterator[tuple[Repetition, dict[str, Any]]]:
        """``(key, record)`` for each of ``keys`` (each one this holds), through one open file.

        Raises:
            JournalError: The file cannot be read, or a record is not where it was written.
        """
        with self.opened() as record_of:
            for key in keys:
                yield key, record_of(key)

    @contextmanager
    def opened(self) -> Iterator[Callable[[Repetition], dict[str, Any]]]:
        """Within the block, the record of a key (one this holds), read through one open file.

        Raises:
            JournalError: The file cannot be read, or a record is not where it was written.
        """
        path = self._path
        self._flush()
        offsets = self._offsets
        try:
            handle = path.open("rb")
        except OSError as exc:
            raise JournalError(f"cannot read {path}: {exc}") from exc

        def record_of(key: Repetition) -> dict[str, Any]:
            offset = offsets[key]
            try:
                handle.seek(offset)
                raw = handle.readline()
            except OSError as exc:
                raise JournalError(f"cannot read {path}: {exc}") from exc
            record = _parse_at(raw, path, offset)
            try:
                made = record.get("case_id"), repetition_of(record)
            except ValueError:
                made = None
            if made != key:
                raise JournalError(f"{path}: changed while the run was open")
            return record

        with handle:  # what the block raises is its own: only reading is worded here
            yield record_of


def repetition_of(record: Mapping[str, Any]) -> int:
    """Which repetition a result record is (1 when it does not say).

    Raises:
        ValueError: Its ``repetition`` is not a number.
    """
    return int(record.get("repetition") or 1)


class _ReadItems(ItemsView[Repetition, dict[str, Any]]):
    """`RepeatedResults.items`: each record read once, through one open file."""

    _mapping: RepeatedResults

    def __iter__(self) -> Iterator[tuple[Repetition, dict[str, Any]]]:
        return self._mapping.read(list(self._mapping))


class _ReadValues(ValuesView[dict[str, Any]]):
    """`RepeatedResults.values`: each record read once, through one open file."""

    _mapping: RepeatedResults

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (record for _, record in self._mapping.read(list(self._mapping)))


def _parse_at(raw: bytes, path: Path, offset: int) -> dict[str, Any]:
    """`parse_record` of the line at ``offset``, named by its number when it is broken (opening
    the journal read only the head of a result line: `plain_result_id`)."""
    try:
        return parse_record(raw, path, None)
    except JournalError:
        return parse_record(raw, path, line_number(path, offset))


@contextmanager
def _mapped(handle: BinaryIO) -> Iterator[mmap.mmap | bytes]:
    """The open file's bytes, mapped (read-only) rather than read into memory."""
    if os.fstat(handle.fileno()).st_size == 0:
        yield b""
        return
    data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        yield data
    finally:
        data.close()
