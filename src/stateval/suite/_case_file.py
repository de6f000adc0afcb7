"""A suite's case file, read and validated once when the suite is loaded: whole, or (JSONL)
in byte ranges validated side by side and then combined.

A JSONL case file is validated line by line and only each case's id, byte offset and line
checksum are kept (`FileCases` reads the cases again when they are used). Split in ``parts``,
each part validates the lines that start in its byte range (`read_part`, which the caller's
`PartsMap` may run in other processes), and `combine` puts the parts together as one pass
would have: the same ids, offsets and cases hash (the parts' examples hashed in file order),
the same problems with the same line numbers in the same order (duplicate ids are found across
the parts there), the same drafts, episodes and audit. A whole load is one part.
"""

from __future__ import annotations

import mmap
import os
import sys
import tempfile
import zlib
from array import array
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from stateval.suite._case_audit import AuditPart, CaseAudit
from stateval.suite._case_line import validate_line
from stateval.suite._cases import (
    CaseFileRef,
    StateFormat,
    _case_from_line,
    _csv_records,
    _json_records,
    build_cases,
    duplicate_problem,
)
from stateval.suite._documents import DocumentError, parse_json_line
from stateval.suite._episodes import EpisodeIndexer
from stateval.suite._models import EpisodesSpec
from stateval.suite._problems import format_problem
from stateval.suite._source import CaseHasher, Cases, FileCases, MemoryCases

__all__ = ["CasesPart", "PartsMap", "read_case_file", "read_part", "run_in_turn"]


@dataclass(frozen=True, slots=True)
class CasesPart:
    """What the validating pass found in the lines that start in one byte range of a JSONL
    case file (plain values: it pickles back from another process).

    Attributes:
        ids: The valid cases' ids, in file order (while the part found no problem).
        offsets: Their lines' byte offsets.
        checksums: Their lines' CRC-32.
        kinds: What the pass found of each of their lines (`ValidLine.kind`).
        seen: The id of every record whose fields validated, in file order, and
            ``seen_lines`` their lines (duplicates are found when the parts are combined).
        problems: ``(line, problem line)``, in file order.
        drafts: The unreviewed drafts' ids.
        turns: The arguments of `EpisodeIndexer.add` for each case, in file order.
        audit: What a `CaseAudit` gathered from the part's cases (a split load only).
        unreadable: Why the file could not be read (``OSError``'s reason), or None.
    """

    ids: list[str]
    offsets: array[int]
    checksums: array[int]
    kinds: bytearray
    seen: list[str]
    seen_lines: array[int]
    problems: list[tuple[int, str]]
    drafts: list[str]
    turns: list[tuple[Any, ...]]
    audit: AuditPart | None = None
    unreadable: str | None = None


VisitValid = Callable[[str, Mapping[str, Any], bool, Collection[str], Mapping[str, Any]], None]
"""Takes a valid case into account from what the validating pass keeps of it (see
`CaseAudit.add_valid`)."""

PartsMap = Callable[[Callable[[int], CasesPart], int], Sequence[CasesPart]]
"""Runs ``load(part)`` for the parts ``0 .. parts - 1`` (side by side in other processes,
where it can) and hands back their results in part order."""


def run_in_turn(load: Callable[[int], CasesPart], parts: int) -> list[CasesPart]:
    """The `PartsMap` of one process: the parts one after the other."""
    return [load(part) for part in range(parts)]


class _SeenLog:
    """The ids a part reads, with their lines: it finds no duplicate (`combine` does)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.lines = array("q")

    def __contains__(self, case_id: object, /) -> bool:
        return False

    def __getitem__(self, case_id: str, /) -> int | None:
        raise KeyError(case_id)

    def __setitem__(self, case_id: str, line: int | None, /) -> None:
        self.ids.append(case_id)
        self.lines.append(line or 0)


class _TurnLog(EpisodeIndexer):
    """Logs each case's episode and turn for the `EpisodeIndexer` of the whole file."""

    def __init__(self, spec: EpisodesSpec) -> None:
        super().__init__(spec)
        self.turns: list[tuple[Any, ...]] = []

    def add(self, *args: Any, **_: Any) -> None:
        self.turns.append(args)


def _part_start(handle: BinaryIO, part: int, parts: int, size: int | None) -> tuple[int, int, int]:
    """The byte offset and line number of the first line that starts in the part's byte
    range of a file of ``size`` bytes (None: its size now), and where the range ends (the
    last part reads to the end of the file)."""
    if size is None:
        size = os.fstat(handle.fileno()).st_size
    start = size * part // parts
    end = size * (part + 1) // parts if part < parts - 1 else sys.maxsize
    if start == 0:
        return 0, 1, end
    handle.seek(start - 1)
    handle.readline()  # the rest of the line that starts before the range
    first = handle.tell()
    handle.seek(0)
    newlines, left = 0, first
    while left > 0:
        chunk = handle.read(min(left, 1 << 20))
        if not chunk:
            break
        newlines += chunk.count(b"\n")
        left -= len(chunk)
    handle.seek(first)
    return first, newlines + 1, end


_EXAMPLES_AT_ONCE = 64
"""How many examples' texts `read_part` hands on at once (one hash update, not two a case)."""


def read_part(
    path: Path,
    label: str,
    fmt: StateFormat,
    confidence: float,
    part: int,
    parts: int,
    *,
    episodes: EpisodesSpec | None,
    visit: VisitValid | None,
    examples: Callable[[bytes], None],
    size: int | None = None,
) -> CasesPart:
    """Validate the lines of a JSONL case file that start in byte range ``part`` of
    ``parts`` (of ``size`` bytes, the size every part splits: None, its size when opened);
    ``visit`` (with what `CaseAudit.add_valid` takes) is called with each valid case while
    the part has found no problem, and ``examples`` with their example texts, in file order,
    comma-separated, `_EXAMPLES_AT_ONCE` at a time (while the part found no problem)."""
    ids: list[str] = []
    offsets = array("q")
    checksums = array("I")
    kinds = bytearray()
    seen = _SeenLog()
    turns = None if episodes is None else _TurnLog(episodes)
    problems: list[str] = []
    located: list[tuple[int, str]] = []
    drafts: list[str] = []
    batch: list[bytes] = []
    try:
        with path.open("rb") as handle:
            offset, number, end = _part_start(handle, part, parts, size)
            number -= 1
            for raw in handle:
                if offset >= end:
                    break
                start, offset = offset, offset + len(raw)
                number += 1
                if not raw or raw.isspace():  # a blank line (not copied, as strip() would)
                    continue
                before = len(problems)
                try:
                    data, plain = parse_json_line(raw)
                except UnicodeDecodeError as exc:
                    why = f"not UTF-8 text: {exc.reason}"
                    problems.append(format_problem(label, number, None, None, why))
                except DocumentError as exc:
                    problems.append(format_problem(label, number, None, None, exc.message))
                else:
                    valid = validate_line(
                        data, plain, number, label, fmt, confidence, problems, seen, turns, drafts
                    )
                    if valid is not None and not problems:
                        case_id, example, gold, all_strings, human, metadata, kind = valid
                        batch.append(example)
                        if len(batch) == _EXAMPLES_AT_ONCE:
                            examples(b",".join(batch))
                            batch.clear()
                        ids.append(case_id)
                        offsets.append(start)
                        checksums.append(zlib.crc32(raw))
                        kinds.append(kind)
                        if visit is not None:
                            visit(case_id, gold, all_strings, human, metadata)
                if len(problems) > before:
                    located.extend((number, p) for p in problems[before:])
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return CasesPart(
            [], array("q"), array("I"), bytearray(), [], array("q"), [], [], [], None, reason
        )
    if batch and not problems:
        examples(b",".join(batch))
    logged = [] if turns is None else turns.turns
    return CasesPart(ids, offsets, checksums, kinds, seen.ids, seen.lines, located, drafts, logged)


def combine(
    path: Path,
    label: str,
    fmt: StateFormat,
    confidence: float,
    found: Sequence[CasesPart],
    problems: list[str],
    whole: Callable[[str], str],
    digest: Callable[[], str],
    *,
    episodes: EpisodeIndexer | None = None,
    drafts: list[str] | None = None,
) -> Cases:
    """The cases of the parts, in file order, as one pass over the whole file finds them;
    ``digest`` hashes the parts' examples in file order (asked only when there is no
    problem)."""
    unreadable = next((p.unreadable for p in found if p.unreadable is not None), None)
    if unreadable is not None:
        problems.append(whole(unreadable))
        return MemoryCases(())
    located: list[tuple[int, int, str]] = []
    first_at: dict[str, int] = {}
    for part in found:
        located.extend((line, 0, text) for line, text in part.problems)
        for case_id, line in zip(part.seen, part.seen_lines, strict=True):
            first = first_at.setdefault(case_id, line)
            if first != line:  # after the record's own problems, as one pass words them
                located.append((line, 1, duplicate_problem(label, line, case_id, first)))
    located.sort(key=lambda item: item[:2])
    problems.extend(text for _, _, text in located)
    if problems:
        return MemoryCases(())
    ids = [case_id for part in found for case_id in part.ids]
    offsets = [offset for part in found for offset in part.offsets]
    checksums = array("I")
    kinds = bytearray()
    left_out = 0
    for part in found:
        checksums.extend(part.checksums)
        kinds += part.kinds
        left_out += len(part.drafts)
        if drafts is not None:
            drafts.extend(part.drafts)
        if episodes is not None:
            for turn in part.turns:
                episodes.add(*turn)
    grouping = None if episodes is None else episodes.spec
    # a partial of a module's function, not a closure: the cases pickle (`FileCases`)
    read = partial(_case_from_line, fmt=fmt, confidence=confidence, episodes=grouping)
    return FileCases(
        path, ids, offsets, digest(), read, skipped=left_out, checksums=checksums, kinds=kinds
    )


class _ExampleFile:
    """A part's examples written to a file, comma-separated, for the driver to hash."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self._first = True

    def add(self, example: bytes) -> None:
        if not self._first:
            self._handle.write(b",")
        self._handle.write(example)
        self._first = False


def _read_jsonl(
    path: Path,
    label: str,
    fmt: StateFormat,
    confidence: float,
    problems: list[str],
    whole: Callable[[str], str],
    episodes: EpisodeIndexer | None,
    audit: CaseAudit | None,
    drafts: list[str] | None,
    parts: int,
    run_parts: PartsMap,
) -> Cases:
    """A JSONL case file validated whole (``parts`` 1, the cases hashed as they are read),
    or in ``parts`` byte ranges by ``run_parts`` (the first part's cases hashed as they are
    read where it runs in this process, every other part's examples written to a file of a
    temporary folder and hashed in turn when they are combined)."""
    spec = None if episodes is None else episodes.spec
    if parts <= 1:
        hasher = CaseHasher()
        visit = None if audit is None else audit.add_valid
        found = [
            read_part(
                path,
                label,
                fmt,
                confidence,
                0,
                1,
                episodes=spec,
                visit=visit,
                examples=hasher.add_joined,
            )
        ]
        return combine(
            path,
            label,
            fmt,
            confidence,
            found,
            problems,
            whole,
            hasher.hexdigest,
            episodes=episodes,
            drafts=drafts,
        )
    hasher = CaseHasher()
    here = os.getpid()
    try:  # one size for every part's range, whatever the file does meanwhile
        size: int | None = path.stat().st_size
    except OSError:
        size = None  # each part says it cannot read the file
    with tempfile.TemporaryDirectory(prefix="stateval-parts-") as folder:
        files = [Path(folder) / f"examples-{part}" for part in range(parts)]

        def load(part: int) -> CasesPart:
            gathered = None if audit is None else audit.fresh()
            examples: Callable[[bytes], None]
            with ExitStack() as stack:
                if part == 0 and os.getpid() == here:  # hashed as it is read: no file
                    examples = hasher.add_joined
                else:
                    handle = stack.enter_context(files[part].open("wb", buffering=1 << 20))
                    examples = _ExampleFile(handle).add
                found = read_part(
                    path,
                    label,
                    fmt,
                    confidence,
                    part,
                    parts,
                    episodes=spec,
                    visit=None if gathered is None else gathered.add_valid,
                    examples=examples,
                    size=size,
                )
            return found if gathered is None else replace(found, audit=gathered.gathered())

        def digest() -> str:
            for file in files:
                if not file.exists():  # the first part, hashed as it was read
                    continue
                with file.open("rb") as handle:
                    if os.fstat(handle.fileno()).st_size:
                        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                            hasher.add_joined(data)
            return hasher.hexdigest()

        loaded = run_parts(load, parts)
        cases = combine(
            path,
            label,
            fmt,
            confidence,
            loaded,
            problems,
            whole,
            digest,
            episodes=episodes,
            drafts=drafts,
        )
        if audit is not None and not problems:
            for part in loaded:
                assert part.audit is not None
                audit.take(part.audit)
        return cases


def read_case_file(
    path: Path,
    label: str,
    fmt: StateFormat,
    confidence: float,
    problems: list[str],
    ref: CaseFileRef | None = None,
    episodes: EpisodeIndexer | None = None,
    audit: CaseAudit | None = None,
    *,
    drafts: list[str] | None = None,
    parts: int = 1,
    run_parts: PartsMap = run_in_turn,
) -> Cases:
    """Read every case of a JSONL, JSON or CSV file, appending one line per problem; ``audit``
    takes each valid case into account (while no problem was found, for JSONL); the ids of
    unreviewed drafts (no ``expected_post_state`` yet) are appended to ``drafts``.

    With ``episodes``, each case's episode and turn are read and handed to the indexer.

    A JSONL file is read line by line and only its case ids and offsets are kept (`FileCases`
    reads the cases again when they are used), in ``parts`` byte ranges run by ``run_parts``
    (see the module); JSON and CSV cases are held in memory. Problems with the file as a whole
    (it cannot be read, its type is unknown) name the suite's ``cases.file`` setting when
    ``ref`` says where it is; problems inside it name the file.
    """

    def whole(message: str) -> str:
        if ref is None:
            return format_problem(label, None, None, None, message)
        return ref.problem(message)

    written = label if ref is None else ref.written
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".json", ".csv"):
        problems.append(whole(f"unknown case file type {written} (use .jsonl, .json or .csv)"))
        return MemoryCases(())
    if suffix == ".jsonl":

        def unreadable(reason: str) -> str:
            return whole(f"cannot read {written}: {reason}")

        return _read_jsonl(
            path,
            label,
            fmt,
            confidence,
            problems,
            unreadable,
            episodes,
            audit,
            drafts,
            parts,
            run_parts,
        )
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        problems.append(whole(f"cannot read {written}: {reason}"))
        return MemoryCases(())
    except UnicodeDecodeError as exc:
        problems.append(format_problem(label, None, None, None, f"not UTF-8 text: {exc.reason}"))
        return MemoryCases(())
    if suffix == ".json":
        records = _json_records(text, label, problems)
    else:
        records = _csv_records(text, label, problems)
    visit = None if audit is None else audit.add
    return MemoryCases(
        build_cases(records, label, fmt, confidence, problems, episodes, visit, drafts=drafts)
    )
