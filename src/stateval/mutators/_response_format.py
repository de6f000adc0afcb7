"""The ``response_format`` that constrains a chat completion to a JSON Schema, in two dialects.

* OpenAI's ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``: the root must
  be an object, so any other root is wrapped as ``{"updates": <schema>}`` (`parse_updates`
  unwraps that), and ``strict`` is set only when the schema meets OpenAI's strict rules.
* llama.cpp's ``{"type": "json_object", "schema": {...}}``, adjusted only where
  llama-cpp-python's grammar converter would fail (see `_for_llama_cpp`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal

__all__ = ["SchemaDialect", "response_format"]

SchemaDialect = Literal["auto", "json_schema", "json_object"]
"""How a response schema is sent: OpenAI's ``json_schema``, llama.cpp's ``json_object``, or auto."""

_WRAP_KEY: Final = "updates"
_ANY_JSON_TYPES: Final = ("string", "number", "integer", "boolean", "null", "array", "object")
_ESCAPE: Final = re.compile(r"\\(.)", re.DOTALL)
_GRAMMAR_ESCAPES: Final = frozenset('\\"nrtxuU[](){}|*+?')
"""Characters after a backslash that survive the converter (llama.cpp's grammar escapes, or
regex operators it unescapes)."""
_SHAPE_KEYS: Final = frozenset(
    {"type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf", "properties", "items"}
)


def response_format(
    schema: Mapping[str, Any], dialect: str, name: str, strict: bool | None
) -> dict[str, Any]:
    """The ``response_format`` for ``schema`` in ``dialect`` (``json_schema`` or ``json_object``).

    Args:
        schema: The JSON Schema the reply must follow.
        dialect: ``json_schema`` (OpenAI) or ``json_object`` (llama.cpp).
        name: ``json_schema.name`` in OpenAI's dialect.
        strict: OpenAI's ``strict``; None decides from the schema.
    """
    if dialect == "json_object":
        return {"type": "json_object", "schema": _for_llama_cpp(schema)}
    inner = {key: value for key, value in schema.items() if key != "$schema"}
    if inner.get("type") != "object":
        inner = {
            "type": "object",
            "properties": {_WRAP_KEY: inner},
            "required": [_WRAP_KEY],
            "additionalProperties": False,
        }
    return {
        "type": "json_schema",
        "json_schema": {
            "name": name,
            "schema": inner,
            "strict": _strict_ok(inner) if strict is None else strict,
        },
    }


def _for_llama_cpp(schema: Any) -> Any:
    """``schema`` as llama-cpp-python's grammar converter (0.3.x) can take it.

    `UPDATES_JSON_SCHEMA` passes unchanged (bar ``$schema``). For other schemas, two things
    would make the converter fail, and the 0.3.x server die, so they are adjusted: a subschema
    with no type ("any JSON value") gets every JSON type, and a ``pattern`` the converter cannot
    translate (unanchored, a ``(?`` group, or an escape such as ``\\s``, ``\\d`` or ``\\.``) is
    dropped. The reply is validated after decoding anyway.
    """
    if isinstance(schema, list):
        return [_for_llama_cpp(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$schema" or (key == "pattern" and not _translatable(value)):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
            out[key] = {name: _for_llama_cpp(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "not"):
            out[key] = _for_llama_cpp(value)
        else:
            out[key] = value
    if not _SHAPE_KEYS.intersection(out):
        out["type"] = list(_ANY_JSON_TYPES)
    return out


def _translatable(pattern: object) -> bool:
    """Whether llama.cpp's converter turns ``pattern`` into a grammar llama.cpp can parse."""
    if not isinstance(pattern, str) or not (pattern.startswith("^") and pattern.endswith("$")):
        return False
    if "(?" in pattern:
        return False
    escapes = _ESCAPE.findall(pattern)
    return all(escape in _GRAMMAR_ESCAPES for escape in escapes)


def _strict_ok(schema: Any) -> bool:
    """Whether ``schema`` meets OpenAI's strict structured-output rules (a conservative check)."""
    if not isinstance(schema, dict):
        return False
    if "anyOf" in schema:
        return all(_strict_ok(option) for option in schema["anyOf"])
    if not any(key in schema for key in ("type", "enum", "const", "$ref")):
        return False
    types = schema.get("type")
    type_set = set(types) if isinstance(types, list) else {types}
    if "object" in type_set:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", [])) != set(properties):
            return False
        if not all(_strict_ok(sub) for sub in properties.values()):
            return False
    return not ("array" in type_set and not _strict_ok(schema.get("items")))
