"""One case's fields under one strict policy, decided in one pass as byte columns.

When the pre-state, the expected state and the actual state are flat states of strings (see
`stateval.state.FlatValues`) and one strict policy compares every path (the seed rule, or it
with confidence ignored), everything a run reads of a field follows from three string
equalities (expected = actual, expected = pre, actual = pre) and two case-wide confidence
tests: its status (`compare_states`), whether the case expects it kept (`split_delta`), its
expected and actual edit operations and error (`field_edits`), and whether its value is right
(`StateComparison.value_columns`). `strict_case` decides them together, each expected path once,
by C-level maps into one byte per field, so a run's comparison, delta split, edits, tallies and
compact scores are read off the same columns instead of being decided again or made as objects
per field. Anything else (values other than strings, candidates, several policies, a judge)
takes the general path; a property test holds the two equal. What the columns give is made
once per distinct case and shared (`stateval.compare.Shape`, where the codes are told).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import compress

from stateval.compare._comparison import (
    FieldComparison,
    FieldStatus,
    StateComparison,
)
from stateval.compare._delta import DeltaComparison, delta_of
from stateval.compare._edits import CELLS, EditOp, FieldEdit
from stateval.compare._edits import _edit as shared_edit
from stateval.compare._field_policies import STRICT, STRICT_VALUE, FieldPolicies
from stateval.compare._policy import MatchPolicy
from stateval.compare._strict_shape import (
    ADD,
    DELETE,
    EXTRA,
    KEEP,
    KEPT_OF,
    MISSING,
    NONE,
    OPS,
    RIGHT_OF,
    STATUSES,
    UPDATE,
    Shape,
    shape_of,
)
from stateval.state import InterpretiveState

__all__ = ["EDIT_CODE_OPS", "StrictCase", "strict_case"]

EDIT_CODE_OPS: tuple[tuple[EditOp, EditOp, bool], ...] = tuple(
    (OPS[code // 10], OPS[code // 2 % 5], bool(code % 2)) for code in range(50)
)
"""An edit code -> ``(expected operation, actual operation, wrong)``."""


def _field_code(
    a_absent: bool, p_absent: bool, ea: bool, ep: bool, ap: bool, same_ea: bool, same_ep: bool
) -> int:
    """The code of one expected path: ``edit * 4 + kept * 2 + right`` (`right`: its value is
    right, for calibration), from which of the pre-state and the actual state hold it, the
    three equalities and whether the confidences agree (expected-actual, expected-pre)."""
    expected = ADD if p_absent else KEEP if ep else UPDATE
    if a_absent:
        actual = NONE if p_absent else DELETE
    else:
        actual = ADD if p_absent else KEEP if ap else UPDATE
    right = not a_absent and ea
    wrong = not (right and same_ea)
    kept = not p_absent and ep and same_ep
    return ((expected * 5 + actual) * 2 + wrong) * 4 + kept * 2 + right


_TABLES = {
    (same_ea, same_ep): {
        (a, p, ea, ep, ap): _field_code(a, p, ea, ep, ap, same_ea, same_ep)
        for a in (False, True)
        for p in (False, True)
        for ea in (False, True)
        for ep in (False, True)
        for ap in (False, True)
    }
    for same_ea in (False, True)
    for same_ep in (False, True)
}
"""(confidences agree expected-actual, expected-pre) -> the five tests -> a field's code."""
_RIGHT = {
    same: tuple(
        table[(False, p_absent, True, ep, ep)]
        for p_absent, ep in ((False, True), (True, False), (False, False))
    )
    for same, table in _TABLES.items()
}
"""The codes of an expected path whose value the actual state holds, by whether the pre-state
holds it too (kept, added, updated): the commonest fields, coded without a lookup."""


class StrictCase:
    """One case decided by `strict_case`: its comparison's paths and counts, its delta split,
    its edits and its values' correctness, as columns.

    Attributes:
        shape: Its columns but for its confidence, shared by the cases that show the same
            (`Shape`): what a tally holds its cases by.
        confidence: The confidence of every actual value.
        comparison: The case's comparison, decided from these columns when read (its counts
            are these).
    """

    __slots__ = ("comparison", "confidence", "shape")

    def __init__(
        self,
        expected: InterpretiveState,
        actual: InterpretiveState,
        resolved: FieldPolicies,
        values: tuple[Mapping[str, str], Mapping[str, str], Mapping[str, str]],
        same: tuple[bool, bool],
        confidence: float,
    ) -> None:
        p, e, a = values
        table = _TABLES[same]
        kept, added, updated = _RIGHT[same]
        made = bytearray()
        get_a, get_p, put = a.get, p.get, made.append
        for path, ev in e.items():  # each expected path once: two or three string tests
            av, pv = get_a(path), get_p(path)  # None: absent (every value is a string)
            if ev == av:
                put(kept if ev == pv else added if pv is None else updated)
            else:
                put(table[(av is None, pv is None, False, ev == pv, av == pv)])
        self.shape = shape = shape_of(tuple(e), bytes(made), values)
        self.confidence = confidence
        self.comparison = _comparison(shape, expected, actual, resolved)

    @property
    def paths(self) -> tuple[str, ...]:
        """The compared paths: expected paths in expected order, then extra paths in actual
        order (`StateComparison.paths`)."""
        return self.shape.paths

    @property
    def n_expected(self) -> int:
        """How many of `paths` are expected ones (the extra paths follow)."""
        return self.shape.n_expected

    @property
    def statuses_code(self) -> bytes:
        """Each compared path's status, as its place in `STATUSES`."""
        return self.shape.statuses_code

    @property
    def counts(self) -> tuple[int, int, int, int]:
        """``(matching, mismatched, missing, extra)``."""
        return self.shape.counts

    @property
    def edit_paths(self) -> tuple[str, ...]:
        """The paths of the field edits: expected paths, then the pre-state's others, then the
        actual state's others (`field_edits`' order)."""
        return self.shape.edit_paths

    @property
    def edit_code(self) -> bytes:
        """Each field edit's code (see the module docstring)."""
        return self.shape.edit_code

    @property
    def outcome_key(self) -> tuple[tuple[str, ...], bytes, bytes]:
        """What every figure of the case is made from besides its values: equal for two cases
        whose paths, field outcomes (status, kept, right) and edits are equal."""
        shape = self.shape
        return shape.paths, shape.codes, shape.edit_code

    @property
    def statuses(self) -> tuple[FieldStatus, ...]:
        """Each compared path's status."""
        return self.shape.statuses

    @property
    def kept_code(self) -> bytes:
        """Per expected path, 1 when the case expects it kept from the pre-state."""
        return self.shape.codes.translate(KEPT_OF)

    @property
    def right_code(self) -> bytes:
        """Per expected path, 1 when the actual state holds its expected value."""
        return self.shape.codes.translate(RIGHT_OF)

    def kept_counts(self) -> tuple[int, int]:
        """How many expected paths the case expects kept, and how many of them match (the
        preserved view's fields and its matching ones)."""
        return self.shape.kept_counts

    @property
    def preserved_paths(self) -> tuple[str, ...]:
        """The expected paths the case expects kept from the pre-state."""
        return tuple(compress(self.paths, self.kept_code))

    @property
    def changed_paths(self) -> tuple[str, ...]:
        """The other expected paths, then the pre-state's paths the expected state drops."""
        return tuple(compress(self.paths, self.kept_code.translate(_NOT))) + self.shape.dropped

    def delta(self) -> DeltaComparison:
        """The delta view of `comparison` (what `split_delta` gives)."""
        return delta_of(self.comparison, self.preserved_paths, self.changed_paths)

    def edits(self) -> tuple[FieldEdit, ...]:
        """The field edits (what `field_edits` gives)."""
        return tuple(map(_field_edit, self.edit_paths, self.edit_code))

    def value_columns(self) -> tuple[tuple[str, ...], bytes]:
        """The paths the actual state holds, in compared order, and whether each one's value
        is right (what `StateComparison.value_columns` gives; each confidence is
        `confidence`)."""
        return self.shape.value_columns


_NOT = bytes(code == 0 for code in range(256))
_SEED_RULE = MatchPolicy()
_VERDICTS = {
    (value, conf, ignored): verdict + (" (confidence ignored)" if ignored else "")
    for value, conf, verdict in (
        (True, True, "match"),
        (False, True, "value differs"),
        (True, False, "confidence differs"),
        (False, False, "value and confidence differ"),
    )
    for ignored in (False, True)
}
"""(values equal, confidences equal or ignored, confidence ignored) -> a strict field's
verdict (`compare_field`'s)."""


def _field_edit(path: str, code: int) -> FieldEdit:
    expected, actual, wrong = EDIT_CODE_OPS[code]
    return shared_edit(path, expected, actual, CELLS[(expected, actual)] if wrong else None)


def _comparison(
    shape: Shape,
    expected: InterpretiveState,
    actual: InterpretiveState,
    resolved: FieldPolicies,
) -> StateComparison:
    # the closure holds the case's shape, not the case (which holds the comparison): no
    # reference cycle, so a case is freed when dropped, not by the garbage collector

    def decide() -> tuple[
        tuple[str, ...],
        tuple[FieldStatus, ...],
        Callable[[int], FieldComparison],
        dict[int, FieldComparison],
    ]:
        paths, codes = shape.paths, shape.statuses_code

        def make(i: int) -> FieldComparison:
            # what `compare_field` makes, from the field's status code and its two candidates
            # (a report reads every field: no policy machinery, no match verdicts per field)
            path, code = paths[i], codes[i]
            if code == MISSING:
                return FieldComparison(
                    path, FieldStatus.MISSING, expected.best(path), None, "missing"
                )
            if code == EXTRA:
                return FieldComparison(path, FieldStatus.EXTRA, None, actual.best(path), "extra")
            want, got = expected.best(path), actual.best(path)
            assert want is not None  # the status says both states hold it
            assert got is not None
            policy = resolved.plan(path)[0]
            ignored = policy.confidence == "ignore"
            value = want.value == got.value  # strings: strict JSON equality
            conf = ignored or want.confidence == got.confidence
            return FieldComparison(
                path,
                STATUSES[code],
                want,
                got,
                _VERDICTS[value, conf, ignored],
                value_matched=value,
                confidence_matched=conf,
                policy=None if policy == _SEED_RULE else policy,
            )

        return paths, shape.statuses, make, {}

    return StateComparison.deferred(decide, actual=actual, expected=expected, known=shape.counts)


def strict_case(
    pre: InterpretiveState,
    expected: InterpretiveState,
    actual: InterpretiveState,
    policies: FieldPolicies,
) -> StrictCase | None:
    """The case decided as columns (see the module docstring), or None when it is not three
    flat (or empty) states of strings under one strict policy."""
    mode = policies.uniform_mode
    if mode is not STRICT and mode is not STRICT_VALUE:
        return None
    p, e, a = _strings(pre), _strings(expected), _strings(actual)
    if p is None or e is None or a is None:
        return None
    value_only = mode is STRICT_VALUE
    # an empty state's confidence decides nothing: no path of it is compared or kept
    same = (value_only or e[1] == a[1], value_only or e[1] == p[1])
    return StrictCase(expected, actual, policies, (p[0], e[0], a[0]), same, a[1])


_EMPTY: Mapping[str, str] = {}


def _strings(state: InterpretiveState) -> tuple[Mapping[str, str], float] | None:
    """A flat state of strings' values and confidence (an empty state's: none), else None."""
    flat = state.flat_values
    if flat is not None:
        return (flat.values, flat.confidence) if flat.all_strings or not flat.values else None
    return None if state.paths() else (_EMPTY, 1.0)
