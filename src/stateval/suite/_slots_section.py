"""The ``slots:`` section of a suite or monitor file: a list of paths, a file (a slot list,
or an SGD-style ``schema.json``), or a Python reference, read into a `SlotSchema` with each
problem as one line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stateval.errors import StatevalError
from stateval.mutators import load_callable
from stateval.suite._documents import DocumentError, parse_yaml, read_document
from stateval.suite._models import SlotsFileSpec
from stateval.suite._problems import display_path, format_problem
from stateval.suite._slot_schema import SlotSchema, SlotSchemaError, plain_slot_list, slot_paths

__all__ = ["load_slots"]


def load_slots(
    spec: list[str] | SlotsFileSpec | None,
    base: Path,
    label: str,
    locate: Any,
    problems: list[str],
) -> SlotSchema | None:
    """The ``slots:`` section of a suite or monitor file, read (None after a problem)."""
    if spec is None:
        return None
    if not isinstance(spec, SlotsFileSpec):
        paths = _check_slots(spec, label, locate(("slots",)), "slots", problems)
        return None if paths is None else SlotSchema.from_paths(paths)
    if spec.ref is not None:
        search = [base / spec.path] if spec.path else [base]
        try:
            value = load_callable(spec.ref, search_path=search)
        except StatevalError as exc:
            problems.append(
                format_problem(label, locate(("slots", "ref")), None, "slots.ref", str(exc))
            )
            return None
        where = label
    else:
        assert spec.file is not None
        slot_path = base / spec.file
        where = display_path(slot_path)
        try:
            content = read_document(slot_path)
        except DocumentError as exc:
            message = f"cannot read {spec.file}: {exc.message}"
            problems.append(
                format_problem(label, locate(("slots", "file")), None, "slots.file", message)
            )
            return None
        if slot_path.suffix.lower() in (".json", ".yaml", ".yml"):
            try:
                value = parse_yaml(content)
            except DocumentError as exc:
                problems.append(format_problem(where, exc.line, None, None, exc.message))
                return None
        else:
            try:
                value = plain_slot_list(content)
            except SlotSchemaError as exc:
                problems.append(format_problem(where, exc.line, None, "slots", str(exc)))
                return None
    if slot_paths(value) is None and isinstance(value, list | dict):
        try:
            return SlotSchema.from_data(value, fuzzy=spec.fuzzy)
        except SlotSchemaError as exc:
            problems.append(format_problem(where, None, None, "slots", str(exc)))
            return None
    paths = _check_slots(value, where, None, "slots", problems)
    return None if paths is None else SlotSchema.from_paths(paths)


def _check_slots(
    value: object, where: str, line: int | None, field: str, problems: list[str]
) -> tuple[str, ...] | None:
    """``value`` as a list of distinct slot paths, or None after adding a problem line."""
    if isinstance(value, str) or not isinstance(value, Sequence | set | frozenset):
        problems.append(
            format_problem(where, line, None, field, "the slot schema is a list of paths")
        )
        return None
    slots = list(value)
    bad = [s for s in slots if not isinstance(s, str) or not s]
    if bad:
        problems.append(format_problem(where, line, None, field, f"not slot paths: {bad[:5]!r}"))
        return None
    dupes = sorted(s for s, n in Counter(slots).items() if n > 1)
    if dupes:
        problems.append(format_problem(where, line, None, field, f"duplicate slots: {dupes}"))
        return None
    return tuple(slots)
