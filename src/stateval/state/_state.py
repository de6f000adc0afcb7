"""`InterpretiveState`: field paths mapped to candidate values, in the order added, with the
compact form of a state built from flat values (`FlatValues`)."""

from __future__ import annotations

import json
import reprlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from stateval.errors import InvalidConfidenceError, InvalidPathError, InvalidValueError, StateError
from stateval.state._values import (
    _SET_CONFIDENCE,
    _SET_INFERENCE,
    _SET_MESSAGE_ID,
    _SET_VALUE,
    _SURROGATE,
    _VALID_PATHS,
    ValueConfidence,
    _check_confidence,
    check_json_value,
    validate_path,
)

__all__ = ["FlatValues", "InterpretiveState"]


_ABSENT: Any = object()
_new = object.__new__
_PLAIN = frozenset({str, int, bool, type(None)})


def _candidate(value: Any, confidence: float, message_id: str | None) -> ValueConfidence:
    """A `ValueConfidence` of already-checked parts, built without checking them again."""
    vc: ValueConfidence = _new(ValueConfidence)
    _SET_VALUE(vc, value)
    _SET_CONFIDENCE(vc, confidence)
    _SET_INFERENCE(vc, None)
    _SET_MESSAGE_ID(vc, message_id)
    return vc


_SHARED_KEYS = (
    frozenset({"value", "confidence"}),
    frozenset({"value", "confidence", "message_id"}),
)


def _compact(fields: Mapping[str, Any]) -> InterpretiveState | None:
    """The state a `to_dict` form holds in the compact form when it can be (one candidate per
    path, one confidence and message id, no inference: what a compact state writes), else
    None; None too for anything `InterpretiveState.from_dict` would refuse, so that it words
    the problem."""
    values: dict[str, Any] = {}
    confidence: Any = _ABSENT  # not None: a null confidence is refused, not skipped
    message_id: Any = None
    size = 0
    try:  # a dict of the first's size holding its keys has no other (KeyError when one lacks)
        for path, candidates in fields.items():
            if candidates.__class__ is not list or len(candidates) != 1:
                return None
            candidate = candidates[0]
            if candidate.__class__ is not dict:
                return None
            conf = candidate["confidence"]
            if confidence is _ABSENT:
                if candidate.keys() not in _SHARED_KEYS:
                    return None
                confidence, message_id, size = conf, candidate.get("message_id"), len(candidate)
            elif (
                conf.__class__ is not confidence.__class__
                or conf != confidence
                or (not conf and str(conf) != str(confidence))  # 0.0 is not -0.0
                or (  # another size than the first, or another message id
                    (
                        len(candidate) != size
                        or (size == 3 and candidate["message_id"] != message_id)
                    )
                    and not _shares(candidate, message_id)
                )
            ):
                return None
            values[path] = candidate["value"]
    except KeyError:
        return None
    if confidence.__class__ is not float:  # nor _ABSENT: no field
        return None
    if message_id is not None and (
        message_id.__class__ is not str or _SURROGATE.search(message_id)
    ):
        return None
    try:
        return InterpretiveState.from_flat(values, confidence, message_id)
    except StateError:
        return None


def _shares(candidate: dict[str, Any], message_id: Any) -> bool:
    """Whether a candidate of another size than the first (a message id of None written, or
    not) has only shared keys, and the first's message id."""
    return candidate.keys() in _SHARED_KEYS and candidate.get("message_id") == message_id


class FlatValues:
    """The compact form of a state built from flat values: one candidate per path, every one
    with the same confidence and message id (see `InterpretiveState.from_flat`). Only its state
    changes it (`InterpretiveState.set_value` with a value of the same confidence and message
    id); each state has its own.

    Attributes:
        values: Path -> value.
        confidence: The confidence of every value.
        message_id: The message id of every value.
        all_strings: True when every value is a string.
    """

    __slots__ = ("all_strings", "confidence", "message_id", "values")

    def __init__(
        self,
        values: dict[str, Any],
        confidence: float,
        message_id: str | None,
        all_strings: bool = False,
    ) -> None:
        self.values = values
        self.confidence = confidence
        self.message_id = message_id
        self.all_strings = all_strings


_STR = {str}


def _surrogate_in(values: Mapping[str, Any], kinds: set[type]) -> bool:
    """Whether a string value holds an unpaired surrogate (one scan of them all)."""
    strings = values.values() if kinds == _STR else (v for v in values.values() if type(v) is str)
    joined = "".join(strings)
    return not joined.isascii() and _SURROGATE.search(joined) is not None


def _checked(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with every path and value checked (tuples become lists)."""
    kept: dict[str, Any] = {}
    for path, value in values.items():
        validate_path(path)
        if value.__class__ not in _PLAIN or value.__class__ is str:
            if isinstance(value, tuple):
                value = list(value)
            try:
                check_json_value(value)
            except InvalidValueError as exc:
                raise InvalidValueError(exc.value, exc.problem, path) from None
        kept[path] = value
    return kept


@dataclass(slots=True)
class InterpretiveState:
    """Field paths mapped to their candidates, in the order added.

    Equality compares every candidate of every path (order of paths does not matter). A state
    built with `from_flat` keeps its values in a compact form (`FlatValues`) until a candidate
    is read or changed, so building and comparing many flat states makes no per-field objects.
    """

    _fields: dict[str, list[ValueConfidence]] = field(default_factory=dict)
    _flat: FlatValues | None = field(default=None, repr=False, compare=False)

    def _expand(self) -> dict[str, list[ValueConfidence]]:
        """The candidates by path (the compact form turned into candidates first)."""
        flat = self._flat
        if flat is not None:
            conf, mid = flat.confidence, flat.message_id
            self._fields = {p: [_candidate(v, conf, mid)] for p, v in flat.values.items()}
            self._flat = None
        return self._fields

    @property
    def flat_values(self) -> FlatValues | None:
        """The compact form, while the state is still in it (None once expanded)."""
        return self._flat

    def add_value(self, path: str, value: ValueConfidence) -> None:
        """Append a candidate to ``path`` (creating the field)."""
        validate_path(path)
        if not isinstance(value, ValueConfidence):
            raise InvalidValueError(value, _not_a_candidate("add_value", path, value), path)
        self._expand().setdefault(path, []).append(value)

    def set_value(self, path: str, value: ValueConfidence) -> None:
        """Replace every candidate of ``path`` with ``value``."""
        if path.__class__ is not str or path not in _VALID_PATHS:  # a path seen before: valid
            validate_path(path)
        if value.__class__ is not ValueConfidence and not isinstance(value, ValueConfidence):
            raise InvalidValueError(value, _not_a_candidate("set_value", path, value), path)
        flat = self._flat
        if (  # a value like the compact form's others: the state stays compact
            flat is not None
            and (conf := value.confidence) == flat.confidence
            and (conf or str(conf) == str(flat.confidence))  # 0.0 is not -0.0 in JSON
            and value.message_id == flat.message_id
            and value.inference is None
        ):
            flat.values[path] = value.value
            flat.all_strings = flat.all_strings and value.value.__class__ is str
            return
        self._expand()[path] = [value]

    def remove(self, path: str) -> None:
        """Remove the field ``path`` and all its candidates (a no-op when absent)."""
        flat = self._flat
        if flat is not None:
            flat.values.pop(path, None)
            return
        self._expand().pop(path, None)

    def best(self, path: str) -> ValueConfidence | None:
        """The candidate with the highest confidence (the first added on a tie), or None."""
        flat = self._flat
        if flat is not None:  # the compact form's one candidate, made without expanding
            value = flat.values.get(path, _ABSENT)
            return None if value is _ABSENT else _candidate(value, flat.confidence, flat.message_id)
        candidates = self._fields.get(path)
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        return max(candidates, key=lambda vc: vc.confidence)

    def best_candidates(self) -> dict[str, ValueConfidence]:
        """Path -> its best candidate (see `best`), for every field, in path order."""
        out: dict[str, ValueConfidence] = {}
        for path, candidates in self._expand().items():
            if len(candidates) == 1:
                out[path] = candidates[0]
            elif candidates:
                out[path] = max(candidates, key=lambda vc: vc.confidence)
        return out

    def candidates(self, path: str) -> list[ValueConfidence]:
        """Every candidate of ``path``, in the order added (a copy)."""
        return list(self._expand().get(path, ()))

    def paths(self) -> list[str]:
        """Paths that hold candidates, in the order first added."""
        flat = self._flat
        if flat is not None:
            return list(flat.values)
        return [p for p, c in self._fields.items() if c]

    def copy(self) -> InterpretiveState:
        """An independent copy (candidates are immutable, so the lists are what is copied)."""
        flat = self._flat
        if flat is not None:
            copied = FlatValues(
                dict(flat.values), flat.confidence, flat.message_id, flat.all_strings
            )
            return InterpretiveState({}, copied)
        return InterpretiveState({p: list(c) for p, c in self._fields.items() if c})

    def to_flat(self) -> dict[str, Any]:
        """``{path: best value}`` for every field."""
        flat = self._flat
        if flat is not None:
            return dict(flat.values)
        out: dict[str, Any] = {}
        for path in self.paths():
            best = self.best(path)
            assert best is not None
            out[path] = best.value
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"fields": {path: [candidate, ...]}}``."""
        flat = self._flat
        if flat is not None:  # written from the compact form, which stays compact
            shared: dict[str, Any] = {"confidence": flat.confidence}
            if flat.message_id is not None:
                shared["message_id"] = flat.message_id
            return {"fields": {p: [{"value": v, **shared}] for p, v in flat.values.items()}}
        return {"fields": {p: [vc.to_dict() for vc in c] for p, c in self._fields.items() if c}}

    def to_json(self, **kwargs: Any) -> str:
        """`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InterpretiveState:
        """Inverse of `to_dict`."""
        if not isinstance(data, Mapping) or not isinstance(data.get("fields"), Mapping):
            raise StateError('a state is an object {"fields": {path: [candidate, ...]}}')
        compact = _compact(data["fields"])
        if compact is not None:
            return compact
        state = cls()
        for path, candidates in data["fields"].items():
            validate_path(path)
            if not isinstance(candidates, list):
                raise StateError(f"candidates at {path!r} must be a list")
            for candidate in candidates:
                state.add_value(path, ValueConfidence.from_dict(candidate, path))
        return state

    @classmethod
    def from_json(cls, text: str) -> InterpretiveState:
        """Inverse of `to_json`."""
        try:
            data = json.loads(text)
        except RecursionError:
            raise StateError("state JSON nests too deeply to parse") from None
        except ValueError as exc:  # JSONDecodeError, or an integer past the digit limit
            raise StateError(f"state JSON does not parse: {str(exc).split(';')[0]}") from None
        return cls.from_dict(data)

    @classmethod
    def from_flat(
        cls,
        values: Mapping[str, Any],
        confidence: float = 1.0,
        message_id: str | None = None,
        *,
        checked: bool = False,
        all_strings: bool | None = None,
    ) -> InterpretiveState:
        """One candidate per path from ``{path: value}``, each with ``confidence``.

        With ``checked``, ``values`` is a dict whose every path and value were accepted by
        an earlier ``from_flat`` (the same values read again, e.g. a case line known not to
        have changed since it was loaded): nothing is checked again, and the dict is kept,
        not copied (the caller gives it up); ``all_strings``, when given, says whether every
        value is a string (what the earlier reading found), so the values are not looked at."""
        if not values:
            return cls()
        if checked and type(values) is dict and type(confidence) is float:
            if all_strings is None:
                all_strings = set(map(type, values.values())) == _STR
            return cls({}, FlatValues(values, confidence, message_id, all_strings))
        first = next(iter(values))
        if confidence.__class__ is float and 0.0 <= confidence <= 1.0:
            conf = confidence
        else:
            try:
                conf = _check_confidence(confidence)
            except InvalidConfidenceError as exc:
                validate_path(first)
                raise InvalidConfidenceError(exc.confidence, first) from None
        if message_id is not None and (
            not isinstance(message_id, str)
            or (not message_id.isascii() and _SURROGATE.search(message_id))
        ):  # as a `ValueConfidence` refuses it
            validate_path(first)
            problem = (
                "message_id must be a string or None"
                if not isinstance(message_id, str)
                else "message_id holds an unpaired surrogate, which is not text"
            )
            raise InvalidValueError(message_id, problem, first)
        kinds = set(map(type, values.values()))
        if (
            kinds <= _PLAIN
            and _VALID_PATHS.issuperset(values)
            and not (str in kinds and _surrogate_in(values, kinds))
        ):
            kept = dict(values)  # every path seen before, every value a plain JSON scalar
        else:
            kept = _checked(values)
            kinds = set(map(type, kept.values()))
        return cls({}, FlatValues(kept, conf, message_id, kinds == _STR))

    @classmethod
    def from_nested(
        cls,
        data: Mapping[str, Any],
        confidence: float = 1.0,
        message_id: str | None = None,
    ) -> InterpretiveState:
        """Flatten nested objects into dotted paths; lists and scalars are leaf values.

        An empty object contributes no field.
        """
        flat: dict[str, Any] = {}

        def walk(prefix: str, node: Mapping[str, Any]) -> None:
            for key, value in node.items():
                if not isinstance(key, str):
                    raise InvalidPathError(key, "object keys must be strings")
                path = f"{prefix}.{key}" if prefix else key
                if isinstance(value, Mapping):
                    walk(path, value)
                else:
                    flat[path] = value

        walk("", data)
        return cls.from_flat(flat, confidence=confidence, message_id=message_id)

    def with_message_id(self, message_id: str) -> InterpretiveState:
        """A copy where every candidate without a message id gets ``message_id``."""
        out = InterpretiveState()
        for path, candidates in self._expand().items():
            for vc in candidates:
                out.add_value(path, vc if vc.message_id else replace(vc, message_id=message_id))
        return out

    def __contains__(self, path: object) -> bool:
        flat = self._flat
        if flat is not None:
            return path in flat.values
        return isinstance(path, str) and bool(self._fields.get(path))

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths())

    def __len__(self) -> int:
        return len(self.paths())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InterpretiveState):
            return NotImplemented
        mine, theirs = self._flat, other._flat
        if mine is not None and theirs is not None and mine.confidence == theirs.confidence:
            return mine.message_id == theirs.message_id and mine.values == theirs.values
        ours = {p: c for p, c in self._expand().items() if c}
        others = {p: c for p, c in other._expand().items() if c}
        return ours == others

    def __repr__(self) -> str:
        return f"InterpretiveState({self.to_flat()!r})"


def _not_a_candidate(method: str, path: str, value: object) -> str:
    """Why ``method(path, value)`` refused a bare value, and the call that works."""
    shown = reprlib.repr(value)
    return (
        f"{method} takes a ValueConfidence, not {type(value).__name__} {shown}: "
        f"write {method}({path!r}, ValueConfidence({shown}, 1.0))"
    )
