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
takes the general path; a property test holds the two equal.

Codes: a status is its place in `STATUSES`; an edit is ``(expected * 5 + actual) * 2 + wrong``,
the operations by their place in `stateval.compare.EDIT_OPS` (the edit matrix's cell, then
whether the field is wrong).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from itertools import compress
from typing import TypeVar

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
from stateval.state import InterpretiveState

_T = TypeVar("_T")

__all__ = ["EDIT_CODE_OPS", "HELD", "STATUSES", "StrictCase", "hold", "strict_case"]

STATUSES: tuple[FieldStatus, ...] = (
    FieldStatus.MATCHING,
    FieldStatus.MISMATCHED,
    FieldStatus.MISSING,
    FieldStatus.EXTRA,
)
"""The statuses by their code in `StrictCase.statuses_code`."""

_OPS = tuple(EditOp)  # the edit matrix's order (EDIT_OPS)
_K, _A, _U, _D, _N = (_OPS.index(op) for op in EditOp)
_MATCHING, _MISMATCHED, _MISSING, _EXTRA = range(4)

EDIT_CODE_OPS: tuple[tuple[EditOp, EditOp, bool], ...] = tuple(
    (_OPS[code // 10], _OPS[code // 2 % 5], bool(code % 2)) for code in range(50)
)
"""An edit code -> ``(expected operation, actual operation, wrong)``."""


def _field_code(
    a_absent: bool, p_absent: bool, ea: bool, ep: bool, ap: bool, same_ea: bool, same_ep: bool
) -> int:
    """The code of one expected path: ``edit * 4 + kept * 2 + right`` (`right`: its value is
    right, for calibration), from which of the pre-state and the actual state hold it, the
    three equalities and whether the confidences agree (expected-actual, expected-pre)."""
    expected = _A if p_absent else _K if ep else _U
    actual = (_N if p_absent else _D) if a_absent else _A if p_absent else _K if ap else _U
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


def _table(part: Callable[[int, int, int], int]) -> bytes:
    return bytes(
        part(code >> 2, code >> 1 & 1, code & 1) if code < 200 else 0 for code in range(256)
    )


def _status(edit: int) -> int:
    if not edit % 2:
        return _MATCHING
    return _MISSING if edit // 2 % 5 in (_D, _N) else _MISMATCHED


_STATUS_OF = _table(lambda edit, kept, right: _status(edit))
_EDIT_OF = _table(lambda edit, kept, right: edit)
_KEPT_OF = _table(lambda edit, kept, right: kept)
_KEPT_MATCHING = _table(lambda edit, kept, right: kept and not edit % 2)
_RIGHT_OF = _table(lambda edit, kept, right: right)
_ADDED = _table(lambda edit, kept, right: edit // 10 == _A)  # the pre-state lacks it
_HELD = bytes(code != _MISSING for code in range(256))  # a status -> the actual state holds it
_DELETED = ((_D * 5 + _D) * 2).to_bytes()  # a pre-state path dropped as expected
_HALLUCINATED = ((_N * 5 + _A) * 2 + 1).to_bytes()
_MISSED_DELETE = {
    False: ((_D * 5 + _U) * 2 + 1).to_bytes(),
    True: ((_D * 5 + _K) * 2 + 1).to_bytes(),
}


class StrictCase:
    """One case decided by `strict_case`: its comparison's paths and counts, its delta split,
    its edits and its values' correctness, as columns.

    Attributes:
        paths: The compared paths: expected paths in expected order, then extra paths in
            actual order (`StateComparison.paths`).
        statuses_code: Each compared path's status, as its place in `STATUSES`.
        n_expected: How many of `paths` are expected ones (the extra paths follow).
        counts: ``(matching, mismatched, missing, extra)``.
        edit_paths: The paths of the field edits: expected paths, then the pre-state's others,
            then the actual state's others (`field_edits`' order).
        edit_code: Each field edit's code (see the module docstring).
        confidence: The confidence of every actual value.
        comparison: The case's comparison, decided from these columns when read (its counts
            are these).
    """

    __slots__ = (
        "_codes",
        "_dropped",
        "comparison",
        "confidence",
        "counts",
        "edit_code",
        "edit_paths",
        "n_expected",
        "paths",
        "statuses_code",
    )

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
        self._codes = codes = bytes(made)
        keys = tuple(e)
        status = codes.translate(_STATUS_OF)
        missing = status.count(_MISSING)
        # the actual (pre-) state holds other paths when it holds more than the expected ones
        extra = () if len(a) == len(e) - missing else tuple(x for x in a if x not in e)
        added = codes.translate(_ADDED).count(1)  # expected paths the pre-state lacks
        self._dropped = () if len(p) == len(e) - added else tuple(x for x in p if x not in e)
        self.paths = keys + extra
        self.n_expected = len(keys)
        self.statuses_code = status + bytes([_EXTRA]) * len(extra) if extra else status
        self.counts = (status.count(_MATCHING), status.count(_MISMATCHED), missing, len(extra))
        edits = codes.translate(_EDIT_OF)
        self.edit_paths = keys
        if self._dropped or extra:
            hallucinated = tuple(x for x in extra if x not in p)
            self.edit_paths = keys + self._dropped + hallucinated
            edits = b"".join(
                (
                    edits,
                    *(
                        _DELETED if x not in a else _MISSED_DELETE[a[x] == p[x]]
                        for x in self._dropped
                    ),
                    _HALLUCINATED * len(hallucinated),
                )
            )
        self.edit_code = edits
        self.confidence = confidence
        self.comparison = _comparison(self, expected, actual, resolved)

    @property
    def outcome_key(self) -> tuple[tuple[str, ...], bytes, bytes]:
        """What every figure of the case is made from besides its values: equal for two cases
        whose paths, field outcomes (status, kept, right) and edits are equal."""
        return self.paths, self._codes, self.edit_code

    @property
    def statuses(self) -> tuple[FieldStatus, ...]:
        """Each compared path's status."""
        return tuple(map(STATUSES.__getitem__, self.statuses_code))

    @property
    def kept_code(self) -> bytes:
        """Per expected path, 1 when the case expects it kept from the pre-state."""
        return self._codes.translate(_KEPT_OF)

    @property
    def right_code(self) -> bytes:
        """Per expected path, 1 when the actual state holds its expected value."""
        return self._codes.translate(_RIGHT_OF)

    def kept_counts(self) -> tuple[int, int]:
        """How many expected paths the case expects kept, and how many of them match (the
        preserved view's fields and its matching ones)."""
        return self._codes.translate(_KEPT_OF).count(1), self._codes.translate(
            _KEPT_MATCHING
        ).count(1)

    @property
    def preserved_paths(self) -> tuple[str, ...]:
        """The expected paths the case expects kept from the pre-state."""
        return tuple(compress(self.paths, self.kept_code))

    @property
    def changed_paths(self) -> tuple[str, ...]:
        """The other expected paths, then the pre-state's paths the expected state drops."""
        return tuple(compress(self.paths, self.kept_code.translate(_NOT))) + self._dropped

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
        n_extra = len(self.paths) - self.n_expected
        right = self.right_code + bytes(n_extra)
        if not self.counts[2]:
            return self.paths, right
        held = self.statuses_code.translate(_HELD)
        return tuple(compress(self.paths, held)), bytes(compress(right, held))


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
    case: StrictCase,
    expected: InterpretiveState,
    actual: InterpretiveState,
    resolved: FieldPolicies,
) -> StateComparison:
    # the closures hold the case's columns, not the case (which holds the comparison): no
    # reference cycle, so a case is freed when dropped, not by the garbage collector
    paths, codes, counts = case.paths, case.statuses_code, case.counts

    def make(i: int) -> FieldComparison:
        # what `compare_field` makes, from the field's status code and its two candidates
        # (a report reads every field: no policy machinery, no match verdicts per field)
        path, code = paths[i], codes[i]
        if code == _MISSING:
            return FieldComparison(path, FieldStatus.MISSING, expected.best(path), None, "missing")
        if code == _EXTRA:
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

    def decide() -> tuple[
        tuple[str, ...],
        tuple[FieldStatus, ...],
        Callable[[int], FieldComparison],
        dict[int, FieldComparison],
    ]:
        return paths, tuple(map(STATUSES.__getitem__, codes)), make, {}

    return StateComparison.deferred(decide, lambda: counts, actual, expected)


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


HELD = 512
"""Distinct cases a tally holds before counting their fields (`hold`)."""


def hold(
    held: dict[tuple[tuple[str, ...], bytes], int],
    key: tuple[tuple[str, ...], bytes],
    fields: MutableMapping[str, _T],
    make: Callable[[], _T],
    flush: Callable[[], None],
) -> None:
    """Hold one case given as ``(paths, codes)`` (a `StrictCase`'s statuses or edits) in a
    tally's ``held`` cases, to be counted by ``flush`` once per distinct ``key``: ``flush``
    first when `HELD` distinct cases are held (memory stays bounded); the counts of a path
    seen for the first time made now (``make``), so ``fields`` keeps the order the cases show
    them in."""
    seen = held.get(key)
    if seen is not None:
        held[key] = seen + 1
        return
    if len(held) >= HELD:
        flush()
    for path in key[0]:
        if path not in fields:
            fields[path] = make()
    held[key] = 1
