"""The interpretive state: field paths mapped to candidate values with confidences (seed 000).

A *path* is dot-separated segments (``registrant.name``, ``items.0.sku``). Each path holds the
candidates added to it, in order; `InterpretiveState.best` picks the one with the highest
confidence, a tie going to the candidate added first. Only paths that hold candidates are fields.

Example:
    >>> state = InterpretiveState()
    >>> state.add_value("registrant.name", ValueConfidence("Ada", 0.6))
    >>> state.add_value("registrant.name", ValueConfidence("Ada Lovelace", 0.9))
    >>> state.best("registrant.name").value
    'Ada Lovelace'
    >>> InterpretiveState.from_nested({"registrant": {"email": "ada@example.org"}}).paths()
    ['registrant.email']
"""

from __future__ import annotations

from stateval.state._state import FlatValues, InterpretiveState
from stateval.state._values import (
    MAX_VALUE_DEPTH,
    JSONValue,
    ValueConfidence,
    check_json_value,
    check_text,
    paths_known,
    validate_path,
)

__all__ = [
    "MAX_VALUE_DEPTH",
    "FlatValues",
    "InterpretiveState",
    "JSONValue",
    "ValueConfidence",
    "check_json_value",
    "check_text",
    "paths_known",
    "validate_path",
]
