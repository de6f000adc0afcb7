"""Annotations read back page by page: ``GET /v1/projects/{name}/span_annotations`` and
``.../session_annotations`` take up to 1,000 ids per query and page their answer by cursor."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stateval.upload._rest import AnnotationPageWire, ListedAnnotationWire
from stateval.upload._transport import Transport, parse

__all__ = ["read_annotations"]

_IDS_PER_QUERY = 500  # the server takes at most 1,000 span or session ids per query


async def read_annotations(
    http: Transport,
    project: str,
    kind: str,
    ids: Sequence[str],
    *,
    names: Sequence[str] = (),
) -> list[ListedAnnotationWire]:
    """The ``kind`` (``span`` or ``session``) annotations of ``ids`` in ``project`` (only
    ``names`` when given); none when the server holds no such project or ids (yet)."""
    out: list[ListedAnnotationWire] = []
    unique = sorted(set(ids))
    path = f"/v1/projects/{project}/{kind}_annotations"
    for start in range(0, len(unique), _IDS_PER_QUERY):
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {
                f"{kind}_ids": unique[start : start + _IDS_PER_QUERY],
                "limit": 10_000,
            }
            if names:
                params["include_annotation_names"] = list(names)
            if cursor:
                params["cursor"] = cursor
            response = await http.send("GET", path, params=params, accept=(404,))
            if response.status_code == 404:
                break
            page = parse(AnnotationPageWire, response)
            out.extend(page.data)
            cursor = page.next_cursor
            if not cursor:
                break
    return out
