"""Slices of a run's cases: the values of a case metadata key that put a case in a slice."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["MISSING_SLICE", "lookup", "slice_order", "slice_values"]

MISSING_SLICE = "(none)"
"""The slice value of a case whose metadata lacks the slice key."""


def lookup(metadata: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    """``(found, value)`` of a dotted key (``metadata.`` prefix optional) in case metadata."""
    node: Any = metadata
    for part in key.removeprefix("metadata.").split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def slice_values(metadata: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """The slice values of a case for ``key`` (``metadata.service``, ``metadata.a.b``).

    The key is a dotted path into the case metadata (the ``metadata.`` prefix is optional). A
    list value puts the case in one slice per distinct item; a missing key in slice ``(none)``.

    >>> slice_values({"services": ["hotel", "taxi"]}, "metadata.services")
    ('hotel', 'taxi')
    >>> slice_values({}, "metadata.domain")
    ('(none)',)
    """
    found, node = lookup(metadata, key)
    if not found:
        return (MISSING_SLICE,)
    items = node if isinstance(node, list) else [node]
    out = dict.fromkeys(_slice_text(v) for v in items)
    return tuple(out) or (MISSING_SLICE,)


def _slice_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def slice_order(value: str) -> tuple[bool, str]:
    """Sort key of a slice value in reports: by name, ``(none)`` last. A function of the value
    only, so a run's slice rows read the same whichever case finished first, and the same with
    ``--workers 1`` or ``2``.

    >>> sorted(["taxi", "(none)", "hotel"], key=slice_order)
    ['hotel', 'taxi', '(none)']
    """
    return (value == MISSING_SLICE, value)
