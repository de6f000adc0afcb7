"""The stateval wire format: how states travel through Phoenix and evaluation datasets.

A Phoenix dataset example for one case has::

    input    = {"case_id": str, "pre_state": <state dict>, "input": {"prompt", "message_id", ...}}
    output   = {"post_state": <state dict>}           # the expected post-state
    metadata = <the case metadata>

and the task returns ``{"post_state": <state dict> | None, "error": str | None}``. A *state dict* is
`InterpretiveState.to_dict` (``{"fields": {path: [candidate, ...]}}``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stateval.errors import StateError
from stateval.state import FlatValues, InterpretiveState

__all__ = ["coerce_state", "pre_state_of", "task_error", "task_output"]


def coerce_state(value: object, *, what: str = "state") -> InterpretiveState:
    """Read an `InterpretiveState` from any of the shapes a state takes.

    Accepts an `InterpretiveState`; its candidate form ``{"fields": {path: [{"value",
    "confidence"}, ...]}}``; a flat ``{"hotel.area": "north"}`` or nested ``{"hotel": {"area":
    "north"}}`` object of plain values (confidence 1.0; an object value is read as nested
    fields, so pass object-valued fields in the candidate form); a wrapper ``{"post_state":
    ...}`` around any of these; or a JSON string of any of those.

    Args:
        value: The thing to read.
        what: What it is (``"output"``, ``"expected"``...), named in the error.

    Raises:
        StateError: ``value`` is none of those shapes, or the state inside is invalid.
    """
    if isinstance(value, InterpretiveState):
        return value
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise StateError(f"{what}: not a state (JSON does not parse: {exc.msg})") from exc
        return coerce_state(value, what=what)
    if isinstance(value, Mapping):
        if "post_state" in value:
            inner = value["post_state"]
            if inner is None:
                raise StateError(f"{what}: post_state is null")
            return coerce_state(inner, what=what)
        if "fields" in value or "_fields" in value:
            # ``_fields`` is how pydantic dumps an `InterpretiveState` dataclass; Phoenix's
            # `create_evaluator` validates and dumps its inputs with pydantic, so a state object
            # put in a DataFrame reaches the evaluator in that shape.
            flat = value.get("_flat")
            if isinstance(flat, FlatValues):  # a state still in its compact form, dumped
                values, confidence = dict(flat.values), flat.confidence
                return InterpretiveState.from_flat(values, confidence, flat.message_id)
            data = value if "fields" in value else {"fields": _dumped_fields(value["_fields"])}
            try:
                return InterpretiveState.from_dict(data)
            except StateError as exc:
                raise StateError(f"{what}: {exc}") from exc
        try:
            return InterpretiveState.from_nested(value)
        except StateError as exc:
            raise StateError(f"{what}: not a flat or nested state ({exc}); {_SHAPES}") from exc
    raise StateError(f"{what}: a {type(value).__name__} is not a state; {_SHAPES}")


_SHAPES = (
    'expected a flat {"path": value} or nested {"a": {"b": value}} object, the candidate '
    'form {"fields": {path: [{"value", "confidence"}]}}, or {"post_state": <one of those>}'
)


def _dumped_fields(fields: object) -> object:
    if not isinstance(fields, Mapping):
        return fields
    return {
        path: [
            {k: v for k, v in c.items() if v is not None or k == "value"}
            if isinstance(c, Mapping)
            else c
            for c in candidates
        ]
        if isinstance(candidates, list)
        else candidates
        for path, candidates in fields.items()
    }


def task_error(output: object) -> str | None:
    """The error a task output reports (``{"error": "..."}``), or None when it reports none."""
    if isinstance(output, str | bytes):
        try:
            output = json.loads(output)
        except json.JSONDecodeError:
            return None
    if isinstance(output, Mapping):
        error = output.get("error")
        if error:
            return str(error)
    return None


def pre_state_of(input: object) -> InterpretiveState:
    """The pre-state of a case from the example input ``{"pre_state": ...}``.

    An input without ``pre_state`` (or with a null one) means the empty state.

    Raises:
        StateError: ``pre_state`` is present but is not a state.
    """
    if isinstance(input, str | bytes):
        try:
            input = json.loads(input)
        except json.JSONDecodeError as exc:
            raise StateError(f"input: JSON does not parse: {exc.msg}") from exc
    if isinstance(input, InterpretiveState):
        return input
    if not isinstance(input, Mapping):
        raise StateError(f"input: a {type(input).__name__} has no pre_state")
    pre = input.get("pre_state")
    if pre is None:
        return InterpretiveState()
    return coerce_state(pre, what="input.pre_state")


def task_output(
    post_state: InterpretiveState | None = None, error: str | BaseException | None = None
) -> dict[str, Any]:
    """The task output a stateval experiment task returns to Phoenix.

    Args:
        post_state: The mutator's post-state, or None when it failed.
        error: What went wrong (an exception is rendered as ``Type: message``).
    """
    if isinstance(error, BaseException):
        error = f"{type(error).__name__}: {error}"
    return {
        "post_state": None if post_state is None else post_state.to_dict(),
        "error": error,
    }
