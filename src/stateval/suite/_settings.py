"""A suite file read as a document: parsed, ``${VAR}`` expanded, and validated as a
`SuiteModel`, without its case file, its slot file or any of its code.

`load_suite` starts here; the pytest plugin collects a suite file's items from here alone, so
collecting (``pytest --collect-only``) imports none of the user's modules (``mutator.callable``,
``slots.ref``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from stateval.errors import SuiteProblemsError
from stateval.suite._documents import DocumentError, parse_json, parse_yaml, read_document
from stateval.suite._env import expand_environment
from stateval.suite._models import SuiteModel
from stateval.suite._problems import (
    Loc,
    display_path,
    format_problem,
    line_locator,
    pydantic_message,
)

__all__ = ["SuiteDocument", "read_suite_document", "read_suite_settings", "suite_problems"]


@dataclass(frozen=True, slots=True)
class SuiteDocument:
    """A suite file's mapping, its environment variables expanded.

    Attributes:
        label: The file as problem lines name it.
        data: The mapping.
        text: The file's text (to locate a setting's line).
    """

    label: str
    data: dict[str, Any]
    text: str


def read_suite_document(path: Path, kind: str = "suite") -> SuiteDocument:
    """Read and parse ``path`` (a ``kind`` file: suite or monitor) and expand its ``${VAR}``
    references.

    Raises:
        SuiteProblemsError: Unreadable, not YAML/JSON, not a mapping, or an unset variable.
    """
    label = display_path(path)
    try:
        text = read_document(path)
    except DocumentError as exc:
        line = format_problem(label, None, None, None, f"cannot read: {exc.message}")
        raise SuiteProblemsError([line]) from None
    try:
        data = parse_json(text) if path.suffix.lower() == ".json" else parse_yaml(text)
    except DocumentError as exc:
        line = format_problem(label, exc.line, None, None, exc.message)
        raise SuiteProblemsError([line]) from None
    if not isinstance(data, dict):
        raise SuiteProblemsError([format_problem(label, 1, None, None, f"a {kind} is a mapping")])
    data, env_problems = expand_environment(data, os.environ)
    if env_problems:
        locate = line_locator(text)
        raise SuiteProblemsError(
            [
                format_problem(label, locate(loc), None, loc, message)
                for loc, message in env_problems
            ]
        )
    return SuiteDocument(label, data, text)


def read_suite_settings(path: str | Path) -> SuiteModel:
    """A suite file's settings, validated, without reading its case file or slot file and
    without importing any of its code (what ``pytest --collect-only`` needs: the thresholds).

    Raises:
        SuiteProblemsError: One line per problem, naming file, line and field.
    """
    document = read_suite_document(Path(path))
    try:
        return SuiteModel.model_validate(document.data)
    except ValidationError as exc:
        raise SuiteProblemsError(suite_problems(exc, document)) from None


def suite_problems(exc: ValidationError, document: SuiteDocument) -> list[str]:
    """One problem line per validation error of a suite file's mapping."""
    locate = line_locator(document.text)
    out = []
    for error in exc.errors():
        loc: Loc = tuple(error["loc"])
        case_id = None
        shown: Loc = loc
        if loc[:2] == ("cases", "inline") and len(loc) > 2 and isinstance(loc[2], int):
            items = document.data.get("cases", {}).get("inline", [])
            item = items[loc[2]] if isinstance(items, list) and loc[2] < len(items) else None
            if isinstance(item, dict) and isinstance(item.get("id"), str | int):
                case_id = str(item["id"])
                shown = loc[3:]
        if loc[:1] == ("mutator",) and len(loc) > 1 and loc[1] in ("python", "llm"):
            loc = shown = ("mutator", *loc[2:])
        message = pydantic_message(error)
        out.append(format_problem(document.label, locate(loc), case_id, shown, message))
    return out
