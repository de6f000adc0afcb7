"""Field and state comparison (seed 000's rules, loosened per field by match policies).

For each path in the union of expected and actual fields, the *best* candidates are compared:

========== ===============================================================================
matching   both states hold the path and the policy says value and confidence match
mismatched both hold the path but the value or the confidence differs
missing    only the expected state holds the path
extra      only the actual state holds the path
========== ===============================================================================

The default policy is the seed rule: value (strict JSON equality: ``True != 1``, ``1 == 1.0``)
and confidence both equal. Policies only decide between matching and mismatched; they never
turn a missing or extra field into a match.

Example:
    >>> from stateval.state import InterpretiveState
    >>> expected = InterpretiveState.from_flat({"hotel.area": "centre", "hotel.stars": "4"})
    >>> actual = InterpretiveState.from_flat({"hotel.area": "center", "hotel.parking": "yes"})
    >>> result = compare_states(expected, actual)
    >>> result.counts
    {'matching': 0, 'mismatched': 1, 'missing': 1, 'extra': 1}
    >>> result.field("hotel.area").explanation
    "expected 'centre' (1.0), got 'center' (1.0): value differs"
    >>> policy = MatchPolicy(synonyms={"center": "centre"})
    >>> compare_states(expected, actual, FieldPolicies({"hotel.area": policy})).matching
    ('hotel.area',)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from itertools import compress
from operator import eq
from typing import Any

from stateval.compare._decide import decide_statuses
from stateval.compare._field_comparison import FieldComparison, FieldStatus, compare_field
from stateval.compare._field_policies import STRICT as _STRICT
from stateval.compare._field_policies import STRICT_VALUE as _STRICT_VALUE
from stateval.compare._field_policies import FieldPolicies
from stateval.compare._policy import MatchPolicy
from stateval.errors import ComparisonError
from stateval.state import InterpretiveState

__all__ = [
    "FieldComparison",
    "FieldStatus",
    "StateComparison",
    "compare_field",
    "compare_states",
]

Decide = Callable[
    [],
    tuple[
        Sequence[str],
        Sequence[FieldStatus],
        Callable[[int], FieldComparison],
        Mapping[int, FieldComparison],
    ],
]
"""Decides a deferred comparison: its paths, their statuses, a maker of each field's
`FieldComparison`, and the ones already made (by position)."""

_MATCHING = FieldStatus.MATCHING
_MISMATCHED = FieldStatus.MISMATCHED
_MISSING = FieldStatus.MISSING
_EXTRA = FieldStatus.EXTRA


class StateComparison:
    """Every field's comparison: expected paths in expected order, then extra paths in actual
    order.

    `compare_states` counts the statuses at once (with set operations when both states are
    flat strings under a strict policy) and decides each field's status, and makes its
    `FieldComparison` (candidates, explanation), only when something reads them; the counts
    and scores of many comparisons cost no per-field objects.

    Args:
        fields: The field comparisons, in order.
    """

    __slots__ = (
        "_actual",
        "_built",
        "_count_of",
        "_counts",
        "_decide",
        "_expected",
        "_index",
        "_make",
        "_paths",
        "_statuses",
    )

    def __init__(self, fields: Iterable[FieldComparison] = ()) -> None:
        built = tuple(fields)
        self._built: list[FieldComparison | None] = list(built)
        self._paths: tuple[str, ...] = tuple(f.path for f in built)
        self._statuses: tuple[FieldStatus, ...] = tuple(f.status for f in built)
        self._make: Callable[[int], FieldComparison] | None = None
        self._decide: Decide | None = None
        self._actual: InterpretiveState | None = None
        self._expected: InterpretiveState | None = None
        self._counts: tuple[int, int, int, int] | None = None
        self._count_of: Callable[[], tuple[int, int, int, int]] | None = None
        self._index: dict[str, int] | None = None

    @classmethod
    def deferred(
        cls,
        decide: Decide,
        counts: Callable[[], tuple[int, int, int, int]] | None = None,
        actual: InterpretiveState | None = None,
        expected: InterpretiveState | None = None,
        known: tuple[int, int, int, int] | None = None,
    ) -> StateComparison:
        """A comparison decided when first read.

        Args:
            decide: Returns the compared paths, their statuses, a function making the
                ``i``-th path's `FieldComparison` (its status must be the ``i``-th status),
                and the comparisons already made, by position; a comparison it does not make
                is of a strict policy (values equal, and confidences unless ignored).
            counts: Counts ``(matching, mismatched, missing, extra)`` without deciding,
                called when they are read before anything decided the comparison (the
                counts, `accuracy_score` and `overall_match` then need no decision; once
                decided, they are counted from the statuses).
            actual: The actual state compared (so `value_outcomes` reads the confidences of
                matching and extra fields without making their `FieldComparison`).
            expected: The expected state compared (likewise, for a mismatched field).
            known: The counts, when they are known already (those of the statuses).
        """
        self = cls.__new__(cls)
        self._paths, self._statuses, self._built = (), (), []
        self._make = self._index = None
        self._decide = decide
        self._counts, self._count_of = known, counts
        self._actual, self._expected = actual, expected
        return self

    def _decided(self) -> tuple[tuple[str, ...], tuple[FieldStatus, ...]]:
        decide = self._decide
        if decide is not None:
            paths, statuses, make, made = decide()
            self._paths, self._statuses = tuple(paths), tuple(statuses)
            built: list[FieldComparison | None] = [None] * len(self._paths)
            for i, done in made.items():
                built[i] = done
            self._built = built
            self._make = make
            self._decide = None
        return self._paths, self._statuses

    def _at(self, i: int) -> FieldComparison:
        built = self._built[i]
        if built is None:
            assert self._make is not None
            built = self._built[i] = self._make(i)
        return built

    @property
    def fields(self) -> tuple[FieldComparison, ...]:
        """Every field's comparison, in order."""
        paths, _ = self._decided()
        return tuple(self._at(i) for i in range(len(paths)))

    def unmatched(self) -> tuple[FieldComparison, ...]:
        """The comparisons of the fields that do not match, in order (``f for f in fields if
        not f.matched``), made without making the matching ones'."""
        _, statuses = self._decided()
        matching = FieldStatus.MATCHING
        return tuple(self._at(i) for i, s in enumerate(statuses) if s is not matching)

    @property
    def paths(self) -> tuple[str, ...]:
        """The compared paths, in order."""
        return self._decided()[0]

    @property
    def statuses(self) -> tuple[FieldStatus, ...]:
        """Each compared path's status, in the order of `paths`."""
        return self._decided()[1]

    def items(self) -> list[tuple[str, FieldStatus, FieldComparison | None]]:
        """``(path, status, its FieldComparison if already made, else None)`` per compared
        path, in order: what a caller needing only statuses reads without making any."""
        paths, statuses = self._decided()
        return list(zip(paths, statuses, self._built, strict=True))

    @property
    def unmade(self) -> bool:
        """True when no field's `FieldComparison` has been made: every field was decided by a
        strict policy's equality and none was read (its score and credit are 1 or 0)."""
        self._decided()
        return not any(self._built)

    def value_outcomes(self) -> list[tuple[str, float, bool]]:
        """``(path, confidence, right)`` for each compared field the actual state holds, in
        order: the confidence of its best candidate, and whether its value is right under the
        value half of the field's policy (an extra field's never is).

        Example:
            >>> from stateval.state import InterpretiveState
            >>> want = InterpretiveState.from_flat({"a": 1, "b": 2})
            >>> got = InterpretiveState.from_flat({"a": 1, "c": 3}, confidence=0.5)
            >>> compare_states(want, got).value_outcomes()
            [('a', 0.5, True), ('c', 0.5, False)]
        """
        return list(zip(*self.value_columns(), strict=True))

    def value_columns(self) -> tuple[list[str], list[float], list[bool]]:
        """`value_outcomes` as three columns (paths, confidences, right), made without a
        tuple per field when the actual state is flat and no field comparison was made."""
        paths, statuses = self._decided()
        flat = None if self._actual is None else self._actual.flat_values
        shared = None if flat is None else flat.confidence  # every value's, in a flat state
        e_flat = None if self._expected is None else self._expected.flat_values
        # an unmade field is a strict policy's: its status says if its value is right (for a
        # mismatch only between flat states of one confidence, else the confidence may differ)
        wrong = shared is not None and e_flat is not None and e_flat.confidence == shared
        built = self._built
        if shared is not None and (wrong or _MISMATCHED not in statuses) and self.unmade:
            # every field held is an unmade strict one of the shared confidence: columns
            # made by C loops, no tuple per field
            if _MISSING in statuses:
                held = list(map(_MISSING.__ne__, statuses))
                paths, statuses = tuple(compress(paths, held)), tuple(compress(statuses, held))
            return list(paths), [shared] * len(paths), list(map(_MATCHING.__eq__, statuses))
        confidence = None if self._actual is None else _confidence_of(self._actual)
        out_paths: list[str] = []
        out_conf: list[float] = []
        out_right: list[bool] = []
        for i, (path, status) in enumerate(zip(paths, statuses, strict=True)):
            if status is _MISSING:
                continue
            out_paths.append(path)
            if confidence is not None and built[i] is None and (status is not _MISMATCHED or wrong):
                out_conf.append(shared if shared is not None else confidence(path))
                out_right.append(status is _MATCHING)
                continue
            f = self._at(i)
            assert f.actual is not None
            out_conf.append(f.actual.confidence)
            out_right.append(status is not _EXTRA and bool(f.value_matched))
        return out_paths, out_conf, out_right

    def status(self, path: str) -> FieldStatus | None:
        """The status of ``path``, or None when it was not compared."""
        i = self._position(path)
        return None if i is None else self._statuses[i]

    def _position(self, path: str) -> int | None:
        index = self._index
        if index is None:
            paths, _ = self._decided()
            index = self._index = {p: i for i, p in enumerate(paths)}
        return index.get(path)

    def field(self, path: str) -> FieldComparison | None:
        """The comparison of ``path``, or None when it was not compared."""
        i = self._position(path)
        return None if i is None else self._at(i)

    def _with(self, status: FieldStatus) -> tuple[str, ...]:
        paths, statuses = self._decided()
        return tuple(p for p, s in zip(paths, statuses, strict=True) if s is status)

    @property
    def matching(self) -> tuple[str, ...]:
        """Paths whose status is matching."""
        return self._with(_MATCHING)

    @property
    def mismatched(self) -> tuple[str, ...]:
        """Paths whose status is mismatched."""
        return self._with(_MISMATCHED)

    @property
    def missing(self) -> tuple[str, ...]:
        """Paths only the expected state holds."""
        return self._with(_MISSING)

    @property
    def extra(self) -> tuple[str, ...]:
        """Paths only the actual state holds."""
        return self._with(_EXTRA)

    def _count(self) -> tuple[int, int, int, int]:
        counts = self._counts
        if counts is None:
            if self._decide is not None and self._count_of is not None:
                counts = self._count_of()  # not decided yet: counted without deciding
            else:
                statuses = self._decided()[1]
                counts = (
                    statuses.count(_MATCHING),
                    statuses.count(_MISMATCHED),
                    statuses.count(_MISSING),
                    statuses.count(_EXTRA),
                )
            self._counts = counts
        return counts

    @property
    def counts(self) -> dict[str, int]:
        """``{"matching": n, "mismatched": n, "missing": n, "extra": n}``."""
        return dict(zip(("matching", "mismatched", "missing", "extra"), self._count(), strict=True))

    @property
    def n_matching(self) -> int:
        """Number of matching fields (the numerator of `accuracy_score`)."""
        return self._count()[0]

    @property
    def n_expected(self) -> int:
        """Number of expected fields compared (the denominator of `accuracy_score`)."""
        matching, mismatched, missing, _ = self._count()
        return matching + mismatched + missing

    @property
    def overall_match(self) -> bool:
        """True when no field is mismatched, missing or extra."""
        _, mismatched, missing, extra = self._count()
        return not (mismatched or missing or extra)

    @property
    def accuracy_score(self) -> float:
        """matching / (matching + mismatched + missing); 0.0 when there are no expected fields."""
        matching, mismatched, missing, _ = self._count()
        n = matching + mismatched + missing
        return matching / n if n else 0.0

    @property
    def judge_requests(self) -> tuple[FieldComparison, ...]:
        """Fields whose values differ and whose policy asks for an LLM judge."""
        self._decided()
        # Fields under a judge's policy are made while deciding; the others cannot want one.
        return tuple(f for f in self._built if f is not None and f.wants_judge)

    def with_judgement(
        self, path: str, *, matched: bool, explanation: str | None = None
    ) -> StateComparison:
        """A copy where a judge has ruled on the values of the mismatched field ``path``.

        The field becomes matching only if the judge accepts the value *and* the confidence
        already matched under its policy.

        Raises:
            ComparisonError: ``path`` is not a mismatched field whose values differ.
        """
        current = self.field(path)
        if current is None or current.status is not FieldStatus.MISMATCHED:
            status = "not compared" if current is None else current.status.value
            raise ComparisonError(f"only a mismatched field can be judged; {path!r} is {status}")
        if current.value_matched:
            raise ComparisonError(f"the values of {path!r} already match; nothing to judge")
        ok = matched and bool(current.confidence_matched)
        verdict = "judge accepts the value" if matched else "judge rejects the value"
        if matched and not ok:
            verdict += " but confidence differs"
        if explanation:
            verdict += f" ({explanation})"
        judged = replace(
            current,
            status=FieldStatus.MATCHING if ok else FieldStatus.MISMATCHED,
            value_matched=matched,
            verdict=verdict,
        )
        return StateComparison(judged if f.path == path else f for f in self.fields)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form for reports."""
        return {
            "overall_match": self.overall_match,
            "accuracy_score": self.accuracy_score,
            "counts": self.counts,
            "fields": [f.to_dict() for f in self.fields],
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StateComparison):
            return NotImplemented
        return self.statuses == other.statuses and self.fields == other.fields

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StateComparison(fields={self.fields!r})"


def compare_states(
    expected: InterpretiveState,
    actual: InterpretiveState,
    policies: FieldPolicies | MatchPolicy | None = None,
    *,
    paths: Iterable[str] | None = None,
) -> StateComparison:
    """Compare ``actual`` against ``expected`` field by field.

    Fields under a strict policy (the seed rule, or it with confidence ignored) are decided by
    a plain equality test on the best values; when both states are flat strings under one
    strict policy, counts read before anything else come from set operations, and each
    field's status is decided only when read (the counts then come from the statuses). A
    field's `FieldComparison` (candidates, explanation) is made, by `compare_field`, when read.
    Fields under any other policy go through `compare_field` at once.

    Args:
        expected: The expected state.
        actual: The state the mutator produced.
        policies: Per-path policies, or one `MatchPolicy` for every path (the seed rule when
            None). Paths whose policy has ``ignore=True`` are left out entirely.
        paths: When given, only these paths are compared (paths in neither state are skipped);
            the order stays expected paths first, then extra paths.

    Returns:
        Expected paths in expected order, then extra paths in actual order.
    """
    resolved = FieldPolicies.of(policies)
    if isinstance(paths, str):
        raise ComparisonError(f"paths must be a collection of paths, not the string {paths!r}")
    wanted = None if paths is None else set(paths)
    decide = partial(decide_statuses, expected, actual, resolved, wanted)
    e_flat, a_flat = expected.flat_values, actual.flat_values
    mode = resolved.uniform_mode
    if (
        wanted is None
        and e_flat is not None
        and a_flat is not None
        and e_flat.all_strings
        and a_flat.all_strings
        and (mode is _STRICT or mode is _STRICT_VALUE)
    ):
        count = partial(
            _flat_counts,
            e_flat.values,
            a_flat.values,
            mode is _STRICT_VALUE or e_flat.confidence == a_flat.confidence,
        )
        return StateComparison.deferred(decide, count, actual, expected)
    return StateComparison.deferred(decide, actual=actual, expected=expected)


def _flat_counts(
    expected: Mapping[str, Any], actual: Mapping[str, Any], same_confidence: bool
) -> tuple[int, int, int, int]:
    """The counts of two flat states of strings under one strict policy, by set operations."""
    common = len(expected.keys() & actual.keys())
    same = sum(map(eq, expected.values(), map(actual.get, expected))) if same_confidence else 0
    return same, common - same, len(expected) - common, len(actual) - common


def _confidence_of(state: InterpretiveState) -> Callable[[str], float]:
    """The confidence of a path's best candidate in ``state``."""
    flat = state.flat_values
    if flat is not None:
        shared = flat.confidence
        return lambda _path: shared
    best = state.best_candidates()
    return lambda path: best[path].confidence
