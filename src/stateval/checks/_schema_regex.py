"""JSON Schema validators whose regexes run with a deadline.

jsonschema matches ``pattern`` and ``patternProperties`` with :mod:`re`, which cannot be
interrupted: ``{"pattern": "^(a+)+$"}`` against 31 ``a``'s and a ``!`` holds the interpreter for
over a minute, Ctrl-C included. `timed_validator_class` extends a jsonschema validator class so
that those keywords (and ``additionalProperties``, which consults ``patternProperties``) match with
the ``regex`` package under one deadline per validation: `regex_deadline` sets it, and a search
that reaches it raises `RegexTimeout`, which `stateval.checks.json_schema` turns into a failed
check labelled ``"timeout"``.

``unevaluatedProperties`` keeps jsonschema's own implementation; the property names it matches
against ``patternProperties`` are first searched here under the same deadline, so a pattern that
backtracks on a name times out before jsonschema sees it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

import jsonschema
import regex
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

__all__ = ["RegexTimeout", "regex_deadline", "timed_validator_class"]


class RegexTimeout(Exception):
    """A schema regex ran past the validation's deadline."""

    def __init__(self, pattern: str, length: int) -> None:
        self.pattern = pattern
        self.length = length
        super().__init__(f"the regex {pattern!r} timed out on a {length}-character string")


_DEADLINE: ContextVar[float | None] = ContextVar("stateval_schema_regex_deadline", default=None)
_FALLBACK_TIMEOUT = 1.0  # a validator used outside `regex_deadline` (e.g. directly by a user)


@contextmanager
def regex_deadline(seconds: float) -> Iterator[None]:
    """Every schema regex search inside the block shares a budget of ``seconds``."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _search(pattern: str, text: str) -> bool:
    deadline = _DEADLINE.get()
    remaining = _FALLBACK_TIMEOUT if deadline is None else deadline - time.monotonic()
    if remaining <= 0:
        raise RegexTimeout(pattern, len(text))
    try:
        return regex.search(pattern, text, timeout=remaining) is not None
    except TimeoutError:
        raise RegexTimeout(pattern, len(text)) from None


def _pattern(
    validator: Validator, patrn: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(
    validator: Any,
    pattern_properties: Mapping[str, Any],
    instance: Any,
    schema: Mapping[str, Any],
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> Iterator[str]:
    properties = schema.get("properties", {})
    patterns = "|".join(schema.get("patternProperties", {}))
    for name in instance:
        if name in properties or (patterns and _search(patterns, name)):
            continue
        yield name


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        names = ", ".join(repr(each) for each in sorted(extras))
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{names} {verb} not match any of the regexes: {patterns}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({names} {verb} unexpected)"
            )


def _all_property_patterns(schema: Any) -> set[str]:
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            patterns = node.get("patternProperties")
            if isinstance(patterns, Mapping):
                found.update(p for p in patterns if isinstance(p, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _unevaluated_properties(base: Any) -> Any:
    def check(
        validator: Validator, unevaluated: Any, instance: Any, schema: Mapping[str, Any]
    ) -> Iterator[ValidationError]:
        if validator.is_type(instance, "object"):
            for pattern in _all_property_patterns(validator.schema):
                for name in instance:
                    _search(pattern, name)
        yield from base(validator, unevaluated, instance, schema)

    return check


@cache
def timed_validator_class(cls: type[Validator]) -> type[Validator]:
    """``cls`` with its regex keywords matched under the deadline of `regex_deadline`."""
    keywords: dict[str, Any] = {}
    if "pattern" in cls.VALIDATORS:
        keywords["pattern"] = _pattern
    if "patternProperties" in cls.VALIDATORS:
        keywords["patternProperties"] = _pattern_properties
    if "additionalProperties" in cls.VALIDATORS:
        keywords["additionalProperties"] = _additional_properties
    base = cls.VALIDATORS.get("unevaluatedProperties")
    if base is not None:
        keywords["unevaluatedProperties"] = _unevaluated_properties(base)
    extended: type[Validator] = jsonschema.validators.extend(cls, keywords)  # type: ignore[no-untyped-call]
    extended.timed_regex = True  # type: ignore[attr-defined]
    return extended
