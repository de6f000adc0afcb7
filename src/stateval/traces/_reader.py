"""Reading a monitor's spans: page by page, in the order Phoenix stored them, sampled and mapped.

`read_calls` pages ``GET /v1/projects/{p}/spans`` through `PhoenixUploader.span_pages` with the
monitor's filters (span name, kind, attributes) and a window (``since``/``until`` on the start
time, ``after_row`` as a watermark), keeps the sampled spans and maps each one. Only a page is
held at a time, so memory does not grow with the number of spans.

Example:
    >>> in_sample("5a3d9c1b2e4f6a7b", 1.0), in_sample("5a3d9c1b2e4f6a7b", 0.0)
    (True, False)
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

from stateval.suite import TracesSpec
from stateval.traces._mapping import MappedCall, SpanMapping, Unmapped
from stateval.upload import PhoenixUploader, SpanFilter, StoredSpan

__all__ = ["SpanPage", "SpanWindow", "in_sample", "read_calls", "span_filter"]


@dataclass(frozen=True, slots=True)
class SpanWindow:
    """Which spans of the project one run reads.

    Attributes:
        since: Spans that started at or after this moment (None: from the first).
        until: Spans that started before this moment (None: up to now).
        after_row: Spans stored after this row (the watermark of ``--since last``).
    """

    since: datetime | None = None
    until: datetime | None = None
    after_row: int | None = None


@dataclass(frozen=True, slots=True)
class SpanPage:
    """One page of spans, mapped.

    Attributes:
        calls: The sampled spans with their calls (or why they could not be read).
        read: How many spans the page held (sampled or not).
        last_row: The row of the page's last span (the watermark once the page is scored).
    """

    calls: tuple[tuple[StoredSpan, MappedCall | Unmapped], ...]
    read: int
    last_row: int


def in_sample(span_id: str, share: float, seed: int = 0) -> bool:
    """Whether a span is in a seeded sample of ``share`` of all spans (stable across runs)."""
    if share >= 1.0:
        return True
    digest = hashlib.sha256(f"{seed}:{span_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def span_filter(spec: TracesSpec, window: SpanWindow) -> SpanFilter:
    """The server-side filter of a monitor's spans in a window."""
    return SpanFilter(
        names=spec.names,
        span_kinds=() if spec.span_kind is None else (spec.span_kind,),
        attributes=tuple(spec.attributes.items()),
        since=window.since,
        until=window.until,
        after_row=window.after_row,
    )


async def read_calls(
    phoenix: PhoenixUploader, spec: TracesSpec, window: SpanWindow
) -> AsyncIterator[SpanPage]:
    """The monitor's spans in ``window``, a page at a time, sampled and mapped."""
    mapping = SpanMapping.of(spec)
    where = span_filter(spec, window)
    async for page in phoenix.span_pages(spec.project, where, page_size=spec.page_size):
        calls = tuple(
            (span, mapping.map(span))
            for span in page
            if in_sample(span.span_id, spec.sample, spec.seed)
        )
        yield SpanPage(calls, len(page), max(span.row for span in page))
