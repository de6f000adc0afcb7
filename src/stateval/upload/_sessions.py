"""Reading a project's sessions and their annotations back from Phoenix.

A session is what Phoenix makes of the traces whose spans carry one ``session.id``: stateval
runs each episode's turns under one session and annotates it with the episode's scores.
``GET /v1/projects/{name}/sessions`` lists them with their traces,
``GET /v1/projects/{name}/session_annotations`` their annotations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stateval.upload._annotation_reads import read_annotations
from stateval.upload._rest import (
    SessionListWire,
    StoredSession,
    StoredSessionAnnotation,
)
from stateval.upload._transport import Transport, parse

__all__ = ["list_session_annotations", "list_sessions"]


async def list_session_annotations(
    http: Transport, project: str, session_ids: Sequence[str], *, names: Sequence[str] = ()
) -> list[StoredSessionAnnotation]:
    """The annotations of ``session_ids`` in ``project`` (only ``names`` when given)."""
    return [
        StoredSessionAnnotation(session_id=a.session_id, **a.stored())
        for a in await read_annotations(http, project, "session", session_ids, names=names)
    ]


async def list_sessions(http: Transport, project: str) -> list[StoredSession]:
    """Every session of ``project`` with its traces (none when there is no such project)."""
    out: list[StoredSession] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 1000}
        if cursor:
            params["cursor"] = cursor
        path = f"/v1/projects/{project}/sessions"
        response = await http.send("GET", path, params=params, accept=(404,))
        if response.status_code == 404:
            return out
        page = parse(SessionListWire, response)
        out.extend(
            StoredSession(s.session_id, tuple(t.trace_id for t in s.traces)) for s in page.data
        )
        cursor = page.next_cursor
        if not cursor:
            return out
