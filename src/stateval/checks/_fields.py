"""Apply a check to one field of a state instead of a whole output."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Concatenate, ParamSpec, TypeAlias

from stateval.checks._result import CheckResult, failed
from stateval.errors import FieldNotFoundError
from stateval.state import InterpretiveState, validate_path

__all__ = ["FieldSource", "check_name", "field_value", "on_field", "on_field_pair"]

P = ParamSpec("P")

#: What a field can be read from: a state (its best values), or a flat or nested mapping.
FieldSource: TypeAlias = "InterpretiveState | Mapping[str, Any]"

_MISSING = object()


def _descend(node: Any, segments: Sequence[str]) -> Any:
    if not segments:
        return node
    if isinstance(node, Mapping):
        # Longest dotted key first, so flat ({"a.b": 1}), nested and mixed mappings all work.
        for cut in range(len(segments), 0, -1):
            key = ".".join(segments[:cut])
            if key in node:
                found = _descend(node[key], segments[cut:])
                if found is not _MISSING:
                    return found
        return _MISSING
    if isinstance(node, list) and segments[0].isdigit():
        index = int(segments[0])
        return _descend(node[index], segments[1:]) if index < len(node) else _MISSING
    return _MISSING


def field_value(source: FieldSource, path: str) -> Any:
    """The value at a dotted ``path``.

    For an `InterpretiveState` this is the best candidate's value; when no field holds the whole
    path, the longest field that is a prefix of it is read and the rest of the path walks into its
    value (``"registrant.name"`` inside a ``registrant`` object). A mapping may be flat
    (``{"a.b": 1}``), nested (``{"a": {"b": 1}}``) or both; digit segments index lists.

    Raises:
        FieldNotFoundError: Nothing is stored at ``path``.

    Example:
        >>> field_value({"items": [{"sku": "A1"}]}, "items.0.sku")
        'A1'
    """
    validate_path(path)
    segments = path.split(".")
    if isinstance(source, InterpretiveState):
        for cut in range(len(segments), 0, -1):
            best = source.best(".".join(segments[:cut]))
            if best is not None:
                found = _descend(best.value, segments[cut:])
                if found is not _MISSING:
                    return found
        raise FieldNotFoundError(path)
    found = _descend(source, segments)
    if found is _MISSING:
        raise FieldNotFoundError(path)
    return found


def check_name(check: Callable[..., Any]) -> str:
    """A check's display name: its function name, seen through `functools.partial`."""
    while isinstance(check, functools.partial):
        check = check.func
    return str(getattr(check, "__name__", type(check).__name__))


def on_field(
    check: Callable[Concatenate[Any, P], CheckResult], path: str
) -> Callable[Concatenate[FieldSource, P], CheckResult]:
    """Bind ``check`` to one field: the new check takes a state instead of an output.

    The result is named ``"<check>:<path>"``. A missing field fails with label ``"missing"``.

    Example:
        >>> from stateval.checks import contains
        >>> on_field(contains, "user.email")({"user": {"email": "a@b.org"}}, "@").name
        'contains:user.email'
    """
    validate_path(path)

    @functools.wraps(check)
    def bound(source: FieldSource, /, *args: P.args, **kwargs: P.kwargs) -> CheckResult:
        try:
            value = field_value(source, path)
        except FieldNotFoundError:
            return failed(f"{check_name(check)}:{path}", "missing", f"field {path!r} has no value")
        result = check(value, *args, **kwargs)
        return replace(result, name=f"{result.name}:{path}")

    return bound


def on_field_pair(
    check: Callable[Concatenate[Any, Any, P], CheckResult], path: str
) -> Callable[Concatenate[FieldSource, FieldSource, P], CheckResult]:
    """Bind a reference-taking check to one field of an actual and an expected state.

    Example:
        >>> from stateval.checks import levenshtein
        >>> on_field_pair(levenshtein, "name")({"name": "Ada"}, {"name": "Ada"}).score
        1.0
    """
    validate_path(path)

    @functools.wraps(check)
    def bound(
        actual: FieldSource, expected: FieldSource, /, *args: P.args, **kwargs: P.kwargs
    ) -> CheckResult:
        name = f"{check_name(check)}:{path}"
        try:
            reference = field_value(expected, path)
        except FieldNotFoundError:
            return failed(name, "missing", f"field {path!r} has no expected value")
        try:
            value = field_value(actual, path)
        except FieldNotFoundError:
            return failed(name, "missing", f"field {path!r} has no value")
        result = check(value, reference, *args, **kwargs)
        return replace(result, name=f"{result.name}:{path}")

    return bound
