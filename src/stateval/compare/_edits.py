"""Edit operations: what kind of update a mutator was asked to make to each field, what it made,
and the named error when the two differ.

A mutator's job is an update: from the pre-state it was given, keep, add, change or delete each
field. For each field, the *expected operation* goes from the pre-state to the expected state
and the *actual operation* from the pre-state to the actual state (`EditOp`):

======== ======================================================================================
keep     the field is in both states with the same value (under the field's policy, values only:
         a confidence that moved is not an update)
add      only the later state holds it
update   both hold it and the value differs
delete   only the pre-state holds it
none     neither holds it (the expected side of a hallucinated add; the actual side of a missed
         add)
======== ======================================================================================

Each (expected, actual) cell either is right or names an error (`EditError`, `CELLS`): **stale**
(an update expected, the old value kept), **wrong update** / **wrong add** (the right operation,
a wrong value), **clobber** (a keep expected, the value changed), **hallucinated add**, **missed
add**, **missed delete** (a delete expected, the value kept or changed), **spurious delete** (a
keep or update expected, the field deleted). In the cells where the actual state holds a value,
the case's comparison decides whether it is right (so an LLM judge's verdict holds): a matching
field is never an error.

Example:
    >>> from stateval.state import InterpretiveState
    >>> pre = InterpretiveState.from_flat({"city": "Rome", "day": "mon", "old": 1})
    >>> want = InterpretiveState.from_flat({"city": "Oslo", "day": "mon"})
    >>> got = InterpretiveState.from_flat({"city": "Rome", "day": "tue", "old": 1})
    >>> for e in field_edits(pre, want, got):
    ...     print(e.path, e.expected.value, e.actual.value, e.error and e.error.value)
    city update keep stale
    day keep update clobber
    old delete keep missed_delete
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from itertools import compress
from typing import Any

from stateval.compare._comparison import FieldStatus, StateComparison
from stateval.compare._field_policies import IGNORED, FieldPolicies
from stateval.compare._match import match_values
from stateval.compare._policy import MatchPolicy
from stateval.state import InterpretiveState

__all__ = [
    "CELLS",
    "SCORED_OPS",
    "EditError",
    "EditOp",
    "FieldEdit",
    "field_edits",
    "op_counts",
    "op_explanation",
]


class EditOp(StrEnum):
    """What happened to a field between the pre-state and a later state."""

    KEEP = "keep"
    ADD = "add"
    UPDATE = "update"
    DELETE = "delete"
    NONE = "none"


class EditError(StrEnum):
    """The named ways an update goes wrong."""

    STALE = "stale"
    WRONG_UPDATE = "wrong_update"
    WRONG_ADD = "wrong_add"
    CLOBBER = "clobber"
    HALLUCINATED_ADD = "hallucinated_add"
    MISSED_ADD = "missed_add"
    MISSED_DELETE = "missed_delete"
    SPURIOUS_DELETE = "spurious_delete"


_K, _A, _U, _D, _N = EditOp.KEEP, EditOp.ADD, EditOp.UPDATE, EditOp.DELETE, EditOp.NONE

CELLS: dict[tuple[EditOp, EditOp], EditError | None] = {
    (_K, _K): EditError.CLOBBER,  # only when the comparison says it does not match
    (_K, _U): EditError.CLOBBER,
    (_K, _D): EditError.SPURIOUS_DELETE,
    (_A, _A): EditError.WRONG_ADD,
    (_A, _N): EditError.MISSED_ADD,
    (_U, _K): EditError.STALE,
    (_U, _U): EditError.WRONG_UPDATE,
    (_U, _D): EditError.SPURIOUS_DELETE,
    (_D, _K): EditError.MISSED_DELETE,
    (_D, _U): EditError.MISSED_DELETE,
    (_D, _D): None,
    (_N, _A): EditError.HALLUCINATED_ADD,
}
"""(expected, actual) -> the error of a field whose actual value does not match (every cell
the pre-state allows)."""


@dataclass(frozen=True, slots=True)
class FieldEdit:
    """One field of one case.

    Attributes:
        path: The field.
        expected: The operation the case expects.
        actual: The operation the mutator made.
        error: The named error, or None when the field is right.
    """

    path: str
    expected: EditOp
    actual: EditOp
    error: EditError | None


_ABSENT: Any = object()


def _op(policy: MatchPolicy, strict: bool, before: Any, after: Any) -> EditOp:
    if before is _ABSENT:
        return _N if after is _ABSENT else _A
    if after is _ABSENT:
        return _D
    if type(after) is type(before) and after == before and policy.list_mode != "any_of":
        return _K  # the same value matches itself under every policy but alternatives
    if strict and after.__class__ is str and before.__class__ is str:
        return _U  # two different strings under plain JSON equality
    return _K if match_values(policy, after, before).matched else _U


def _values(state: InterpretiveState) -> Mapping[str, Any]:
    flat = state.flat_values
    return flat.values if flat is not None else state.to_flat()


def field_edits(
    pre: InterpretiveState,
    expected: InterpretiveState,
    actual: InterpretiveState,
    policies: FieldPolicies | MatchPolicy | None = None,
    comparison: StateComparison | None = None,
) -> tuple[FieldEdit, ...]:
    """Every field's expected and actual operation and its error (see the module docstring).

    Args:
        pre: The state the mutator was given.
        expected: The expected post-state.
        actual: The post-state it returned.
        policies: How each field's values are compared (fields a policy ignores are left out).
        comparison: The case's comparison of ``expected`` with ``actual``, whose verdicts
            decide whether a held value is right (made here when not given).
    """
    resolved = FieldPolicies.of(policies)
    before, want, got = _values(pre), _values(expected), _values(actual)
    # the comparison's verdicts by path, read once (not a lookup per field)
    matching = (
        None
        if comparison is None
        else set(compress(comparison.paths, map(FieldStatus.MATCHING.__eq__, comparison.statuses)))
    )
    out: list[FieldEdit] = []
    paths = list(want)
    if not before.keys() <= want.keys():
        paths += [p for p in before if p not in want]
    if not got.keys() <= want.keys():
        paths += [p for p in got if p not in want and p not in before]
    plan = resolved.plan
    # every path takes the default policy when no pattern is set: resolved once
    uniform = plan(paths[0]) if paths and resolved.uniform_mode is not None else None
    if uniform is not None and uniform[1] is IGNORED:
        return ()
    strict = any_of = False
    if uniform is not None:
        policy = uniform[0]
        strict, any_of = policy.is_strict, policy.list_mode == "any_of"
    for path in paths:
        if uniform is None:
            policy, mode = plan(path)
            if mode is IGNORED:
                continue
            strict, any_of = policy.is_strict, policy.list_mode == "any_of"
        p = before.get(path, _ABSENT)
        e = want.get(path, _ABSENT)
        a = got.get(path, _ABSENT)
        if (  # kept, as it should be: the common case, without the policy
            p is not _ABSENT
            and type(p) is type(e) is type(a)
            and p == e == a
            and not any_of
            and (matching is None or path in matching)
        ):
            out.append(_edit(path, _K, _K, None))
            continue
        exp, act = _op(policy, strict, p, e), _op(policy, strict, p, a)
        if e is _ABSENT and a is _ABSENT:
            right = True
        elif e is _ABSENT or a is _ABSENT:
            right = False
        elif matching is not None:
            right = path in matching
        else:
            right = match_values(policy, e, a).matched
        out.append(_edit(path, exp, act, None if right else CELLS[(exp, act)]))
    return tuple(out)


@lru_cache(maxsize=8192)
def _edit(path: str, expected: EditOp, actual: EditOp, error: EditError | None) -> FieldEdit:
    """One field edit (the same for every case that makes it: shared)."""
    return FieldEdit(path, expected, actual, error)


#: The expected operations a case-level ``op:<op>`` evaluation scores.
SCORED_OPS: tuple[EditOp, ...] = (EditOp.KEEP, EditOp.ADD, EditOp.UPDATE, EditOp.DELETE)

_OP_COUNTS = re.compile(r"^(\d+) of (\d+) right")
_ERROR_COUNTS = re.compile(r"(?:^|; )([a-z_]+) (\d+):")
_SHOWN = 5


def op_explanation(op: EditOp, edits: Sequence[FieldEdit]) -> str:
    """The explanation of the ``op:<op>`` evaluation of a case's ``edits`` of that expected
    operation: ``2 of 3 right; stale 1: hotel.area`` (read back by `op_counts`)."""
    right = sum(e.error is None for e in edits)
    parts = [f"{right} of {len(edits)} right ({op.value})"]
    by_error: dict[str, list[str]] = {}
    for e in edits:
        if e.error is not None:
            by_error.setdefault(e.error.value, []).append(e.path)
    for name, paths in by_error.items():
        shown = ", ".join(paths[:_SHOWN]) + (
            f" (+{len(paths) - _SHOWN} more)" if len(paths) > _SHOWN else ""
        )
        parts.append(f"{name} {len(paths)}: {shown}")
    return "; ".join(parts)


def op_counts(explanation: str | None) -> tuple[int, int, dict[str, int]] | None:
    """``(right, n, {error: count})`` of an ``op:<op>`` evaluation, read from its explanation
    (`op_explanation` writes it), or None.

    >>> op_counts("1 of 3 right (update); stale 1: a; wrong_update 1: b")
    (1, 3, {'stale': 1, 'wrong_update': 1})
    """
    found = None if explanation is None else _OP_COUNTS.match(explanation)
    if found is None:
        return None
    assert explanation is not None
    errors = {m[1]: int(m[2]) for m in _ERROR_COUNTS.finditer(explanation)}
    return int(found[1]), int(found[2]), errors
