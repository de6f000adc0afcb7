"""Field paths and candidate values: what a path and a JSON value may be, and
`ValueConfidence`, one candidate value with its confidence (seed 000)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from stateval.errors import InvalidConfidenceError, InvalidPathError, InvalidValueError, StateError

__all__ = [
    "MAX_VALUE_DEPTH",
    "JSONValue",
    "ValueConfidence",
    "check_json_value",
    "check_text",
    "paths_known",
    "validate_path",
]

JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"

_SEGMENT = re.compile(r"[^.\s\x00-\x1f]+")


_VALID_PATHS: set[str] = set()
_VALID_PATHS_KEPT = 100_000


def validate_path(path: object) -> str:
    """Return ``path`` if it is a valid field path, else raise `InvalidPathError`.

    Valid paths are remembered (up to 100,000), so checking a path seen before is one set
    lookup.
    """
    if path.__class__ is str and path in _VALID_PATHS:
        return path
    if not isinstance(path, str):
        raise InvalidPathError(path, f"a path is a string, not {type(path).__name__}")
    if not path:
        raise InvalidPathError(path, "empty path")
    for segment in path.split("."):
        if not segment:
            raise InvalidPathError(path, "empty segment (leading, trailing or doubled '.')")
        if not _SEGMENT.fullmatch(segment):
            problem = f"segment {segment!r} contains whitespace or control characters"
            raise InvalidPathError(path, problem)
        if _SURROGATE.search(segment):
            shown = ascii(segment)
            raise InvalidPathError(shown, f"segment {shown} holds an unpaired surrogate")
    if len(_VALID_PATHS) >= _VALID_PATHS_KEPT:
        _VALID_PATHS.clear()
    _VALID_PATHS.add(path)
    return path


def paths_known(paths: Iterable[object]) -> bool:
    """True when `validate_path` accepted every one of ``paths`` before and still remembers
    it (one set lookup each; a path it refuses is never remembered)."""
    return _VALID_PATHS.issuperset(paths)


MAX_VALUE_DEPTH = 100
"""How deep lists and objects may nest in a value (deeper ones are rejected, not recursed into)."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def check_json_value(value: object, path: str | None = None) -> None:
    """Raise `InvalidValueError` unless ``value`` is a JSON value: finite numbers, string keys,
    text without unpaired surrogates, nested at most `MAX_VALUE_DEPTH` deep."""
    if value.__class__ is str and value.isascii():
        return  # the common value: ASCII text (``isascii`` reads a flag) holds no surrogate
    problem = _json_problem(value)
    if problem is not None:
        raise InvalidValueError(value, problem, path)


def check_text(text: str, what: str) -> None:
    """Raise `InvalidValueError` when ``text`` holds an unpaired surrogate (not Unicode text)."""
    if not text.isascii() and _SURROGATE.search(text):
        raise InvalidValueError(text, f"{what} holds an unpaired surrogate, which is not text")


def _json_problem(root: object) -> str | None:
    stack: list[tuple[object, str, int]] = [(root, "value", 0)]
    while stack:
        value, where, depth = stack.pop()
        if value is None or isinstance(value, bool | int):
            continue
        if isinstance(value, str):
            if not value.isascii() and _SURROGATE.search(value):
                return f"{where} holds an unpaired surrogate, which is not text"
        elif isinstance(value, float):
            if not math.isfinite(value):
                return f"{where} is {value!r}, which JSON cannot hold"
        elif isinstance(value, list | tuple | dict):
            if depth >= MAX_VALUE_DEPTH:
                return f"{where} nests deeper than {MAX_VALUE_DEPTH} levels"
            children: list[tuple[object, str, int]] = []
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        return f"{where} has a non-string key {key!r}"
                    if not key.isascii() and _SURROGATE.search(key):
                        return f"{where} has a key holding an unpaired surrogate"
                    children.append((item, f"{where}[{key!r}]", depth + 1))
            else:
                children = [(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]
            stack.extend(reversed(children))
        else:
            return f"{where} is a {type(value).__name__}, not a JSON value"
    return None


def _check_confidence(confidence: object, path: str | None = None) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise InvalidConfidenceError(confidence, path)
    try:
        result = float(confidence)
    except OverflowError:
        raise InvalidConfidenceError(_short_number(confidence), path) from None
    if math.isnan(result) or not 0.0 <= result <= 1.0:
        raise InvalidConfidenceError(confidence, path)
    return result


def _short_number(number: object) -> object:
    text = str(number) if isinstance(number, int) else repr(number)
    return number if len(text) <= 40 else f"{text[:20]}...({len(text)} digits)"


@dataclass(frozen=True, slots=True, init=False)
class ValueConfidence:
    """One candidate value for a field, with how sure the mutator is of it.

    Args:
        value: Any JSON value.
        confidence: A number in [0, 1].
        inference: Why the mutator believes it (free text), if given.
        message_id: The input message the value came from, if known.
    """

    value: Any
    confidence: float
    inference: str | None = None
    message_id: str | None = None

    # Built in ``__new__``, each field set through its slot (a mutator makes one per value it
    # sets: the dataclass ``__init__`` with ``__post_init__`` cost half as much again).
    def __new__(
        cls,
        value: Any,
        confidence: float,
        inference: str | None = None,
        message_id: str | None = None,
    ) -> ValueConfidence:
        if confidence.__class__ is not float or not 0.0 <= confidence <= 1.0:  # NaN too
            confidence = _check_confidence(confidence)
        if value.__class__ is not str or not value.isascii():  # ASCII text is a JSON value
            check_json_value(value)
            if isinstance(value, tuple):
                value = list(value)
        if inference is not None or message_id is not None:
            _check_notes(inference, message_id)
        self = _new(cls)
        _SET_VALUE(self, value)
        _SET_CONFIDENCE(self, confidence)
        _SET_INFERENCE(self, inference)
        _SET_MESSAGE_ID(self, message_id)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied as the call that builds it (``__new__`` takes the fields)."""
        return (ValueConfidence, (self.value, self.confidence, self.inference, self.message_id))

    def to_dict(self) -> dict[str, Any]:
        """The candidate as a JSON object (``inference``/``message_id`` only when set)."""
        out: dict[str, Any] = {"value": self.value, "confidence": self.confidence}
        if self.inference is not None:
            out["inference"] = self.inference
        if self.message_id is not None:
            out["message_id"] = self.message_id
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str | None = None) -> ValueConfidence:
        """Build a candidate from ``{"value", "confidence", "inference"?, "message_id"?}``."""
        if not isinstance(data, Mapping):
            raise StateError(f"candidate{_at(path)} must be an object, got {type(data).__name__}")
        unknown = set(data) - {"value", "confidence", "inference", "message_id"}
        if unknown:
            raise StateError(f"candidate{_at(path)} has unknown keys: {sorted(unknown)}")
        for key in ("value", "confidence"):
            if key not in data:
                raise StateError(f"candidate{_at(path)} lacks {key!r}")
        try:
            return cls(
                value=data["value"],
                confidence=data["confidence"],
                inference=data.get("inference"),
                message_id=data.get("message_id"),
            )
        except InvalidConfidenceError as exc:
            raise InvalidConfidenceError(exc.confidence, path) from None
        except InvalidValueError as exc:
            raise InvalidValueError(exc.value, exc.problem, path) from None


_new = object.__new__
_slot = vars(ValueConfidence)  # each field's slot descriptor: its __set__ fills a new candidate
_SET_VALUE: Callable[[ValueConfidence, Any], None] = _slot["value"].__set__
_SET_CONFIDENCE: Callable[[ValueConfidence, float], None] = _slot["confidence"].__set__
_SET_INFERENCE: Callable[[ValueConfidence, str | None], None] = _slot["inference"].__set__
_SET_MESSAGE_ID: Callable[[ValueConfidence, str | None], None] = _slot["message_id"].__set__


def _check_notes(inference: object, message_id: object) -> None:
    """Raise `InvalidValueError` unless ``inference`` and ``message_id`` are text or None."""
    if inference is not None and not isinstance(inference, str):
        raise InvalidValueError(inference, "inference must be a string or None")
    if message_id is not None and not isinstance(message_id, str):
        raise InvalidValueError(message_id, "message_id must be a string or None")
    if inference is not None:
        check_text(inference, "inference")
    if message_id is not None:
        check_text(message_id, "message_id")


def _at(path: str | None) -> str:
    return f" at {path!r}" if path else ""
