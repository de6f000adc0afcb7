"""A suite's cases as a lazy sequence: JSONL case files are read again when iterated, never
held in memory whole.

`load_suite` reads a JSONL case file once, line by line, to validate every case and hash them;
it keeps only each case's id and byte offset. Iterating the cases (or asking for one by id with
`Cases.get`) reads and builds them again from the file. Inline, JSON and CSV cases are held in
memory (their files are read whole anyway).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import zlib
from array import array
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import orjson

from stateval.errors import SuiteError
from stateval.state import InterpretiveState
from stateval.suite._case import Case

__all__ = ["CaseHasher", "Cases", "FileCases", "MemoryCases", "plain_example_json"]


def canonical_json(value: object) -> bytes:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` as
    UTF-8, made by orjson where its text is the same: not where a number could be one the two
    write differently (a string that looks like one takes the slow path too), nor for what
    orjson refuses (integers past 64 bits, non-string keys)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        pass
    else:
        # where orjson writes a number the standard library writes otherwise (with an
        # exponent under 1e-4 or from 1e16 on): an exponent, or a fraction starting 0.0000
        if b"e-" not in text and b"e+" not in text and b"0.0000" not in text:
            return text
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


_SORTED = orjson.OPT_SORT_KEYS


def _state_json(state: InterpretiveState) -> tuple[bytes, bytes]:
    """``orjson.dumps(state.to_dict(), option=OPT_SORT_KEYS)``, and the part of it that may
    hold a number (all of it, or only the confidence's text; see `_flat_json`)."""
    flat = state.flat_values
    if flat is not None and flat.values:
        return _flat_json(flat.values, flat.confidence, flat.message_id, flat.all_strings)
    text = orjson.dumps(state.to_dict(), option=_SORTED)
    return text, text


def _shared_json(confidence: float, message_id: str | None) -> tuple[bytes, bytes]:
    """The text of ``confidence``, and what `_flat_json` writes between a path and its
    string value in a compact state of ``confidence`` and ``message_id``."""
    shown = orjson.dumps(confidence)
    shared = b'":[{"confidence":' + shown
    if message_id is not None:
        shared += b',"message_id":' + orjson.dumps(message_id)
    return shown, shared + b',"value":"'


def _flat_json(
    values: dict[str, Any],
    confidence: float,
    message_id: str | None,
    all_strings: bool,
    shared: tuple[bytes, bytes] | None = None,
) -> tuple[bytes, bytes]:
    """`_state_json` of the compact state of ``values`` (not empty), each with ``confidence``
    and ``message_id``, and the part of it that may hold a number.

    A compact state of string values is written from one ``orjson.dumps`` of its values. Where
    that text holds no backslash, every quote in it is JSON's own, so ``","`` can only end a
    value and ``":"`` only join a path to its value, unless a path is that one character, or
    a value is ``","`` (checked: a value ``":"`` lost its first quote to the ``":"`` before
    it); the paths and values hold no number. ``shared``: `_shared_json` of the confidence
    and message id, when the caller has it."""
    if all_strings:
        text = orjson.dumps(values, option=_SORTED)
        if (
            b"\\" not in text
            and ":" not in values
            and "," not in values
            and "," not in values.values()
        ):
            shown, between = _shared_json(confidence, message_id) if shared is None else shared
            # values first: what the second replace puts in is not looked at again
            body = text.replace(b'","', b'"}],"').replace(b'":"', between)
            return b'{"fields":' + body + b"]}}", shown
    common: dict[str, Any] = {"confidence": confidence}
    if message_id is not None:
        common["message_id"] = message_id
    form = {"fields": {p: [{"value": v, **common}] for p, v in values.items()}}
    text = orjson.dumps(form, option=_SORTED)  # `InterpretiveState.to_dict` of the state
    return text, text


def _joined_example(
    case_id: str, pre: bytes, given: bytes, post: bytes, meta: bytes, numbers: bytes
) -> bytes | None:
    """The example's text from its parts' texts, or None where ``numbers`` (the parts that
    may hold a number) holds one orjson writes otherwise (see `canonical_json`)."""
    if b"e-" in numbers or b"e+" in numbers or b"0.0000" in numbers:
        return None
    return b"".join(
        (
            b'{"input":{"case_id":',
            orjson.dumps(case_id),
            b',"input":',
            given,
            b',"pre_state":',
            pre,
            b'},"metadata":',
            meta,
            b',"output":{"post_state":',
            post,
            b"}}",
        )
    )


def example_json(case: Case) -> bytes:
    """``canonical_json(case.to_example())``, made from the case's parts: each state in one
    ``orjson.dumps`` of its values where it can be (`_state_json`), and the text looked at
    for numbers orjson writes otherwise only where a number can be."""
    try:
        pre, pre_numbers = _state_json(case.pre_state)
        post, post_numbers = _state_json(case.expected_post_state)
        given = orjson.dumps(case.input.to_dict(), option=_SORTED)
        metadata = case.metadata
        meta = orjson.dumps(
            metadata if metadata.__class__ is dict else dict(metadata), option=_SORTED
        )
    except TypeError:  # orjson refuses it: the standard library writes it (or says why not)
        return canonical_json(case.to_example())
    numbers = b"\0".join((pre_numbers, post_numbers, given, meta))  # no mark holds a NUL
    example = _joined_example(case.id, pre, given, post, meta, numbers)
    return canonical_json(case.to_example()) if example is None else example


def plain_example_json(
    case_id: str,
    pre: dict[str, Any],
    given: dict[str, Any],
    expected: dict[str, Any],
    pre_strings: bool,
    all_strings: bool,
    metadata: dict[str, Any],
    confidence: float,
) -> bytes | None:
    """`example_json` of the case a plain case line makes (`stateval.suite._cases`), from
    the values parsed from the line: its flat states (not empty; ``pre_strings``,
    ``all_strings``: every pre-state, expected value is a string), its input as
    ``StructuredInput.to_dict`` writes it, its metadata; None where a number in them may be
    written otherwise (the case itself is then hashed). Every value is one orjson parsed from
    a plain line, so orjson writes it all."""
    shared = _shared_json(confidence, None)
    pre_text, pre_numbers = _flat_json(pre, confidence, None, pre_strings, shared)
    post, post_numbers = _flat_json(expected, confidence, None, all_strings, shared)
    given_text = orjson.dumps(given, option=_SORTED)
    meta = orjson.dumps(metadata, option=_SORTED)
    numbers = b"\0".join((pre_numbers, post_numbers, given_text, meta))
    return _joined_example(case_id, pre_text, given_text, post, meta, numbers)


class CaseHasher:
    """sha256 of the cases' dataset examples as one JSON list (sorted keys, compact), fed one
    case at a time."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256(b"[")
        self._first = True

    def add(self, case: Case) -> None:
        """Add the next case."""
        if not self._first:
            self._sha.update(b",")
        self._sha.update(example_json(case))  # not copied after a comma
        self._first = False

    def add_joined(self, examples: bytes | mmap.mmap) -> None:
        """Add the next cases as their examples' texts, comma-separated (not empty)."""
        if not self._first:
            self._sha.update(b",")
        self._sha.update(examples)
        self._first = False

    def hexdigest(self) -> str:
        """The hash of the cases added so far."""
        sha = self._sha.copy()
        sha.update(b"]")
        return sha.hexdigest()


class Cases(Sequence[Case]):
    """A suite's cases in file order: indexable, iterable, with lookup by id.

    Attributes:
        ids: Every case id, in file order.
        hash: sha256 of the cases (changes when any case changes).
    """

    ids: tuple[str, ...]
    hash: str

    def __len__(self) -> int:
        return len(self.ids)

    def get(self, case_id: str) -> Case | None:
        """The case with id ``case_id``, or None (constant time)."""
        raise NotImplementedError

    def select(self, case_ids: Collection[str]) -> Iterator[Case]:
        """The cases whose id is in ``case_ids``, in file order, read one at a time."""
        return (case for case in self if case.id in case_ids)

    @overload
    def __getitem__(self, index: int) -> Case: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Case]: ...

    def __getitem__(self, index: int | slice) -> Case | Sequence[Case]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("case index out of range")
        return self._at(index)

    def _at(self, index: int) -> Case:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self)} cases>"


class MemoryCases(Cases):
    """Cases held in memory (inline, JSON and CSV case files)."""

    def __init__(self, cases: Sequence[Case]) -> None:
        self._cases = tuple(cases)
        self._index = {case.id: case for case in self._cases}
        self.ids = tuple(self._index)
        hasher = CaseHasher()
        for case in self._cases:
            hasher.add(case)
        self.hash = hasher.hexdigest()

    def get(self, case_id: str) -> Case | None:
        """The case with id ``case_id``, or None."""
        return self._index.get(case_id)

    def __iter__(self) -> Iterator[Case]:
        return iter(self._cases)

    def _at(self, index: int) -> Case:
        return self._cases[index]


CaseReader = Callable[[bytes, int], Case]
"""Builds one validated case from one line of its file and what the validating pass found
of the line (its ``kinds`` byte, see `FileCases`)."""


class FileCases(Cases):
    """Cases of a JSONL file, read again from the file whenever they are used.

    Args:
        path: The file.
        ids: The case ids, in file order.
        offsets: The byte offset of each case's line.
        hash: sha256 of the cases (see `CaseHasher`).
        read: Builds a case from its line.
        skipped: How many non-blank lines are not cases (unreviewed drafts the suite leaves
            out).
        checksums: The CRC-32 of each case's line when it was validated: a line read again
            is built (by ``read``, which need not validate it again) only when it is the same.
        kinds: A byte per case, what the validating pass found of its line, handed to
            ``read`` with it (0 for each when not given).
    """

    def __init__(
        self,
        path: Path,
        ids: Sequence[str],
        offsets: Sequence[int],
        hash: str,
        read: CaseReader,
        skipped: int = 0,
        checksums: Sequence[int] | None = None,
        kinds: bytes | bytearray | None = None,
    ) -> None:
        self.path = path
        self._checksums = checksums
        self._kinds = kinds
        self._skipped = skipped
        self.ids = tuple(ids)
        self.hash = hash
        self._offsets = list(offsets)
        self._position = {case_id: i for i, case_id in enumerate(self.ids)}
        self._read = read

    def __reduce__(self) -> tuple[type[FileCases], tuple[Any, ...]]:
        # pickled as what it was made of (``read`` must pickle: a module's function or a
        # partial of one), the offsets packed, the lookup by id built again where unpickled:
        # a suite loaded once and shipped to the processes or Ray tasks that run its shards
        offsets = array("q", self._offsets)
        made_of = (self.path, self.ids, offsets, self.hash, self._read, self._skipped)
        return FileCases, (*made_of, self._checksums, self._kinds)

    def _case(self, raw: bytes, position: int) -> Case:
        if self._checksums is not None and zlib.crc32(raw) != self._checksums[position]:
            raise self._changed(position)
        try:
            case = self._read(raw, 0 if self._kinds is None else self._kinds[position])
        except (SuiteError, ValueError) as exc:
            raise self._changed(position) from exc
        if case.id != self.ids[position]:
            raise self._changed(position)
        return case

    def _changed(self, position: int) -> SuiteError:
        return SuiteError(
            f"{self.path}: the case file changed after the suite was loaded "
            f"(case {position + 1}, {self.ids[position]!r}); load the suite again"
        )

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        try:
            with self.path.open("rb") as handle:
                position = skipped = offset = 0
                for raw in handle:
                    start, offset = offset, offset + len(raw)
                    if position < len(self.ids) and start == self._offsets[position]:
                        yield position, raw
                        position += 1
                    elif raw.strip():
                        skipped += 1
                        if skipped > self._skipped:
                            raise self._changed(max(0, position - 1))
        except OSError as exc:
            raise SuiteError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        if position != len(self.ids):
            raise self._changed(max(0, position - 1))

    def __iter__(self) -> Iterator[Case]:
        for position, raw in self._lines():
            yield self._case(raw, position)

    def select(self, case_ids: Collection[str]) -> Iterator[Case]:
        """The cases whose id is in ``case_ids``, in file order (other lines are not parsed)."""
        wanted = len(self._position.keys() & case_ids)  # each id once, no Python frame per id
        if not wanted:
            return
        # every case (a run's first pass, a rescore): none is looked up, in a set of them all
        # (a cache miss or two each, in a run)
        every = wanted == len(self.ids)
        for position, raw in self._lines():
            if every or self.ids[position] in case_ids:
                yield self._case(raw, position)
                wanted -= 1
                if not wanted:
                    return

    def get(self, case_id: str) -> Case | None:
        """The case with id ``case_id``, or None (one seek and one line read)."""
        position = self._position.get(case_id)
        return None if position is None else self._at(position)

    def _at(self, index: int) -> Case:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offsets[index])
                raw = handle.readline()
        except OSError as exc:
            raise SuiteError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        return self._case(raw, index)
