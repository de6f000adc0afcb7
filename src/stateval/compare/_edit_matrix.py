"""The edit-operation matrix of a run: per field and pooled, how many fields of each expected
operation got each actual operation, the named errors, and three rates:

- **update propagation**: updates expected whose new value is right / updates expected;
- **staleness**: updates expected where the old value was kept / updates expected;
- **deletion success**: deletes expected that were made / deletes expected.

Counted case by case (`EditTally.add`), so a streamed run keeps counts only.

Example:
    >>> from stateval.compare._edits import field_edits
    >>> from stateval.state import InterpretiveState
    >>> pre = InterpretiveState.from_flat({"city": "Rome", "day": "mon"})
    >>> want = InterpretiveState.from_flat({"city": "Oslo"})
    >>> tally = EditTally()
    >>> tally.add(field_edits(pre, want, InterpretiveState.from_flat({"city": "Rome"})))
    >>> tally.add(field_edits(pre, want, InterpretiveState.from_flat({"city": "Oslo"})))
    >>> m = tally.result()
    >>> m.pooled.staleness_rate, m.pooled.update_propagation_rate, m.pooled.deletion_success
    (0.5, 0.5, 1.0)
    >>> m.pooled.errors
    {'stale': 1}
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stateval.compare._edits import CELLS, EditError, EditOp, FieldEdit
from stateval.compare._strict_case import EDIT_CODE_OPS, StrictCase
from stateval.compare._strict_shape import hold

__all__ = ["EDIT_OPS", "EditCounts", "EditMatrix", "EditTally"]

EDIT_OPS: tuple[EditOp, ...] = tuple(EditOp)
"""The operations, in matrix order (rows: expected, columns: actual)."""

_INDEX = {op: i for i, op in enumerate(EDIT_OPS)}
_ERRORS = tuple(EditError)
_ERROR_INDEX = {e: i for i, e in enumerate(_ERRORS)}
_N = len(EDIT_OPS)
_ERROR_AT = tuple(  # an edit code (`stateval.compare.StrictCase.edit_code`) -> its error's place
    None if not wrong or error is None else _ERROR_INDEX[error]
    for expected, actual, wrong in EDIT_CODE_OPS
    for error in (CELLS.get((expected, actual)),)
)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass(frozen=True, slots=True)
class EditCounts:
    """The matrix of one field (or pooled over fields).

    Attributes:
        cells: (expected, actual) -> fields with those operations.
        wrong: (expected, actual) -> those of them that are not right.
        errors: Error name -> count (only errors that occurred, in `EditError` order).
    """

    cells: Mapping[tuple[EditOp, EditOp], int]
    wrong: Mapping[tuple[EditOp, EditOp], int]
    errors: Mapping[str, int] = field(default_factory=dict)

    def expected(self, op: EditOp) -> int:
        """Fields whose expected operation is ``op``."""
        return sum(n for (e, _), n in self.cells.items() if e is op)

    def right(self, op: EditOp) -> int:
        """Fields whose expected operation is ``op`` and that are right."""
        return sum(n - self.wrong.get(k, 0) for k, n in self.cells.items() if k[0] is op)

    @property
    def n(self) -> int:
        """Fields counted."""
        return sum(self.cells.values())

    @property
    def n_errors(self) -> int:
        """Fields with an error."""
        return sum(self.errors.values())

    @property
    def update_propagation_rate(self) -> float | None:
        """Right updates over expected updates (None when none was expected)."""
        return _ratio(self.right(EditOp.UPDATE), self.expected(EditOp.UPDATE))

    @property
    def staleness_rate(self) -> float | None:
        """Stale fields over expected updates."""
        return _ratio(self.errors.get(EditError.STALE.value, 0), self.expected(EditOp.UPDATE))

    @property
    def deletion_success(self) -> float | None:
        """Deletes made over deletes expected."""
        return _ratio(self.right(EditOp.DELETE), self.expected(EditOp.DELETE))

    def rates(self) -> dict[str, float | None]:
        """The three rates by name."""
        return {
            "update_propagation_rate": self.update_propagation_rate,
            "staleness_rate": self.staleness_rate,
            "deletion_success": self.deletion_success,
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the matrix (expected -> actual -> count), right per expected
        operation, the errors and the rates."""
        return {
            "n": self.n,
            "matrix": {
                e.value: {
                    a.value: self.cells[(e, a)] for a in EDIT_OPS if self.cells.get((e, a), 0)
                }
                for e in EDIT_OPS
                if self.expected(e)
            },
            "expected": {e.value: self.expected(e) for e in EDIT_OPS if self.expected(e)},
            "right": {e.value: self.right(e) for e in EDIT_OPS if self.expected(e)},
            "errors": dict(self.errors),
            **self.rates(),
        }


@dataclass(frozen=True, slots=True)
class EditMatrix:
    """A run's edit-operation matrix.

    Attributes:
        n_cases: Cases counted (those whose mutator returned a state).
        pooled: Every field of every case.
        fields: Per field, most errors first.
    """

    n_cases: int
    pooled: EditCounts
    fields: Mapping[str, EditCounts]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``edits`` of the JSON report)."""
        return {
            "n_cases": self.n_cases,
            "pooled": self.pooled.to_dict(),
            "fields": {path: c.to_dict() for path, c in self.fields.items()},
        }


class _Counts:
    __slots__ = ("cells", "errors", "wrong")

    def __init__(self) -> None:
        self.cells = [0] * (_N * _N)
        self.wrong = [0] * (_N * _N)
        self.errors = [0] * len(_ERRORS)

    def merge(self, other: _Counts) -> None:
        self.cells = [a + b for a, b in zip(self.cells, other.cells, strict=True)]
        self.wrong = [a + b for a, b in zip(self.wrong, other.wrong, strict=True)]
        self.errors = [a + b for a, b in zip(self.errors, other.errors, strict=True)]

    def result(self) -> EditCounts:
        def cells(values: list[int]) -> dict[tuple[EditOp, EditOp], int]:
            return {
                (e, a): values[_INDEX[e] * _N + _INDEX[a]]
                for e in EDIT_OPS
                for a in EDIT_OPS
                if values[_INDEX[e] * _N + _INDEX[a]]
            }

        errors = {e.value: n for e, n in zip(_ERRORS, self.errors, strict=True) if n}
        return EditCounts(cells(self.cells), cells(self.wrong), errors)


class EditTally:
    """Counts `FieldEdit`s case by case; `result` gives the `EditMatrix` at any time."""

    def __init__(self) -> None:
        self.n_cases = 0
        self._pooled = _Counts()
        self._fields: dict[str, _Counts] = {}
        self._pending: dict[Hashable, list[Any]] = {}  # a shape's edits -> [cases, the shape]

    def __getstate__(self) -> dict[str, object]:
        self._flush()  # pickled (a worker's counts) as counts
        return self.__dict__

    def add_strict(self, case: StrictCase) -> None:
        """Count the field edits of a case `stateval.compare.strict_case` decided (its
        ``edit_paths`` and ``edit_code``), as `add` counts them: counted later, once per
        shape (`stateval.compare.StrictCase.shape`)."""
        self.n_cases += 1
        shape = case.shape
        hold(
            self._pending,
            shape.edits_key,
            shape,
            shape.edit_paths,
            self._fields,
            _Counts,
            self._flush,
        )

    def _flush(self) -> None:
        pooled, fields, errors = self._pooled, self._fields, _ERROR_AT
        for n, shape in self._pending.values():
            for path, code in zip(shape.edit_paths, shape.edit_code, strict=True):
                counts = fields[path]
                cell = code >> 1
                counts.cells[cell] += n
                pooled.cells[cell] += n
                at = errors[code]
                if at is not None:
                    counts.wrong[cell] += n
                    pooled.wrong[cell] += n
                    counts.errors[at] += n
                    pooled.errors[at] += n
        self._pending.clear()

    def add(self, edits: Iterable[FieldEdit]) -> None:
        """Count one case's field edits."""
        self.n_cases += 1
        pooled, fields = self._pooled, self._fields
        for edit in edits:
            counts = fields.get(edit.path)
            if counts is None:
                counts = fields[edit.path] = _Counts()
            cell = _INDEX[edit.expected] * _N + _INDEX[edit.actual]
            counts.cells[cell] += 1
            pooled.cells[cell] += 1
            if edit.error is not None:
                counts.wrong[cell] += 1
                pooled.wrong[cell] += 1
                at = _ERROR_INDEX[edit.error]
                counts.errors[at] += 1
                pooled.errors[at] += 1

    def merge(self, other: EditTally) -> None:
        """Add the counts of ``other`` (another shard's cases, say)."""
        self._flush()
        other._flush()
        self.n_cases += other.n_cases
        self._pooled.merge(other._pooled)
        for path, counts in other._fields.items():
            mine = self._fields.get(path)
            if mine is None:
                mine = self._fields[path] = _Counts()
            mine.merge(counts)

    def result(self) -> EditMatrix:
        """The matrix of every case added so far."""
        self._flush()
        fields = {path: c.result() for path, c in self._fields.items()}
        ordered = dict(sorted(fields.items(), key=lambda kv: (-kv[1].n_errors, kv[0])))
        return EditMatrix(self.n_cases, self._pooled.result(), ordered)
