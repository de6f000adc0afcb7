"""What a case decided as columns (`stateval.compare.StrictCase`) is made of but its values:
its paths and its fields' codes, and what a run reads off them (statuses, counts, edits, kept
and right fields). A run's cases mostly show a few such shapes, so each is made once
(`shape_of`) and shared, and the tallies hold their cases by a shape's keys (`hold`), which
name a set of paths by a number (`paths_id`) instead of hashing its paths case by case.

Codes: a field's is ``edit * 4 + kept * 2 + right``; a status is its place in `STATUSES`; an
edit is ``(expected * 5 + actual) * 2 + wrong``, the operations by their place in
`stateval.compare.EDIT_OPS` (the edit matrix's cell, then whether the field is wrong).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, MutableMapping
from itertools import compress, count
from typing import Any, TypeVar

from stateval.compare._comparison import FieldStatus
from stateval.compare._edits import EditOp

_T = TypeVar("_T")

__all__ = ["HELD", "SHAPES", "STATUSES", "Shape", "hold", "paths_id", "shape_of"]

STATUSES: tuple[FieldStatus, ...] = (
    FieldStatus.MATCHING,
    FieldStatus.MISMATCHED,
    FieldStatus.MISSING,
    FieldStatus.EXTRA,
)
"""The statuses by their code in `Shape.statuses_code`."""

OPS = tuple(EditOp)  # the edit matrix's order (EDIT_OPS)
KEEP, ADD, UPDATE, DELETE, NONE = (OPS.index(op) for op in EditOp)
MATCHING, MISMATCHED, MISSING, EXTRA = range(4)


def _table(part: Callable[[int, int, int], int]) -> bytes:
    return bytes(
        part(code >> 2, code >> 1 & 1, code & 1) if code < 200 else 0 for code in range(256)
    )


def _status(edit: int) -> int:
    if not edit % 2:
        return MATCHING
    return MISSING if edit // 2 % 5 in (DELETE, NONE) else MISMATCHED


_STATUS_OF = _table(lambda edit, kept, right: _status(edit))
_EDIT_OF = _table(lambda edit, kept, right: edit)
KEPT_OF = _table(lambda edit, kept, right: kept)
_KEPT_MATCHING = _table(lambda edit, kept, right: kept and not edit % 2)
RIGHT_OF = _table(lambda edit, kept, right: right)
_ADDED = _table(lambda edit, kept, right: edit // 10 == ADD)  # the pre-state lacks it
_HELD = bytes(code != MISSING for code in range(256))  # a status -> the actual state holds it
_DELETED = ((DELETE * 5 + DELETE) * 2).to_bytes()  # a pre-state path dropped as expected
_HALLUCINATED = ((NONE * 5 + ADD) * 2 + 1).to_bytes()
_MISSED_DELETE = {
    False: ((DELETE * 5 + UPDATE) * 2 + 1).to_bytes(),
    True: ((DELETE * 5 + KEEP) * 2 + 1).to_bytes(),
}

PATH_SETS = 4096
"""Distinct sets of paths numbered at a time (then numbered again, by new numbers)."""
_IDS: dict[tuple[str, ...], int] = {}
_NEXT = count()


def paths_id(paths: tuple[str, ...]) -> int:
    """A number naming ``paths`` (in their order) in this process: two calls give equal
    numbers only for equal paths (the same paths may be numbered anew later)."""
    found = _IDS.get(paths)
    if found is None:
        if len(_IDS) >= PATH_SETS:
            _IDS.clear()
        found = _IDS[paths] = next(_NEXT)
    return found


class Shape:
    """A `StrictCase`'s columns but for its values and confidence: its paths, its fields'
    codes (status, kept, right) and its edits, and what is read off them. Made once per
    distinct one (`shape_of`) and shared by the cases that show it.

    Attributes:
        paths: The compared paths (`StrictCase.paths`).
        n_expected: How many of `paths` are expected ones.
        codes: Each expected path's code (see the module docstring).
        statuses_code: Each compared path's status, as its place in `STATUSES`.
        counts: ``(matching, mismatched, missing, extra)``.
        accuracy: The case's ``state_accuracy`` (`stateval.compare.view_accuracy`).
        edit_paths: The paths of the field edits (`StrictCase.edit_paths`).
        edit_code: Each field edit's code.
        dropped: The pre-state's paths the expected state lacks.
        n_held: How many expected paths the actual state holds.
        n_pre: How many expected paths the pre-state holds.
        statuses_key: Equal for two shapes of the same paths and statuses (a run's metrics
            hold their cases by it).
        edits_key: Equal for two shapes of the same edits (the edit matrix's key).
    """

    __slots__ = (
        "_kept",
        "_statuses",
        "_values",
        "accuracy",
        "codes",
        "counts",
        "dropped",
        "edit_code",
        "edit_paths",
        "edits_key",
        "n_expected",
        "n_held",
        "n_pre",
        "paths",
        "statuses_code",
        "statuses_key",
    )

    def __init__(
        self,
        keys: tuple[str, ...],
        codes: bytes,
        status: bytes,
        extra: tuple[str, ...],
        dropped: tuple[str, ...],
        edits: tuple[int, tuple[str, ...], bytes],
        n_pre: int,
        ids: int,
    ) -> None:
        missing = status.count(MISSING)
        self.paths = keys + extra
        self.n_expected = len(keys)
        self.codes = codes
        self.statuses_code = status + bytes([EXTRA]) * len(extra) if extra else status
        self.statuses_key = (ids, self.statuses_code)
        matching, expected = status.count(MATCHING), len(keys)
        self.counts = (matching, expected - matching - missing, missing, len(extra))
        # `stateval.compare.view_accuracy` of its comparison: matching / expected fields, 0.0
        # of extra fields alone, None of no field (the empty turn)
        self.accuracy = matching / expected if expected else 0.0 if extra else None
        edits_id, self.edit_paths, self.edit_code = edits
        self.edits_key = (edits_id, self.edit_code)
        self.dropped = dropped
        self.n_held = len(keys) - missing
        self.n_pre = n_pre
        self._statuses: tuple[FieldStatus, ...] | None = None
        self._kept: tuple[int, int] | None = None
        self._values: tuple[tuple[str, ...], bytes] | None = None

    @property
    def statuses(self) -> tuple[FieldStatus, ...]:
        """Each compared path's status."""
        made = self._statuses
        if made is None:
            made = self._statuses = tuple(map(STATUSES.__getitem__, self.statuses_code))
        return made

    @property
    def kept_counts(self) -> tuple[int, int]:
        """`StrictCase.kept_counts`."""
        made = self._kept
        if made is None:
            codes = self.codes
            kept = codes.translate(KEPT_OF).count(1)
            made = self._kept = (kept, codes.translate(_KEPT_MATCHING).count(1))
        return made

    @property
    def value_columns(self) -> tuple[tuple[str, ...], bytes]:
        """`StrictCase.value_columns`."""
        made = self._values
        if made is None:
            paths = self.paths
            right = self.codes.translate(RIGHT_OF) + bytes(len(paths) - self.n_expected)
            if self.counts[2]:
                held = self.statuses_code.translate(_HELD)
                made = (tuple(compress(paths, held)), bytes(compress(right, held)))
            else:
                made = (paths, right)
            self._values = made
        return made


SHAPES = 1024
"""Distinct shapes held to be shared (then they are made again)."""
_SHAPES: dict[tuple[object, ...], Shape] = {}


def shape_of(
    keys: tuple[str, ...],
    codes: bytes,
    values: tuple[Mapping[str, str], Mapping[str, str], Mapping[str, str]],
) -> Shape:
    """The shape of a case of expected paths ``keys`` whose fields' codes are ``codes``
    (``values``: its pre-state's, expected and actual values), shared while held."""
    p, e, a = values
    ids = paths_id(keys)
    shape = _SHAPES.get((ids, codes))
    # the actual (pre-) state holds other paths when it holds more than the expected ones
    if shape is not None and len(a) == shape.n_held and len(p) == shape.n_pre:
        return shape
    n = len(keys)
    status = codes.translate(_STATUS_OF)
    extra = () if len(a) == n - status.count(MISSING) else tuple(x for x in a if x not in e)
    n_pre = n - codes.translate(_ADDED).count(1)  # the pre-state lacks the others
    dropped = () if len(p) == n_pre else tuple(x for x in p if x not in e)
    edits = (ids, keys, codes.translate(_EDIT_OF))
    key: tuple[object, ...] = (ids, codes)
    if dropped or extra:
        hallucinated = tuple(x for x in extra if x not in p)
        edit_paths = keys + dropped + hallucinated
        edit_code = b"".join(
            (
                edits[2],
                *(_DELETED if x not in a else _MISSED_DELETE[a[x] == p[x]] for x in dropped),
                _HALLUCINATED * len(hallucinated),
            )
        )
        edits = (paths_id(edit_paths), edit_paths, edit_code)
        ids = paths_id(keys + extra)
        key = (ids, edits[0], codes, edit_code)
        shape = _SHAPES.get(key)
        if shape is not None:
            return shape
    if len(_SHAPES) >= SHAPES:
        _SHAPES.clear()
    shape = _SHAPES[key] = Shape(keys, codes, status, extra, dropped, edits, n_pre, ids)
    return shape


HELD = 512
"""Distinct shapes a tally holds before counting their fields (`hold`)."""


def hold(
    held: dict[Hashable, list[Any]],
    key: Hashable,
    shape: Shape,
    paths: tuple[str, ...],
    fields: MutableMapping[str, _T],
    make: Callable[[], _T],
    flush: Callable[[], None],
) -> None:
    """Hold one case of ``shape`` in a tally's ``held`` cases (``key``: its `Shape.statuses_key`
    or `Shape.edits_key`, ``paths``: the paths the tally counts), to be counted by ``flush``
    once per key (``held``: key -> ``[cases, a shape]``): ``flush`` first when `HELD` keys are
    held (memory stays bounded); the counts of a path seen for the first time made now
    (``make``), so ``fields`` keeps the order the cases show them in."""
    seen = held.get(key)
    if seen is not None:
        seen[0] += 1
        return
    if len(held) >= HELD:
        flush()
    for path in paths:
        if path not in fields:
            fields[path] = make()
    held[key] = [1, shape]
