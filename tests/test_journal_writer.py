"""The journal's group writer (stateval.run._journal_file.GroupWriter): records submitted while
the writer lingers share one write; a record someone waits for is written at once; the future
of a batch cannot be cancelled out from under the writer."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

import stateval.run._journal_file as journal_file
from stateval.run import Journal, RunHeader

HANG_GUARD = 120.0  # seconds: only so that a writer never woken fails instead of hanging
FOREVER = 3600.0  # a linger no test may wait out


def _journal(tmp_path: Path, ids: list[str]) -> Journal:
    header = RunHeader.model_validate(
        {
            "suite_path": "/s.yaml",
            "suite_name": "s",
            "suite_hash": "h",
            "cases_hash": "c",
            "case_ids": ids,
        }
    )
    return Journal.create(tmp_path, header)


def _written(done: Future[None]) -> None:
    """Wait until ``done`` is done without asking for its outcome (which wakes the writer)."""
    give_up = time.monotonic() + HANG_GUARD
    while not done.done():
        assert time.monotonic() < give_up, "the writer was never woken"
        time.sleep(0.001)


def test_records_submitted_while_the_writer_lingers_share_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_file, "LINGER", FOREVER)
    monkeypatch.setattr(journal_file, "WAKE_AT", 4)
    ids = [f"c{i}" for i in range(4)]
    journal = _journal(tmp_path, ids)  # its header is waited for, then the writer lingers
    before = journal.fsyncs
    pending = [journal.submit_result(c, {"post_state": None, "time_used": 0}) for c in ids]
    _written(pending[-1])  # the fourth record woke the writer
    assert journal.fsyncs == before + 1
    assert all(done.done() for done in pending)
    assert list(Journal.open(tmp_path).results) == ids
    journal.flush()  # lets the writer's thread go


def test_a_record_waited_for_is_written_without_waiting_out_the_linger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_file, "LINGER", FOREVER)
    journal = _journal(tmp_path, ["a", "b"])
    done = journal.submit_result("a", {"post_state": None, "time_used": 0})
    assert done.result(HANG_GUARD) is None  # asking for it wakes the writer

    async def awaited() -> None:  # as a run with a sink waits before handing a case on
        later = journal.submit_result("b", {"post_state": None, "time_used": 0})
        await asyncio.wait_for(asyncio.wrap_future(later), HANG_GUARD)

    asyncio.run(awaited())
    assert list(Journal.open(tmp_path).results) == ["a", "b"]
    journal.flush()


def test_a_record_whose_waiter_is_cancelled_is_written_all_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a task awaiting a record's future through asyncio.wrap_future and cancelled (Ctrl-C)
    # cancels that future: the batch's future, shared by other records, stays the writer's
    writing, release = threading.Event(), threading.Event()
    append = journal_file._append

    def held(path: Path, parts: list[bytes | journal_file.FileRange]) -> None:
        writing.set()
        assert release.wait(HANG_GUARD)
        append(path, parts)

    journal = _journal(tmp_path, ["a", "b"])
    monkeypatch.setattr(journal_file, "_append", held)
    done = journal.submit_result("a", {"post_state": None, "time_used": 0})
    done.add_done_callback(lambda _: None)  # wakes the writer, as asyncio.wrap_future does
    assert writing.wait(HANG_GUARD)
    assert not done.cancel()
    release.set()
    journal.append_result("b", {"post_state": None, "time_used": 0})
    journal.flush()
    assert done.result() is None
    assert list(Journal.open(tmp_path).results) == ["a", "b"]
