"""Reading suite, case and slot documents (YAML, JSON) into plain JSON values, within limits.

A suite file is input from a person or a generator, and the loader must answer for any of it with
problem lines, never a hang or a traceback. The limits (see docs/reliability.md):

* `MAX_DOCUMENT_BYTES`: a suite or slot file larger than this is refused before parsing, and
  `read_document` never reads more of it (a device such as ``/dev/zero``, a FIFO or a directory
  is refused before it is opened);
* `MAX_NODES`: a YAML document may not expand (aliases counted at every use) to more nodes, so
  an alias bomb ("billion laughs") is refused after composing, before anything walks it;
* `MAX_DEPTH`: lists and mappings may nest this deep;
* integers may have at most `MAX_INT_DIGITS` digits (Python's own limit for parsing them);
* strings may not hold unpaired surrogates (``"\\ud800"``): they are not Unicode text, and no
  file, journal or server could store them.

YAML is read with the safe loader, without timestamps: ``2024-05-01`` stays the string it looks
like, and the tags ``!!timestamp``, ``!!binary``, ``!!set``, ``!!omap`` and ``!!pairs`` are refused
(their values are not JSON).
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any, Final

import orjson
import yaml
from yaml.constructor import ConstructorError

from stateval._wide_numbers import NUMBER_MARKS, wide_integer_in, wide_integer_marked

__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_INT_DIGITS",
    "MAX_NODES",
    "DocumentError",
    "json_value_problem",
    "parse_json",
    "parse_json_line",
    "parse_yaml",
    "read_document",
]

MAX_DOCUMENT_BYTES: Final = 32 * 1024 * 1024
MAX_NODES: Final = 1_000_000
MAX_DEPTH: Final = 100
MAX_INT_DIGITS: Final = 4_300

_TAG = "tag:yaml.org,2002:"
_REFUSED_TAGS: Final = ("timestamp", "binary", "set", "omap", "pairs")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# the bytes of a case line marked as `NUMBER_MARKS` does, with each opening bracket as b"2":
# one pass tells its runs of digits and (one count) how deep it may nest
_DIGITS_AND_BRACKETS: Final = bytes(0x32 if b in b"[{" else NUMBER_MARKS[b] for b in range(256))


class DocumentError(Exception):
    """A document cannot be read as JSON values; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(message)


class _Loader(yaml.SafeLoader):
    """The safe loader without timestamps and non-JSON tags, refusing oversize expansions."""

    yaml_implicit_resolvers = {  # noqa: RUF012 - PyYAML reads it from the class
        first: [(tag, rx) for tag, rx in resolvers if tag != _TAG + "timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_document(self, node: yaml.Node) -> Any:
        _check_expansion(node)
        return super().construct_document(node)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = sum(ch.isdigit() for ch in node.value)
        if digits > MAX_INT_DIGITS:
            raise ConstructorError(
                None,
                None,
                f"an integer with {digits} digits (at most {MAX_INT_DIGITS})",
                node.start_mark,
            )
        return super().construct_yaml_int(node)

    def refuse_tag(self, node: yaml.Node) -> Any:
        raise ConstructorError(
            None, None, f"unsupported YAML tag {node.tag!r} (quote the value)", node.start_mark
        )


_Loader.add_constructor(_TAG + "int", _Loader.construct_yaml_int)
for _name in _REFUSED_TAGS:
    _Loader.add_constructor(_TAG + _name, _Loader.refuse_tag)


def _check_expansion(root: yaml.Node) -> None:
    """Refuse a node graph that nests past `MAX_DEPTH`, refers to itself, or expands past
    `MAX_NODES` (each node's expanded size is computed once, so the check is linear)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]  # node, depth, children done
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            open_nodes.discard(key)
            size = 1 + sum(sizes[id(child)] for child in children)
            if size > MAX_NODES:
                raise DocumentError(
                    f"expands to more than {MAX_NODES:,} values (aliases counted at each use)",
                    node.start_mark.line + 1,
                )
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise DocumentError("an alias refers to a value that contains it", _line(node))
        if depth > MAX_DEPTH:
            raise DocumentError(f"nests deeper than {MAX_DEPTH} levels", _line(node))
        open_nodes.add(key)
        stack.append((node, depth, True))
        for child in children:
            if id(child) in open_nodes:
                raise DocumentError("an alias refers to a value that contains it", _line(child))
            if id(child) not in sizes:
                stack.append((child, depth + 1, False))


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def parse_yaml(text: str) -> Any:
    """The JSON value of a YAML document (see the module docstring for what is refused).

    Raises:
        DocumentError: The text is not YAML, or its value is outside the limits.
    """
    _check_size(text)
    try:
        value = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise DocumentError(
            f"invalid YAML: {problem}", mark.line + 1 if mark is not None else None
        ) from None
    except RecursionError:
        raise DocumentError(f"invalid YAML: nests deeper than {MAX_DEPTH} levels") from None
    _check_value(value)
    return value


def parse_json(text: str | bytes, *, checked: bool = False) -> Any:
    """The value of a JSON document, within the limits (``NaN`` and ``Infinity`` pass through:
    the state checks reject them where a value must be finite). With ``checked``, the text is
    one this function accepted before (read again unchanged): the limits are not checked
    again.

    The text is parsed by orjson, which reads a subset of what the standard library reads, to
    the same values; what it refuses (``NaN``, a text that is not JSON...) or reads otherwise
    (a number of 20 digits or more, or of a minus and 19, not a float's, which may be an
    integer past 64 bits or under -2**63: orjson makes it a float; `stateval._wide_numbers`)
    is parsed by the standard library, whose value or error message is the answer.

    Raises:
        DocumentError: The text is not JSON, or its value is outside the limits.
    """
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if wide_integer_in(raw):
        value = _parse_standard(text)
    else:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            value = _parse_standard(text)
    if not checked and not _plainly_within_limits(text):
        _check_value(value)
    return value


def parse_json_line(text: bytes) -> tuple[Any, bool]:
    """`parse_json`'s value of one line of a case file, and whether the line is plain: parsed
    by orjson, without a ``\\u`` escape and with too few brackets to nest past `MAX_DEPTH`.
    Every string of a plain line's value is text (orjson reads only valid UTF-8, which holds
    no surrogate, and no escape could write one) and every number in it is finite (orjson
    refuses ``NaN`` and ``Infinity``), so it is a JSON value nothing needs to check again.

    Raises:
        DocumentError: The text is not JSON, or its value is outside the limits.
    """
    marks = text.translate(_DIGITS_AND_BRACKETS)
    if wide_integer_marked(marks):
        value, plain = _parse_standard(text), False
    else:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            value, plain = _parse_standard(text), False
        else:  # UTF-8 text beyond ASCII is plain too: no surrogate, no escape to make one
            # (what `_plainly_within_limits` would add to this is ASCII only and no NUL; a
            # line without a backslash is told so by one byte search)
            plain = (b"\\" not in text or b"\\u" not in text) and marks.count(b"2") <= MAX_DEPTH
    if not plain and not _plainly_within_limits(text):
        _check_value(value)
    return value, plain


def _parse_standard(text: str | bytes) -> Any:
    """`parse_json`'s value with the standard library's parser, or its error."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"invalid JSON: {exc.msg}", exc.lineno) from None
    except RecursionError:
        raise DocumentError(f"invalid JSON: nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise DocumentError(f"invalid JSON: {_first_clause(exc)}") from None


def _plainly_within_limits(text: str | bytes) -> bool:
    """True when the JSON text alone shows that its value is within the limits: too few
    brackets to nest past `MAX_DEPTH`, and no ``\\u`` escape or character that could make an
    unpaired surrogate (plain ASCII bytes, which JSON reads as UTF-8)."""
    if isinstance(text, bytes):
        if not text.isascii() or b"\\u" in text or b"\x00" in text:
            return False
        return text.count(b"[") + text.count(b"{") <= MAX_DEPTH
    if "\\u" in text or _SURROGATE.search(text):
        return False
    return text.count("[") + text.count("{") <= MAX_DEPTH


def json_value_problem(value: Any) -> str | None:
    """Why ``value`` (already parsed) is outside the limits, or None."""
    try:
        _check_value(value)
    except DocumentError as exc:
        return exc.message
    return None


def read_document(path: Path) -> str:
    """The text of the regular file ``path``, reading at most `MAX_DOCUMENT_BYTES` + 1 bytes.

    Raises:
        DocumentError: One line on why not (``not a regular file``, ``larger than 32 MiB``,
            ``not UTF-8 text``, or the system's reason such as ``No such file or directory``).
    """
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise DocumentError("not a regular file")
        with path.open("rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise DocumentError(exc.strerror or type(exc).__name__) from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DocumentError(f"larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise DocumentError("not UTF-8 text") from None


def _check_size(text: str) -> None:
    if len(text) > MAX_DOCUMENT_BYTES:
        raise DocumentError(
            f"larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB; "
            "put cases in a case file (cases.file)"
        )


def _check_value(root: Any) -> None:
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise DocumentError(f"the text {_clip(value)} holds an unpaired surrogate")
        elif isinstance(value, list | dict):
            if depth >= MAX_DEPTH:
                raise DocumentError(f"nests deeper than {MAX_DEPTH} levels")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and _SURROGATE.search(key):
                    raise DocumentError(f"the key {_clip(key)} holds an unpaired surrogate")
                stack.append((item, depth + 1))


def _clip(text: str) -> str:
    shown = text.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    return "'" + (shown if len(shown) <= 40 else shown[:37] + "...") + "'"


def _first_clause(exc: Exception) -> str:
    return str(exc).split(";")[0].strip() or type(exc).__name__
