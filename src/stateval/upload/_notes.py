"""Span notes: ``POST /v1/span_notes`` and the notes of spans read back.

A note is the annotation Phoenix's UI writes from "Add a note to this span…" (name ``note``,
the text in its explanation, one more note per call). Phoenix keeps who wrote it (its user,
when authentication is on) and whether it came from the UI (``APP``) or the REST API.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from stateval.upload._annotation_reads import read_annotations
from stateval.upload._rest import IdWire
from stateval.upload._transport import Transport

__all__ = ["NOTE_NAME", "StoredSpanNote", "list_span_notes", "post_span_note"]

NOTE_NAME = "note"
"""The annotation name Phoenix reserves for notes."""

_SOURCES = {"APP": "Phoenix UI", "API": "REST API"}


@dataclass(frozen=True, slots=True)
class StoredSpanNote:
    """A note on a span, as the server holds it.

    Attributes:
        span_id: The span.
        id: The note's id.
        text: The note.
        by: Its Phoenix user's id, or where it came from (``Phoenix UI``, ``REST API``).
        updated_at: When it was last written (to the second).
        row: The server's row number: a note written later has a larger one.
    """

    span_id: str
    id: str
    text: str
    by: str
    updated_at: datetime
    row: int = 0


def _row(global_id: str) -> int:
    """The row inside an annotation's global id (``base64("SpanAnnotation:<row>")``)."""
    try:
        _, _, row = base64.b64decode(global_id).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return 0
    return int(row) if row.isdigit() else 0


async def list_span_notes(
    http: Transport, project: str, span_ids: Sequence[str]
) -> list[StoredSpanNote]:
    """The notes on ``span_ids`` in ``project`` (none when there is no such project)."""
    listed = await read_annotations(http, project, "span", span_ids, names=[NOTE_NAME])
    notes = []
    for wire in listed:
        result = wire.result
        text = "" if result is None else result.explanation or ""
        by = wire.user_id or _SOURCES.get(wire.source or "", wire.source or "unknown")
        notes.append(
            StoredSpanNote(wire.span_id, wire.id, text, by, wire.updated_at, _row(wire.id))
        )
    return notes


async def post_span_note(http: Transport, span_id: str, text: str) -> str:
    """Add a note to a span; return its id."""
    posted = await http.call(
        IdWire, "POST", "/v1/span_notes", json={"data": {"span_id": span_id, "note": text}}
    )
    return posted.data.id
