"""A first repetition's result record as its journal line, made without building the record's
dicts: the line `stateval.run.Journal.submit_result` writes for ``{"kind": "result",
**result.to_dict(), "scores": scores, "case_id": case_id}``, byte for byte (a property test holds
them equal), from already encoded parts: the compact scores' JSON (`compact_scores_json`) and,
for a flat state of strings, the post-state's JSON made by C-level byte replacements on one
``orjson.dumps`` of its values instead of a dict and a list per field (`state_json`).

A result of another shape (a repetition after the first, a pre-state of its own) or one orjson
refuses (an unpaired surrogate, an integer past 64 bits) has no line here: its record is
encoded from its dict (`stateval.run._journal_file.encode_result`)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from stateval.run._compact_scores import SCORES_KEY
from stateval.run._results import CaseResult
from stateval.state import InterpretiveState

__all__ = ["result_line", "state_json"]

_FRAGMENT = orjson.Fragment
_NEWLINE = orjson.OPT_APPEND_NEWLINE
_VALUE = b'":[{"value":"'  # a path's closing quote, up to its value's opening quote


@lru_cache(maxsize=64)
def _candidate_ends(confidence: float, message_id: str | None) -> tuple[bytes, bytes]:
    """What follows a value in `InterpretiveState.to_dict`'s JSON: before the next path, and
    at the end of the state (its shared confidence and message id, as ``to_dict`` orders them)."""
    shared = b',"confidence":' + orjson.dumps(confidence)
    if message_id is not None:
        shared += b',"message_id":' + orjson.dumps(message_id)
    shared += b"}]"
    return b'"' + shared + b',"', shared + b"}}"


def state_json(state: InterpretiveState) -> bytes | None:
    """``orjson.dumps(state.to_dict())`` of a state in the compact form whose values are
    strings, or None for any other state (or one orjson refuses).

    Its values are encoded once as ``{"path":"value",...}``; each path's candidate list is
    then spliced in at the quotes around the ``:`` and ``,`` between them, which are the only
    ``":"`` and ``","`` of that text when no path or value holds a quote (then every one of its
    quotes is one of the four around each path and value: counted, not searched for).

    Example:
        >>> state_json(InterpretiveState.from_flat({"a": "x", "b": "y"}))
        b'{"fields":{"a":[{"value":"x","confidence":1.0}],"b":[{"value":"y","confidence":1.0}]}}'
    """
    flat = state.flat_values
    if flat is None or not flat.all_strings:
        return None
    values = flat.values
    if not values:
        return b'{"fields":{}}'
    try:
        text = orjson.dumps(values)
        between, end = _candidate_ends(flat.confidence, flat.message_id)
    except TypeError:  # an unpaired surrogate
        return None
    if text.count(b'"') != 4 * len(values):  # a quote inside a path or a value
        return None
    return b'{"fields":' + text[:-1].replace(b'":"', _VALUE).replace(b'","', between) + end


def result_line(result: CaseResult, case_id: str, scores: bytes | None) -> bytes | None:
    """The journal line of ``result`` as the case ``case_id``'s first repetition, with the
    compact scores' JSON ``scores`` (None: none), or None when it has no line here (see the
    module docstring)."""
    if result.repetition != 1 or result.pre_state is not None:
        return None
    post = result.post_state
    state: Any = None
    if post is not None:
        made = state_json(post)
        state = post.to_dict() if made is None else _FRAGMENT(made)
    record = {
        "kind": "result",
        "case_id": case_id,
        "post_state": state,
        "error": result.error,
        "error_type": result.error_type,
        "time_used": result.time_used,
        "trace_id": result.trace_id,
        "span_id": result.span_id,
        "raw_output": result.raw_output,
        "started_at": result.started_at,
        "judgements": [j.to_dict() for j in result.judgements],
    }
    if scores is not None:
        record[SCORES_KEY] = _FRAGMENT(scores)
    try:
        return orjson.dumps(record, option=_NEWLINE)
    except TypeError:  # the record's dict is encoded as `encode_result` does
        return None
