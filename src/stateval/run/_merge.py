"""The reduce step of a sharded run: N shard journals into the one journal of the whole run.

Each shard (``stateval run --shard I/N``) journals its own cases. `merge_shards` checks that the
journals are the N shards of one run (same suite, cases, episode mode, repetitions, shared run;
each shard once; every one finished) and writes a new run whose journal holds every shard's
results and upload acknowledgements, planned in the suite's order, as a single process would
have planned them. Everything downstream (summary, reports, gate, ``stateval diff``,
``rescore``) reads that journal as it reads any run's, so the merged figures are the single
run's. `merged_tally` is the merged run's summary counts without scoring its cases again: the
shards' own counts (`RunTally.part`, handed back by ``--workers``) added up. The result lines
are copied as written, in blocks of byte ranges (`shard_lines`, which ``--workers`` workers
make beside each other and hand back with their counts).

Example:
    >>> import tempfile
    >>> from stateval.run import Journal, RunHeader
    >>> root = tempfile.mkdtemp()
    >>> def shard(i: int, ids: list[str]) -> Journal:
    ...     header = RunHeader(suite_path="s.yaml", suite_name="s", suite_hash="h",
    ...         cases_hash="c", case_ids=ids, shard=f"{i}/2", shared_run="g")
    ...     journal = Journal.create(root, header)
    ...     for case_id in ids:
    ...         journal.append_result(case_id, {"post_state": None, "error": "x"})
    ...     journal.append_end()
    ...     return journal
    >>> parts = [shard(1, ["b"]), shard(2, ["a", "c"])]
    >>> merged = merge_shards(root, parts, ["a", "b", "c"])
    >>> merged.header.case_ids, merged.complete, merged.header.shard
    (['a', 'b', 'c'], True, None)
    >>> merge_shards(root, parts[:1], ["a", "b", "c"])
    Traceback (most recent call last):
    ...
    stateval.errors.JournalError: shard 2/2 of run g is missing (given: 1/2)
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stateval.errors import JournalError
from stateval.run._episode_tracker import episode_tracker
from stateval.run._journal import Journal
from stateval.run._journal_file import FileRange
from stateval.run._results import CaseResult, CaseScore
from stateval.run._run_header import new_run_id
from stateval.run._scoring import Scoring, score_case
from stateval.run._shard import Shard
from stateval.run._tally import RunTally, TallyPart
from stateval.suite import Case, Suite

__all__ = ["ShardLines", "merge_shards", "merged_tally", "open_run", "shard_lines"]

_SAME = (
    ("suite_hash", "suites"),
    ("cases_hash", "cases"),
    ("mode", "episode modes"),
    ("repetitions", "repetitions"),
    ("shared_run", "shared runs (--shard-group)"),
)
"""Header fields every shard of one run shares, and what differs when one does not."""
_BLOCK = 2048
"""Result lines copied into the merged journal per write (a few MB)."""
_NOT_COPIED = ("spans",)
"""Acknowledgement kinds that name one journal's own records (kept span batches)."""


def open_run(root: str | Path, ref: str) -> Journal:
    """A run by id under ``root`` (``latest`` too), or by the path of its folder or journal
    (a shard's run copied from another machine).

    Raises:
        JournalError: No such run.
    """
    path = Path(ref)
    if path.is_dir() or path.suffix == ".jsonl":
        return Journal.open_path(path)
    return Journal.open(root, ref)


def merge_shards(
    root: str | Path,
    shards: Sequence[Journal],
    suite_ids: Sequence[str],
    lines: Sequence[ShardLines] | None = None,
    *,
    wait: bool = True,
) -> Journal:
    """Write the run the ``shards`` are parts of under ``root`` and return its journal.

    Args:
        root: The stateval home the merged run is journaled under.
        shards: The journals of the N shards of one run, in any order.
        suite_ids: The suite's case ids in its order (the merged run plans its shards' cases in
            this order, as a single run of the suite would).
        lines: `shard_lines` of each of ``shards``, in their order, when made already (by the
            workers that journaled them); else made here.
        wait: Return once every record is durable; else as soon as they are queued (the
            journal's reads and `Journal.flush` wait for them, and raise a write's error).

    Raises:
        JournalError: The journals are not the N finished shards of one run (one line saying
            which differ, are missing, given twice or unfinished).
    """
    _check(shards)
    first = min(shards, key=lambda j: _shard(j).index).header
    planned = {c for journal in shards for c in journal.header.case_ids}
    order = [c for c in suite_ids if c in planned]
    if len(order) != len(planned):
        left = sorted(planned - set(order))
        raise JournalError(
            f"the shards hold {len(left)} case(s) the suite does not define: {left[:5]}"
        )
    header = first.model_copy(
        update={
            "run_id": new_run_id(),
            "created_at": datetime.now(UTC).isoformat(),
            "case_ids": order,
            "shard": None,
            "merged_from": [j.run_id for j in sorted(shards, key=lambda j: _shard(j).index)],
        }
    )
    merged = Journal.create(root, header)
    pending: list[Future[None]] = []
    acked: set[tuple[str, str]] = set()
    plans = [shard_lines(j) for j in shards] if lines is None else lines
    for journal, plan in sorted(zip(shards, plans, strict=True), key=lambda j: _shard(j[0]).index):
        pending += _copy(journal, plan, merged, acked)
    ended = merged.submit_end()
    if wait:
        for done in [*pending, ended]:
            done.result()
    return merged


def merged_tally(
    suite: Suite, merged: Journal, shards: Sequence[Journal], parts: Sequence[TallyPart]
) -> RunTally:
    """The counts of the run ``merged`` (`merge_shards` of ``shards``) from its shards' counts
    (``parts``, in the order of ``shards``), as scoring its journal again would count them:
    only the few cases a summary keeps whole are scored again.

    Raises:
        JournalError: A part holds episodes split across shards.
    """
    scoring = Scoring.from_suite(suite)
    planned = merged.header.case_ids
    tally = RunTally(scoring, episode_tracker(suite.episodes, planned, merged.header.mode, scoring))
    where = {case_id: i for i, case_id in enumerate(planned)}

    for journal, part in zip(shards, parts, strict=True):

        def scored(index: int, shard: Journal = journal) -> tuple[Case, CaseScore]:
            case = suite.case(planned[index])
            if case is None:
                raise JournalError(f"run {merged.run_id}: case {planned[index]!r} left the suite")
            # read from its shard's journal: the merged one may still be being written
            result = CaseResult.from_dict(shard.results[planned[index]])
            return case, score_case(case, result, scoring)

        positions = [where[case_id] for case_id in journal.header.case_ids]
        tally.merge(part, positions, scored)
    return tally


@dataclass(frozen=True, slots=True)
class ShardLines:
    """A shard journal's results as a merge copies them (`shard_lines`): made where the shard
    was journaled (by a ``--workers`` worker, beside the other shards), so the merge copies
    byte ranges of the file instead of reading it line by line.

    Attributes:
        blocks: ``(start, end, case ids, where each one's line starts from start)`` of the
            runs of result lines copied whole (`_BLOCK` lines at most each), in file order.
        parsed: ``(case id, record)`` of the result lines a merge encodes again (those not
            naming their case id where a journal writes it).
    """

    blocks: tuple[tuple[int, int, tuple[str, ...], tuple[int, ...]], ...]
    parsed: tuple[tuple[str, dict[str, Any]], ...]


def shard_lines(journal: Journal) -> ShardLines:
    """The first repetitions' result lines of ``journal``, as a merge copies them.

    Raises:
        JournalError: The file cannot be read, or a record is not where it was written.
    """
    blocks: list[tuple[int, int, tuple[str, ...], tuple[int, ...]]] = []
    parsed: list[tuple[str, dict[str, Any]]] = []
    ids: list[str] = []
    starts: list[int] = []
    start = end = 0
    for case_id, offset, line_end, record in journal.results.lines():
        if record is not None:
            parsed.append((case_id, record))
            continue
        if ids and (offset != end or len(ids) == _BLOCK):
            blocks.append((start, end, tuple(ids), tuple(starts)))
            ids, starts = [], []
        if not ids:
            start = offset
        ids.append(case_id)
        starts.append(offset - start)
        end = line_end
    if ids:
        blocks.append((start, end, tuple(ids), tuple(starts)))
    return ShardLines(tuple(blocks), tuple(parsed))


def _copy(
    journal: Journal, lines: ShardLines, merged: Journal, acked: set[tuple[str, str]]
) -> list[Future[None]]:
    """Queue ``journal``'s results (every repetition; the first ones' as ``lines`` says) and
    current acknowledgements into ``merged``."""
    pending = []
    try:
        size = journal.path.stat().st_size
    except OSError as exc:
        raise JournalError(f"cannot read {journal.path}: {exc.strerror or exc}") from exc
    if lines.blocks and size < lines.blocks[-1][1]:
        raise JournalError(f"{journal.path}: shorter than its run wrote it")
    for start, end, ids, starts in lines.blocks:  # copied as they are, by the journal's writer
        block = FileRange(journal.path, start, end - start)
        pending.append(merged.submit_result_block(block, ids, starts))
    for case_id, record in lines.parsed:
        pending.append(merged.submit_result(case_id, _result(record)))
    for (case_id, _), record in journal.repeated.items():
        pending.append(merged.submit_result(case_id, _result(record)))
    for record in journal.current_acks():
        what, key = str(record["what"]), str(record.get("case_id", ""))
        if what in _NOT_COPIED or (what, key) in acked:
            continue  # the shared dataset and experiment: once
        acked.add((what, key))
        data = {k: v for k, v in record.items() if k not in ("kind", "what", "case_id")}
        pending.append(merged.submit_ack(what, record.get("case_id"), **data))
    return pending


def _result(record: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in record.items() if k not in ("kind", "case_id")}


def _shard(journal: Journal) -> Shard:
    assert journal.header.shard is not None  # _check refused unsharded runs
    return Shard.parse(journal.header.shard)


def _check(shards: Sequence[Journal]) -> None:
    """Check that the journals are every shard of one finished run (one line if not)."""
    if not shards:
        raise JournalError("no runs to merge")
    for journal in shards:
        if journal.header.shard is None:
            raise JournalError(f"run {journal.run_id} is not a shard (run with --shard I/N)")
    first = shards[0].header
    for journal in shards[1:]:
        for name, what in _SAME:
            if getattr(journal.header, name) != getattr(first, name):
                raise JournalError(
                    f"runs {first.run_id} and {journal.run_id} are shards of different "
                    f"{what}: {getattr(first, name)!r} != {getattr(journal.header, name)!r}"
                )
    counts = {_shard(j).count for j in shards}
    if len(counts) > 1:
        raise JournalError(
            f"the runs split the cases differently: into {' and '.join(map(str, sorted(counts)))}"
            " shards"
        )
    (count,) = counts
    seen: dict[int, str] = {}
    for journal in shards:
        index = _shard(journal).index
        if index in seen:
            raise JournalError(
                f"shard {index}/{count} given twice: runs {seen[index]} and {journal.run_id}"
            )
        seen[index] = journal.run_id
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        given = ", ".join(f"{i}/{count}" for i in sorted(seen))
        raise JournalError(
            f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} of run "
            f"{first.shared_run} {'are' if len(missing) > 1 else 'is'} missing (given: {given})"
        )
    for journal in sorted(shards, key=lambda j: _shard(j).index):
        left = len(journal.missing) + len(journal.missing_repetitions)
        if not journal.complete or left:
            raise JournalError(
                f"run {journal.run_id} (shard {journal.header.shard}) is unfinished: {left} of "
                f"{len(journal.header.case_ids) * journal.header.repetitions} results missing; "
                f"`stateval run SUITE --shard {journal.header.shard} --resume` finishes it"
            )
