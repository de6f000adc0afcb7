"""What an open journal knows of its file, as plain values (`JournalIndex`): a worker that
journaled a shard hands it to the driver, which opens the journal from it (`Journal.from_index`)
instead of reading and parsing every record of the file again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stateval.run._run_header import RunHeader

__all__ = ["JournalIndex"]


@dataclass(frozen=True, slots=True)
class JournalIndex:
    """An open journal's view of its file (`Journal.index`), to open the same file elsewhere.

    Attributes:
        header: The run.
        size: The file's size (every record durable).
        offsets: Case id -> the offset of its latest first-repetition result, in record order.
        repeated: (case id, repetition) -> the offset of its result record, for repetitions 2
            and up.
        acks: (what, case id) -> (offset, record) of the latest acknowledgement.
        latest: Acknowledgement key -> the offset of its latest result record.
        complete: An ``end`` record was written.
        spans: The kept span batches' records.
        delivered_spans: The acknowledged mutator-call spans.
    """

    header: RunHeader
    size: int
    offsets: dict[str, int]
    repeated: dict[tuple[str, int], int]
    acks: dict[tuple[str, str], tuple[int, dict[str, Any]]]
    latest: dict[str, int]
    complete: bool
    spans: tuple[dict[str, Any], ...]
    delivered_spans: frozenset[str]
