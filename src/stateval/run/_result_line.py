"""A first repetition's result record as its journal line, made without building the record's
dicts: the line `stateval.run.Journal.submit_result` writes for ``{"kind": "result",
**result.to_dict(), "scores": scores, "case_id": case_id}``, byte for byte (a property test holds
them equal), from already encoded parts: the compact scores' JSON (`compact_scores_json`) and,
for a flat state of strings, the post-state's JSON made by C-level byte replacements on one
``orjson.dumps`` of its values instead of a dict and a list per field (`state_json`).

A result of another shape (a repetition after the first, a pre-state of its own) or one orjson
refuses (an unpaired surrogate, an integer past 64 bits) has no line here: its record is
encoded from its dict (`stateval.run._journal_file.encode_result`).

`read_result_line` is the inverse, for reading a run back (rescoring, resuming, reports): a
line as `result_line` writes it, with no judgements, read straight off its bytes, its state by
undoing `state_json`'s byte replacements and checked by doing them again; any other line is
read by `stateval.run._journal_file.parse_record` and `CaseResult.from_dict`, which give the
same result for a line read here (a property test holds them equal)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from stateval.errors import StateError
from stateval.run._compact_scores import SCORES_KEY
from stateval.run._journal_file import RESULT_HEAD
from stateval.run._results import CaseResult
from stateval.state import InterpretiveState, paths_known

__all__ = ["read_result_line", "result_line", "state_json"]

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


_POST_STATE = b',"post_state":'
_STATE_END = b'}]}},"error":'  # a state's end, then the next key: in no JSON string (a quote)
_NO_JUDGEMENTS = b',"judgements":[]'
_SCORES = b',"' + SCORES_KEY.encode() + b'":'
_MIDDLE = ("error", "error_type", "time_used", "trace_id", "span_id", "raw_output", "started_at")
"""The keys `result_line` writes between the post-state and the judgements, in order."""
_TEXT = (str, type(None))


def read_result_line(line: bytes, case_id: str) -> CaseResult | None:
    """The result ``line`` holds when it is the line `result_line` writes for the case
    ``case_id``'s first repetition, without judgements; None for any other line (then read it
    with `stateval.run._journal_file.parse_record` and `CaseResult.from_dict`: a line read here
    gives what they give, `tests/run/test_result_line.py`).

    The line is taken apart where `result_line` joins its parts: the head up to the
    post-state, the post-state (``null``, or `state_json`'s text, read back by `_read_state`),
    the seven scalar members after it (one ``orjson.loads``), ``"judgements":[]``, and the
    compact scores, which are only checked to be JSON (rescoring makes its own).
    """
    try:
        head = RESULT_HEAD + orjson.dumps(case_id) + _POST_STATE
    except TypeError:  # an unpaired surrogate
        return None
    if not line.startswith(head) or not line.endswith(b"}\n"):
        return None
    start = len(head)
    if line.startswith(b"null", start):
        post, end = None, start + 4
    else:
        end = line.find(_STATE_END, start) + 4
        if end < start + 4 or (post := _read_state(line[start:end])) is None:
            return None
    after = line.find(_NO_JUDGEMENTS, end)
    if after < 0 or line[end : end + 9] != b',"error":':
        return None
    middle = b"{" + line[end + 1 : after] + b"}"
    tail = line[after + len(_NO_JUDGEMENTS) : -2]
    try:
        if tail:  # the compact scores (any JSON, as `parse_record` takes the line)
            if not tail.startswith(_SCORES):
                return None
            orjson.loads(tail[len(_SCORES) :])
        members = orjson.loads(middle)
    except orjson.JSONDecodeError:
        return None
    if (  # the seven members, as orjson writes them (so no integer past 64 bits: `parse_record`)
        members.__class__ is not dict
        or tuple(members) != _MIDDLE
        or orjson.dumps(members) != middle
    ):
        return None
    get = members.__getitem__
    try:
        time_used = float(get("time_used") or 0.0)
    except (TypeError, ValueError):  # `CaseResult.from_dict` refuses it
        return None
    return CaseResult(  # as `CaseResult.from_dict` makes it
        case_id,
        post,
        get("error"),
        get("error_type"),
        time_used,
        get("trace_id"),
        get("raw_output"),
        get("started_at"),
        (),
        get("span_id"),
    )


def _read_state(text: bytes) -> InterpretiveState | None:
    """The state whose `state_json` is ``text``, or None when there is none.

    ``text`` is ``{"fields":`` and its values' ``orjson.dumps`` with each path's candidate
    list spliced in; the last value's candidate ends the state with what every candidate
    shares (confidence, message id), so the splices are found from it and undone. The state
    they give is written again and compared, so a text `state_json` would not write (a quote
    in a value, another confidence per path, another key order) is never read here.
    """
    at = text.rfind(_VALUE)
    close = text.find(b'"', at + len(_VALUE)) if at > 0 else -1  # the last value's end
    if close < 0:
        return None
    shared = _shared(text[close + 1 : -2])
    if shared is None:
        return None
    confidence, message_id, between = shared
    flat = text[10 : close + 1].replace(between, b'","').replace(_VALUE, b'":"') + b"}"
    try:
        values = orjson.loads(flat)
    except orjson.JSONDecodeError:
        return None
    if values.__class__ is not dict or set(map(type, values.values())) != _STR:
        return None
    if paths_known(values):  # and every value a string: nothing more to check
        state = InterpretiveState.from_flat(
            values, confidence, message_id, checked=True, all_strings=True
        )
    else:  # a path to check (and remember)
        try:
            state = InterpretiveState.from_flat(values, confidence, message_id)
        except StateError:
            return None
    return state if state_json(state) == text else None


@lru_cache(maxsize=64)
def _shared(end: bytes) -> tuple[Any, Any, bytes] | None:
    """The confidence and message id of the candidate end ``end`` (``,"confidence":...}]``),
    and what separates two values in a state of them (`_candidate_ends`); None when it is not
    such an end."""
    if not end.startswith(b',"confidence":') or not end.endswith(b"}]"):
        return None
    try:
        notes = orjson.loads(b"{" + end[1:-2] + b"}")
    except orjson.JSONDecodeError:
        return None
    if notes.__class__ is not dict or not {"confidence"} <= notes.keys() <= _NOTES:
        return None
    confidence, message_id = notes["confidence"], notes.get("message_id")
    if (  # as `InterpretiveState.from_flat` takes them unchecked (orjson reads no surrogate)
        confidence.__class__ is not float
        or not 0.0 <= confidence <= 1.0
        or message_id.__class__ not in _TEXT
    ):
        return None
    return confidence, message_id, b'"' + end + b',"'


_NOTES = {"confidence", "message_id"}
_STR = {str}
