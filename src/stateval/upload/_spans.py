"""A project's spans read back page by page: ``GET /v1/projects/{name}/spans``.

Pages come in insertion order (``sort=id``, ascending), so a reader can remember the last row it
saw (`StoredSpan.row`) and ask later only for the spans stored after it, including spans that
started earlier but reached the server late. A time window (``start_time`` inclusive,
``end_time`` exclusive) and the server's own filters (span names, span kinds, ``key:value``
attributes) narrow what is read. Only one page is held at a time.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import Field

from stateval.upload._rest import _Wire
from stateval.upload._transport import Transport, parse

__all__ = ["SpanFilter", "StoredSpan", "iter_span_pages", "span_cursor", "span_row"]

_GLOBAL_ID_TYPE = "Span"


@dataclass(frozen=True, slots=True)
class StoredSpan:
    """A span as the server holds it.

    Attributes:
        span_id: Its OpenTelemetry id, 16 hex digits.
        trace_id: Its trace's id, 32 hex digits.
        name: The span name.
        span_kind: Its OpenInference kind (``CHAIN``, ``LLM``...; ``UNKNOWN`` when unset).
        start_time: When it started.
        status_code: ``OK``, ``ERROR`` or ``UNSET``.
        attributes: Its attributes, flattened to dotted keys (``input.value``, ``session.id``).
        row: The server's row number: spans stored later have larger rows.
        parent_id: The parent span's id (None for a root span).
    """

    span_id: str
    trace_id: str
    name: str
    span_kind: str
    start_time: datetime
    status_code: str
    attributes: Mapping[str, Any]
    row: int
    parent_id: str | None = None


@dataclass(frozen=True, slots=True)
class SpanFilter:
    """Which spans of a project to read.

    Attributes:
        names: Only spans with one of these names (all when empty).
        span_kinds: Only spans of these OpenInference kinds (all when empty).
        attributes: ``key -> value`` every span must carry (string, number or boolean).
        since: Only spans that started at or after this moment.
        until: Only spans that started before this moment.
        after_row: Only spans stored after this row (a watermark; see `StoredSpan.row`).
        span_ids: Only these spans (by OpenTelemetry id; all when empty).
    """

    names: tuple[str, ...] = ()
    span_kinds: tuple[str, ...] = ()
    attributes: tuple[tuple[str, str | int | float | bool], ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    after_row: int | None = None
    span_ids: tuple[str, ...] = ()

    def params(self) -> dict[str, Any]:
        """The query parameters of the filter (without the cursor)."""
        params: dict[str, Any] = {"sort": "id", "order": "asc"}
        if self.names:
            params["name"] = list(self.names)
        if self.span_ids:
            params["span_id"] = list(self.span_ids)
        if self.span_kinds:
            params["span_kind"] = list(self.span_kinds)
        if self.attributes:
            params["attribute"] = [f"{key}:{_attribute_value(v)}" for key, v in self.attributes]
        if self.since is not None:
            params["start_time"] = self.since.isoformat()
        if self.until is not None:
            params["end_time"] = self.until.isoformat()
        return params


def _attribute_value(value: str | int | float | bool) -> str:
    """A filter value as the server parses it: JSON, with strings quoted when they would read
    as another type."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return value
        return json.dumps(value)
    return json.dumps(value)


class _SpanWire(_Wire):
    class Context(_Wire):
        trace_id: str
        span_id: str

    id: str = ""
    name: str
    context: Context
    span_kind: str = "UNKNOWN"
    parent_id: str | None = None
    start_time: datetime
    status_code: str = "UNSET"
    attributes: dict[str, Any] = Field(default_factory=dict)


class _SpanPageWire(_Wire):
    data: list[_SpanWire]
    next_cursor: str | None = None


def span_row(global_id: str) -> int:
    """The row number inside a span's global id (``base64("Span:<row>")``); -1 if unreadable."""
    try:
        kind, _, row = base64.b64decode(global_id).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return -1
    return int(row) if kind == _GLOBAL_ID_TYPE and row.isdigit() else -1


def span_cursor(row: int) -> str:
    """The page cursor that starts at ``row`` (the server's own cursor format)."""
    return base64.b64encode(f"{_GLOBAL_ID_TYPE}:{row}".encode()).decode()


async def iter_span_pages(
    http: Transport, project: str, where: SpanFilter, *, page_size: int = 500
) -> AsyncIterator[list[StoredSpan]]:
    """The spans of ``project`` that pass ``where``, one page (at most ``page_size``) at a time,
    in the order the server stored them; nothing when there is no such project."""
    params = where.params()
    params["limit"] = max(1, min(page_size, 1000))
    cursor = None if where.after_row is None else span_cursor(where.after_row + 1)
    path = f"/v1/projects/{project}/spans"
    while True:
        if cursor:
            params["cursor"] = cursor
        response = await http.send("GET", path, params=params, accept=(404,))
        if response.status_code == 404:
            return
        page = parse(_SpanPageWire, response)
        if page.data:
            yield [_stored(wire) for wire in page.data]
        cursor = page.next_cursor
        if not cursor:
            return


def _stored(wire: _SpanWire) -> StoredSpan:
    return StoredSpan(
        span_id=wire.context.span_id,
        trace_id=wire.context.trace_id,
        name=wire.name,
        span_kind=wire.span_kind,
        start_time=wire.start_time,
        status_code=wire.status_code,
        attributes=wire.attributes,
        row=span_row(wire.id),
        parent_id=wire.parent_id,
    )
