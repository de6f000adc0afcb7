"""Environment variables in suite files: ``${VAR}`` and ``${VAR:-default}`` in string values.

Expanded in every string value of the suite file except the case data (``cases.inline``) and the
prompt texts (``mutator.instructions``, ``mutator.prompt_template``), which are used as written.
``${VAR:-default}`` gives ``default`` when ``VAR`` is unset or empty; ``$${`` is a literal
``${``. A value that is only a reference keeps the string type, so pydantic converts it where a
number is expected (``concurrency: ${RUNNERS:-4}``). Keys are never expanded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from stateval.suite._problems import Loc

__all__ = ["VERBATIM", "expand_environment"]

VERBATIM: Final[tuple[Loc, ...]] = (
    ("cases", "inline"),
    ("mutator", "instructions"),
    ("mutator", "prompt_template"),
)
"""Locations whose strings are never expanded."""

_VERBATIM_SET: Final = frozenset(VERBATIM)
_VERBATIM_DEPTH: Final = 2  # every VERBATIM location is two keys deep

_TOKEN: Final = re.compile(r"\$\$\{|\$\{(?:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\})?")


def expand_environment(
    data: Any, environ: Mapping[str, str], loc: Loc = ()
) -> tuple[Any, list[tuple[Loc, str]]]:
    """``data`` with ``${...}`` references expanded, and a ``(location, message)`` per problem.

    Args:
        data: The parsed suite file.
        environ: The environment (``os.environ``).
        loc: Where ``data`` sits in the file (for recursion).
    """
    if loc[:_VERBATIM_DEPTH] in _VERBATIM_SET:  # one set lookup per node, however deep
        return data, []
    problems: list[tuple[Loc, str]] = []
    if isinstance(data, str):
        return _expand(data, environ, loc, problems), problems
    if isinstance(data, Mapping):
        out: dict[Any, Any] = {}
        for key, value in data.items():
            out[key], found = expand_environment(value, environ, (*loc, str(key)))
            problems.extend(found)
        return out, problems
    if isinstance(data, list):
        items = []
        for index, value in enumerate(data):
            item, found = expand_environment(value, environ, (*loc, index))
            items.append(item)
            problems.extend(found)
        return items, problems
    return data, problems


def _expand(
    text: str, environ: Mapping[str, str], loc: Loc, problems: list[tuple[Loc, str]]
) -> str:
    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "$${":
            return "${"
        name, default = match.group(1), match.group(2)
        if name is None:
            problems.append(
                (loc, "malformed ${...}: write ${VAR} or ${VAR:-default} ($${ for a literal ${)")
            )
            return token
        value = environ.get(name)
        if default is not None and not value:
            return default
        if value is None:
            problems.append(
                (
                    loc,
                    f"environment variable {name} is not set "
                    f"(set it, or give a default: ${{{name}:-value}})",
                )
            )
            return token
        return value

    return _TOKEN.sub(replace, text)
