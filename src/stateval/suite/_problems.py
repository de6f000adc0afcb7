"""Problems in suite and case files worded one way: ``file:line: field: message``, the line
found from a location in the parsed document (`line_locator`), pydantic's errors said in plain
words (`pydantic_message`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "Loc",
    "Locate",
    "display_path",
    "format_problem",
    "line_locator",
    "pydantic_message",
]

Loc = tuple[str | int, ...]
Locate = Callable[[Loc], int | None]


def display_path(path: Path) -> str:
    """``path`` as messages show it: relative to the working folder when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def format_problem(
    file: str, line: int | None, case_id: str | None, loc: Loc | str | None, message: str
) -> str:
    """``file:line: case 'id': field: message``, leaving out the parts that are unknown."""
    head = f"{file}:{line}" if line else file
    parts = [head]
    if case_id is not None:
        parts.append(f"case {case_id!r}")
    where = loc if isinstance(loc, str) else _dotted(loc or ())
    if where:
        parts.append(where)
    return ": ".join([*parts, message])


def _dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_OBJECT_ERRORS = frozenset({"model_type", "model_attributes_type", "dict_type"})


def _written(value: object) -> str:
    """What the user wrote, in YAML / JSON words (``a list``, ``a string``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def pydantic_message(error: Mapping[str, Any]) -> str:
    """A short message for one pydantic error, in the suite file's words (no model names)."""
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required"
    if kind == "string_pattern_mismatch" and ":" in str(ctx.get("pattern")):
        return "expected 'module:attribute'"
    if kind in _OBJECT_ERRORS:
        return f"expected an object (key: value pairs), got {_written(error.get('input'))}"
    if kind == "list_type":
        return f"expected a list, got {_written(error.get('input'))}"
    if kind == "union_tag_not_found":
        return f"needs a {ctx.get('discriminator', 'type')} key"
    if kind == "union_tag_invalid":
        return (
            f"unknown {ctx.get('discriminator', 'type')} {ctx.get('tag')!r} "
            f"(expected {ctx.get('expected_tags')})"
        )
    message = str(error["msg"]).removeprefix("Value error, ")
    return message.replace("Input should be", "expected", 1)


def line_locator(text: str, base: Loc = ()) -> Locate:
    """A function from a location inside ``text`` (YAML or JSON) to its 1-based line.

    The text is parsed only when a line is first asked for. A location that does not exist
    resolves to the line of its deepest existing parent.
    """
    root: list[yaml.Node | None] = []

    def locate(loc: Loc) -> int | None:
        if not root:
            try:
                root.append(yaml.compose(text, Loader=yaml.SafeLoader))
            except yaml.YAMLError:
                root.append(None)
        node = root[0]
        if node is None:
            return None
        line = node.start_mark.line + 1
        for part in (*base, *loc):
            nxt: yaml.Node | None = None
            if isinstance(node, yaml.MappingNode):
                nxt = next(
                    (
                        v
                        for k, v in node.value
                        if isinstance(k, yaml.ScalarNode) and k.value == str(part)
                    ),
                    None,
                )
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                nxt = node.value[part] if 0 <= part < len(node.value) else None
            if nxt is None:
                break
            node = nxt
            line = node.start_mark.line + 1
        return line

    return locate
