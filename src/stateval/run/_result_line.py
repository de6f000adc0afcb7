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
undoing `state_json`'s byte replacements and counting what they undid; any other line is read
by `stateval.run._journal_file.parse_record` and `CaseResult.from_dict`, which give the same
result for a line read here (property tests and hand-changed lines hold them equal)."""

from __future__ import annotations

from functools import lru_cache
from operator import itemgetter
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


def _candidate_ends_of(confidence: float, message_id: str | None) -> tuple[bytes, bytes]:
    """What follows a value in `InterpretiveState.to_dict`'s JSON: before the next path, and
    at the end of the state (its shared confidence and message id, as ``to_dict`` orders them)."""
    shared = b',"confidence":' + orjson.dumps(confidence)
    if message_id is not None:
        shared += b',"message_id":' + orjson.dumps(message_id)
    shared += b"}]"
    return b'"' + shared + b',"', shared + b"}}"


_candidate_ends = lru_cache(maxsize=64)(_candidate_ends_of)
"""`_candidate_ends_of`, kept: for a confidence other than zero (``0.0`` and ``-0.0`` are one
key, and are written apart)."""


def state_json(state: InterpretiveState) -> bytes | None:
    """``orjson.dumps(state.to_dict())`` of a state in the compact form whose values are
    strings, or None for any other state (or one orjson refuses).

    Its values are encoded once as ``{"path":"value",...}``; each path's candidate list is
    then spliced in at the quotes around the ``:`` and ``,`` between them (where
    `_splices_land`).

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
        confidence = flat.confidence
        ends = _candidate_ends if confidence else _candidate_ends_of
        between, end = ends(confidence, flat.message_id)
    except TypeError:  # an unpaired surrogate
        return None
    if not _splices_land(values, text):
        return None
    return b'{"fields":' + text[:-1].replace(b'":"', _VALUE).replace(b'","', between) + end


def _splices_land(values: dict[str, Any], text: bytes) -> bool:
    """Whether `state_json`'s splices land where they belong in ``text``, the ``orjson.dumps``
    of ``values``: they are strings (False for any other value), and the text's only ``":"``
    and ``","`` are the ones between a path and its value and between two values, no two
    sharing a quote. So they are when no path or value holds a quote (then every one of the
    text's quotes is one of the four around each path and value: counted, not searched for)
    and none is ``:`` or ``,`` alone (the quotes around it would make one more)."""
    try:
        joined = "".join(values.values())
    except TypeError:  # a value that is no string
        return False
    return (
        text.count(b'"') == 4 * len(values)
        and ":" not in values
        and "," not in values
        and (("," not in joined and ":" not in joined) or _SEPARATORS.isdisjoint(values.values()))
    )


_SEPARATORS = {":", ","}


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
_FIELDS = b'{"fields":'
_STATE_END = b'}]}},"error":'  # a state's end, then the next key: in no JSON string (a quote)
_JUDGED = b',"judgements":[]'
_SCORED = b',"' + SCORES_KEY.encode() + b'":'
_VALUE_SPLICED = len(_VALUE) - 3  # what splicing a `":"` adds to a state's text
_TAIL = (
    "error",
    "error_type",
    "time_used",
    "trace_id",
    "span_id",
    "raw_output",
    "started_at",
    "judgements",
)
"""The keys `result_line` writes after the post-state, in order (then the compact scores)."""
_TEXTS = itemgetter("error", "error_type", "trace_id", "span_id", "raw_output", "started_at")
_TEXT = (str, type(None))
_TEXT_KINDS = set(_TEXT)
_WIDE = 2.0**63
"""An integer past 64 bits (`stateval._wide_numbers`) is a float this large or larger when orjson
reads it; the json module (`parse_record`) reads it as an integer."""


def read_result_line(line: bytes, case_id: str) -> CaseResult | None:
    """The result ``line`` holds when it is the line `result_line` writes for the case
    ``case_id``'s first repetition, without judgements; None for any other line (then read it
    with `stateval.run._journal_file.parse_record` and `CaseResult.from_dict`: a line read here
    gives what they give, `tests/test_result_line.py`).

    The line is taken apart where `result_line` joins its parts: the head up to the
    post-state; the post-state, ``null`` or `state_json`'s text (`_read_state`), up to the
    last ``}]}},"error":`` (the only one in a line read here: a state's end, and no JSON
    string holds its quote); the members after it up to the first ``,"judgements":[]``, read
    as one object by one ``orjson.loads``; then the line's end, or the compact scores. Those
    members are the line's when the object has `result_line`'s keys in its order: the cut
    then ends the judgements' member (a cut inside a string leaves no object orjson reads),
    and what follows it closes the line's object. The compact scores are only checked to be
    JSON orjson reads (`_read_by_orjson`), so that a line the checked path refuses is refused
    here too. What `CaseResult.from_dict` reads of the members is taken only where the json
    module reads the same: text or null, and a time that is no integer past 64 bits.
    """
    try:
        head = RESULT_HEAD + orjson.dumps(case_id) + _POST_STATE
    except TypeError:  # an unpaired surrogate
        return None
    if not line.startswith(head) or not line.endswith(b"}\n"):
        return None
    start = len(head)
    if line.startswith(b"null,", start):
        post, end = None, start + 4
    else:
        end = line.rfind(_STATE_END, start) + 4
        if end < start + 4 or (post := _read_state(line, start, end)) is None:
            return None
    cut = line.find(_JUDGED, end) + len(_JUDGED)
    if cut < end:
        return None
    try:  # the members after the post-state, their comma made the object's brace
        members = orjson.loads(b"{" + line[end + 1 : cut] + b"}")
    except orjson.JSONDecodeError:
        return None
    if tuple(members) != _TAIL:
        return None
    if cut < len(line) - 2:  # the compact scores, then the line's end
        scores = line[cut + len(_SCORED) : -2]
        if not line.startswith(_SCORED, cut) or not _read_by_orjson(scores):
            return None
    texts = _TEXTS(members)
    time_used = members["time_used"]
    if not _TEXT_KINDS.issuperset(map(type, texts)) or (
        time_used.__class__ is float and not -_WIDE < time_used < _WIDE
    ):
        return None
    try:
        time_used = float(time_used or 0.0)
    except (TypeError, ValueError):  # `CaseResult.from_dict` refuses it
        return None
    error, error_type, trace_id, span_id, raw_output, started_at = texts
    return CaseResult(  # as `CaseResult.from_dict` makes it
        case_id,
        post,
        error,
        error_type,
        time_used,
        trace_id,
        raw_output,
        started_at,
        (),
        span_id,
    )


@lru_cache(maxsize=256)
def _read_by_orjson(text: bytes) -> bool:
    """Whether ``orjson.loads`` reads ``text``; kept, as a run's lines hold few distinct
    compact scores (one per distinct outcome of a case)."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def _read_state(line: bytes, start: int, end: int) -> InterpretiveState | None:
    """The state whose `state_json` is ``line[start:end]``, or None when there is none.

    That text is ``{"fields":`` and its values' ``orjson.dumps`` with each path's candidate
    list spliced in; the last value's candidate ends the state with what every candidate
    shares (confidence, message id: `_shared`), so the splices are found from it and undone
    by two replacements, and the values read by one ``orjson.loads``. The text is then checked
    to be read as `state_json`'s text of them, without writing it again: its end is the one
    `state_json` writes for that confidence and message id (`_shared`); the values' text is
    one `state_json`'s splices land in (`_splices_land`: ``n`` strings under ``n`` paths,
    none twice, whose only ``":"`` and ``","`` are the ``n`` between a path and its value and
    the ``n - 1`` between values, no two sharing a quote); and the replacements made exactly
    that many of each (counted by the bytes they took off). Each made one, and none was made
    at another's edge (the two would share a quote), so they are all of them, and splicing
    where `state_json` does gives back the text read: it can differ from `state_json`'s only
    where orjson writes otherwise what it and the json module read alike (whitespace before
    the first path, an escape). So a text `state_json` would not write (a quote in a value,
    another confidence per path, a candidate's keys in another order, a path twice or not
    spliced) is never read here.
    """
    at = line.rfind(_VALUE, start, end)
    close = line.find(b'"', at + len(_VALUE), end) if at > start else -1  # the last value's end
    if close < 0 or not line.startswith(_FIELDS, start):
        return None
    shared = _shared(line[close + 1 : end - 2])
    if shared is None:
        return None
    confidence, message_id, between, between_spliced = shared
    spliced = line[start + len(_FIELDS) : close + 1]
    joined = spliced.replace(between, b'","')
    text = joined.replace(_VALUE, b'":"') + b"}"
    try:
        values = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if (
        values.__class__ is not dict
        or not values
        or not _splices_land(values, text)
        or len(spliced) - len(joined) != (len(values) - 1) * between_spliced
        or len(joined) - len(text) + 1 != len(values) * _VALUE_SPLICED
    ):
        return None
    if paths_known(values):  # and every value a string: nothing more to check
        return InterpretiveState.from_flat(
            values, confidence, message_id, checked=True, all_strings=True
        )
    try:  # a path to check (and remember)
        return InterpretiveState.from_flat(values, confidence, message_id)
    except StateError:
        return None


@lru_cache(maxsize=64)
def _shared(end: bytes) -> tuple[Any, Any, bytes, int] | None:
    """The confidence and message id of the candidate end ``end`` (``,"confidence":...}]``),
    what separates two values in a state of them (`_candidate_ends`) and what splicing it for
    a ``","`` adds; None when it is not such an end as `state_json` writes it."""
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
    between = b'"' + end + b',"'
    if _candidate_ends_of(confidence, message_id)[0] != between:  # written otherwise (1.00)
        return None
    return confidence, message_id, between, len(between) - 3


_NOTES = {"confidence", "message_id"}
