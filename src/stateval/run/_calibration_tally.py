"""A run's calibration tally: the mutator's values kept as compact columns, not as samples
(`RunTally` counts each case's value outcomes here; `CalibrationTally.merge` adds a worker
shard's)."""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

from stateval.calibration import CalibrationReport, calibrate_grouped
from stateval.compare import StateComparison, StrictCase

if TYPE_CHECKING:
    import numpy as np

__all__ = ["CalibrationTally"]

_CODED = 256  # distinct values' paths whose codes are kept made (`CalibrationTally.add_strict`)


class CalibrationTally:
    """The mutator's values for calibration, kept as compact columns (a confidence, a
    correctness byte, the case's place in the plan and a code of the value's path, per value);
    read back per field and pooled in plan order, so the figures (ties in equal-mass bins and
    triage included) do not depend on the order cases finished in."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}  # path -> its code, in order of first sight
        self._pooled = _Values()
        self._missing: dict[str, int] = {}
        # made once: a few strict cases' values' codes (by their shape's statuses), and
        # columns of one confidence
        self._coded: dict[Hashable, array[int]] = {}
        self._confidences: dict[tuple[float, int], array[float]] = {}

    def __getstate__(self) -> dict[str, Any]:
        # pickled (a worker's counts) without what is made once
        return {**self.__dict__, "_coded": {}, "_confidences": {}}

    def add(self, comparison: StateComparison, index: int) -> None:
        """Count the values of a case's comparison; ``index``: its place in the plan."""
        paths, confidences, right = comparison.value_columns()
        if paths:
            self._pooled.extend(confidences, right, self._codes_of(paths), index)
        if comparison.counts["missing"]:
            self._count_missing(comparison)

    def add_strict(self, case: StrictCase, index: int) -> None:
        """`add` of a case `stateval.compare.strict_case` decided (read off its columns)."""
        shape = case.shape
        paths, right = shape.value_columns
        if paths:  # the same paths' codes again, and one confidence: copied as arrays
            key = shape.statuses_key  # its paths and statuses: the paths of its values
            coded = self._coded.get(key)
            if coded is None:
                if len(self._coded) >= _CODED:
                    self._coded.clear()
                coded = self._coded[key] = array("l", self._codes_of(paths))
            confidence, n = case.confidence, len(paths)
            confidences = self._confidences.get((confidence, n))
            if confidences is None:
                confidences = array("d", (confidence,)) * n
                if confidence > 0.0:  # as a key: not 0.0 (equal to -0.0) nor NaN
                    if len(self._confidences) >= _CODED:
                        self._confidences.clear()
                    self._confidences[confidence, n] = confidences
            self._pooled.extend(confidences, right, coded, index)
        if shape.counts[2]:
            self._count_missing(case.comparison)

    def _codes_of(self, paths: Sequence[str]) -> list[int]:
        codes = self._codes
        try:
            return list(map(codes.__getitem__, paths))
        except KeyError:  # a path seen for the first time
            return [codes.setdefault(p, len(codes)) for p in paths]

    def _count_missing(self, comparison: StateComparison) -> None:
        missing = self._missing
        for path in comparison.missing:
            missing[path] = missing.get(path, 0) + 1

    def merge(self, other: CalibrationTally, positions: Sequence[int]) -> None:
        """Add ``other``'s values, their places mapped through ``positions``."""
        import numpy as np

        where = np.asarray(positions, dtype=np.int64)
        mine = self._codes
        codes = [mine.setdefault(path, len(mine)) for path in other._codes]  # theirs -> mine
        self._pooled.merge(other._pooled, where, codes)
        for path, n in other._missing.items():
            self._missing[path] = self._missing.get(path, 0) + n

    def report(self) -> CalibrationReport:
        import numpy as np

        confidence, right, codes = self._pooled.in_plan_order()
        values: dict[str, tuple[Any, Any]] = {}
        if codes is not None:
            # each path's values stay in plan order (a stable sort: 16-bit codes sort by radix)
            small = codes.astype(np.uint16) if len(self._codes) <= 1 << 16 else codes
            by_code = np.argsort(small, kind="stable")
            ends = np.cumsum(np.bincount(codes, minlength=len(self._codes))).tolist()
            per_confidence = np.split(confidence[by_code], ends[:-1])
            per_right = np.split(right[by_code], ends[:-1])
            for path, code in self._codes.items():
                if len(per_confidence[code]):  # as arrays: no Python object per value
                    values[path] = (per_confidence[code], per_right[code])
        pooled: tuple[Any, Any] = ([], []) if codes is None else (confidence, right)
        return calibrate_grouped(values, self._missing, pooled)


class _Values:
    """The values' columns (a confidence, a correctness byte and a path code per value) and,
    per case, its place in the plan and how many values it added (not a place per value)."""

    __slots__ = ("code", "confidence", "index", "n", "right")

    def __init__(self) -> None:
        self.confidence = array("d")
        self.right = bytearray()
        self.code = array("l")
        self.index = array("q")  # per case: its place in the plan
        self.n = array("q")  # per case: its values

    def extend(
        self,
        confidences: Sequence[float],
        right: Sequence[bool] | bytes,
        codes: Sequence[int],
        index: int,
    ) -> None:
        self.confidence.extend(confidences)
        self.right.extend(right)
        self.code.extend(codes)
        self.index.append(index)
        self.n.append(len(codes))

    def merge(self, other: _Values, where: np.ndarray[Any, Any], codes: Sequence[int]) -> None:
        """Add ``other``'s values: each case's place ``i`` becoming ``where[i]``, each path
        code ``c`` becoming ``codes[c]``."""
        import numpy as np

        if not other.index:
            return
        index = np.frombuffer(other.index, dtype=np.int64)
        self.confidence.extend(other.confidence)
        self.right.extend(other.right)
        self.index.frombytes(where[index].astype(np.int64).tobytes())
        self.n.extend(other.n)
        code = np.asarray(codes, dtype=np.int64)[np.asarray(other.code, dtype=np.int64)]
        self.code.frombytes(code.astype(f"i{self.code.itemsize}").tobytes())  # not a list

    def in_plan_order(self) -> tuple[Any, Any, Any]:
        """The confidences, correctness flags and path codes (numpy arrays; None for each
        when empty) by their case's place in the plan (a case's own in the order given)."""
        import numpy as np

        if not self.code:
            return None, None, None
        index = np.frombuffer(self.index, dtype=np.int64)
        n = np.frombuffer(self.n, dtype=np.int64)
        confidence = np.frombuffer(self.confidence, dtype=np.float64)
        right = np.frombuffer(bytes(self.right), dtype=np.uint8) != 0
        codes = np.asarray(self.code, dtype=np.int64)
        if (index[1:] < index[:-1]).any():  # else the cases came in plan order
            # the cases sorted (stably), each one's values kept together in their order: the
            # stable sort of every value by its case's place, without sorting every value
            by_case = np.argsort(index, kind="stable")
            counts = n[by_case]
            starts = (np.cumsum(n) - n)[by_case]
            moved = starts - (np.cumsum(counts) - counts)
            order = np.repeat(moved, counts) + np.arange(int(counts.sum()))
            confidence, right, codes = confidence[order], right[order], codes[order]
        return confidence, right, codes
