"""Updates an LLM mutator returns, their JSON Schema, and the tolerant-but-strict parser.

An LLM answers with a JSON array of ``{"path", "value", "confidence", "inference"}`` objects.
`parse_updates` accepts exactly that, plus three shapes real models produce when the JSON itself
is still unambiguous:

* the array inside a fenced code block (```json ... ```), with prose around it;
* the array with leading or trailing prose and no fence;
* the single-key wrapper ``{"updates": [...]}`` that JSON-object response modes force.

Anything else raises `MutatorOutputError` carrying the raw text, before any update is applied:
text that is not JSON, a JSON value of the wrong shape, an update with a missing or unknown key,
an invalid path, a confidence that is not a number in [0, 1], a value that is not JSON (``NaN``,
``Infinity``), or prose holding two *different* candidate arrays (ambiguous). ``[]`` is valid and
means "no change".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from stateval.errors import (
    InvalidConfidenceError,
    InvalidValueError,
    MutatorOutputError,
    StateError,
)
from stateval.state import InterpretiveState, ValueConfidence, validate_path

__all__ = ["PATH_PATTERN", "UPDATES_JSON_SCHEMA", "Update", "apply_updates", "parse_updates"]

_REQUIRED: Final = ("path", "value", "confidence")
_ALLOWED: Final = frozenset({"path", "value", "confidence", "inference"})

_PATH_CHAR: Final = (
    r'[^."\\\u0000-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]'
)
"""One character of a path segment, as a regex class both Python and llama.cpp's grammar
converter read the same way: not ``.``, a control character or (Unicode) whitespace, which
`validate_path` rejects, nor ``"`` or ``\\``, which constrained decoding would emit unescaped
inside the JSON string. Plain ranges only: llama.cpp cannot translate ``\\s`` or ``\\.``."""

PATH_PATTERN: Final = f"^{_PATH_CHAR}+([.]{_PATH_CHAR}+)*$"
"""The ``pattern`` of an update's path in `UPDATES_JSON_SCHEMA` (`validate_path` stays the
authority; this pattern accepts a subset of what it accepts: no ``"`` or ``\\``)."""

UPDATES_JSON_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "stateval updates",
    "description": "Updates to apply to an interpretive state, one per field set or changed.",
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Dot-separated field path, e.g. registrant.name or items.0.sku.",
                "pattern": PATH_PATTERN,
            },
            "value": {
                "type": ["string", "number", "boolean", "null", "array", "object"],
                "description": "The field's new value: any JSON value.",
            },
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "inference": {
                "type": ["string", "null"],
                "description": "Why the input supports this value, in one sentence.",
            },
        },
        "required": list(_REQUIRED),
        "additionalProperties": False,
    },
}
"""JSON Schema (2020-12) of the array `parse_updates` accepts, for constrained decoding.

Every subschema is typed and the path pattern uses plain character classes, so llama.cpp's
grammar converter (llama-cpp-python 0.3.x) accepts it as it is."""


@dataclass(frozen=True, slots=True)
class Update:
    """One field update proposed by an LLM mutator.

    Args:
        path: A valid field path.
        value: Any JSON value.
        confidence: A number in [0, 1] (stored as a float).
        inference: Why the model believes it, if given.
    """

    path: str
    value: Any
    confidence: float
    inference: str | None = None

    def __post_init__(self) -> None:
        validate_path(self.path)
        try:
            vc = ValueConfidence(self.value, self.confidence, self.inference)
        except InvalidConfidenceError as exc:
            raise InvalidConfidenceError(exc.confidence, self.path) from None
        except InvalidValueError as exc:
            raise InvalidValueError(exc.value, exc.problem, self.path) from None
        object.__setattr__(self, "value", vc.value)
        object.__setattr__(self, "confidence", vc.confidence)

    def to_candidate(self, message_id: str | None = None) -> ValueConfidence:
        """This update as a candidate value, recording ``message_id``."""
        return ValueConfidence(self.value, self.confidence, self.inference, message_id)


def apply_updates(
    state: InterpretiveState, updates: Iterable[Update], message_id: str | None = None
) -> InterpretiveState:
    """A copy of ``state`` with each update added as a candidate (``state`` is unchanged)."""
    out = state.copy()
    for update in updates:
        out.add_value(update.path, update.to_candidate(message_id))
    return out


@dataclass(frozen=True, slots=True)
class _NonJSON:
    """Stands in for ``NaN`` / ``Infinity`` / ``-Infinity``, which Python's json accepts."""

    literal: str


_DECODER: Final = json.JSONDecoder(parse_constant=_NonJSON)
_FENCE: Final = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_OPENERS: Final = re.compile(r"[\[{]")


def parse_updates(raw: str) -> list[Update]:
    """Parse an LLM's reply into updates, or raise `MutatorOutputError` (see module docs).

    Example:
        >>> parse_updates('```json\\n[{"path": "a.b", "value": 1, "confidence": 0.5}]\\n```')
        [Update(path='a.b', value=1, confidence=0.5, inference=None)]
    """
    if not isinstance(raw, str):
        raise MutatorOutputError(repr(raw), f"output is a {type(raw).__name__}, not text")
    try:
        document = _find_document(raw)
    except RecursionError:
        raise MutatorOutputError(raw, "output nests JSON too deeply to parse") from None
    except ValueError as exc:  # not a JSONDecodeError: an integer past Python's digit limit
        reason = str(exc).split(";")[0]
        raise MutatorOutputError(
            raw, f"output holds a number stateval cannot read: {reason}"
        ) from None
    items = _unwrap(raw, document)
    return [_update(raw, i, item) for i, item in enumerate(items)]


def _find_document(raw: str) -> Any:
    text = raw.strip()
    if not text:
        raise MutatorOutputError(raw, "output is empty")
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        whole_error = exc
    if text[0] in "[{":
        try:
            _DECODER.raw_decode(text, 0)
        except json.JSONDecodeError:
            raise MutatorOutputError(raw, f"output is not valid JSON: {whole_error}") from None
    candidates = _fenced_candidates(raw)
    if candidates is None:
        candidates = _prose_candidates(text)
    distinct: list[Any] = []
    for candidate in candidates:
        if candidate not in distinct:
            distinct.append(candidate)
    if not distinct:
        raise MutatorOutputError(raw, "no JSON array of updates found in the output")
    if len(distinct) > 1:
        raise MutatorOutputError(
            raw, f"ambiguous output: found {len(distinct)} different JSON arrays of updates"
        )
    return distinct[0]


def _fenced_candidates(raw: str) -> list[Any] | None:
    """JSON values of the fenced blocks that hold JSON, or None when no fenced block does."""
    found: list[Any] = []
    for number, match in enumerate(_FENCE.finditer(raw), start=1):
        body = match.group(1).strip()
        if not body or body[0] not in "[{":
            continue
        try:
            found.append(_DECODER.decode(body))
        except json.JSONDecodeError as exc:
            raise MutatorOutputError(
                raw, f"fenced block {number} is not valid JSON: {exc}"
            ) from None
    return found or None


def _prose_candidates(text: str) -> list[Any]:
    """Top-level JSON values embedded in prose that look like an update list."""
    found: list[Any] = []
    pos = 0
    while (match := _OPENERS.search(text, pos)) is not None:
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except json.JSONDecodeError:
            pos = match.start() + 1
            continue
        if _looks_like_updates(value):
            found.append(value)
        pos = end
    return found


def _looks_like_updates(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(item, dict) for item in value)
    return isinstance(value, dict) and set(value) == {"updates"}


def _unwrap(raw: str, document: Any) -> list[Any]:
    if isinstance(document, dict) and set(document) == {"updates"}:
        document = document["updates"]
        if not isinstance(document, list):
            raise MutatorOutputError(
                raw, f'"updates" is {_json_type(document)}, not a JSON array of updates'
            )
    if not isinstance(document, list):
        raise MutatorOutputError(
            raw, f"expected a JSON array of updates, got {_json_type(document)}"
        )
    return document


def _update(raw: str, index: int, item: Any) -> Update:
    where = f"update {index}"
    if not isinstance(item, dict):
        raise MutatorOutputError(raw, f"{where} is {_json_type(item)}, not an object")
    missing = [key for key in _REQUIRED if key not in item]
    if missing:
        raise MutatorOutputError(raw, f"{where} lacks {', '.join(map(repr, missing))}")
    unknown = sorted(set(item) - _ALLOWED)
    if unknown:
        raise MutatorOutputError(
            raw,
            f"{where} has unknown key(s) {', '.join(map(repr, unknown))}; "
            "allowed: path, value, confidence, inference",
        )
    path = item["path"]
    if isinstance(path, str):
        where = f"{where} ({path!r})"
    confidence = item["confidence"]
    if isinstance(confidence, _NonJSON):
        raise MutatorOutputError(
            raw, f"{where}: confidence is {confidence.literal}, not a number in [0, 1]"
        )
    literal = _non_json_literal(item["value"])
    if literal is not None:
        raise MutatorOutputError(raw, f"{where}: value contains {literal}, which is not JSON")
    try:
        return Update(path, item["value"], confidence, item.get("inference"))
    except StateError as exc:
        raise MutatorOutputError(raw, f"update {index}: {exc}") from None


def _non_json_literal(value: Any) -> str | None:
    if isinstance(value, _NonJSON):
        return value.literal
    children: Iterable[Any] = ()
    if isinstance(value, list):
        children = value
    elif isinstance(value, dict):
        children = value.values()
    for child in children:
        literal = _non_json_literal(child)
        if literal is not None:
            return literal
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float | _NonJSON):
        return "a number"
    return "null"
