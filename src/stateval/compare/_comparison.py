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

from collections.abc import Iterable
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from enum import StrEnum
from typing import Any

from stateval.compare._match import match_confidence, match_values
from stateval.compare._policy import FieldPolicies, MatchPolicy
from stateval.errors import ComparisonError
from stateval.state import InterpretiveState, ValueConfidence

__all__ = [
    "FieldComparison",
    "FieldStatus",
    "StateComparison",
    "compare_field",
    "compare_states",
]

_SHOW_LIMIT = 80
_SEED_RULE = MatchPolicy()


class FieldStatus(StrEnum):
    """How one field of the actual state relates to the expected state."""

    MATCHING = "matching"
    MISMATCHED = "mismatched"
    MISSING = "missing"
    EXTRA = "extra"


@dataclass(frozen=True, slots=True)
class FieldComparison:
    """The comparison of one path's best candidates.

    Attributes:
        path: The field path.
        status: Matching, mismatched, missing or extra.
        expected: The expected state's best candidate (None when extra).
        actual: The actual state's best candidate (None when missing).
        explanation: One human-readable line, e.g.
            ``expected 'centre' (0.9), got 'center' (0.9): value differs``.
        similarity: The fuzzy ratio in [0, 1] when a fuzzy policy compared the values.
        value_matched: Whether the values matched (None unless both sides are present).
        confidence_matched: Whether the confidences matched (None unless both are present).
        policy: The policy that decided (None when the default seed rule was used).
    """

    path: str
    status: FieldStatus
    expected: ValueConfidence | None
    actual: ValueConfidence | None
    explanation: str
    similarity: float | None = None
    value_matched: bool | None = None
    confidence_matched: bool | None = None
    policy: MatchPolicy | None = dataclass_field(default=None, repr=False)

    @property
    def matched(self) -> bool:
        """True when the status is matching."""
        return self.status is FieldStatus.MATCHING

    @property
    def score(self) -> float:
        """1.0 when matching, else 0.0; the similarity instead when the policy says
        ``score: similarity`` and both sides are present (missing and extra score 0.0)."""
        if (
            self.policy is not None
            and self.policy.score == "similarity"
            and self.similarity is not None
            and self.status in (FieldStatus.MATCHING, FieldStatus.MISMATCHED)
        ):
            return self.similarity
        return 1.0 if self.status is FieldStatus.MATCHING else 0.0

    @property
    def wants_judge(self) -> bool:
        """True when the values differ and the policy asks for an LLM judge to rule on them."""
        return (
            self.status is FieldStatus.MISMATCHED
            and self.value_matched is False
            and self.policy is not None
            and self.policy.judge is not None
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form for reports."""
        out: dict[str, Any] = {
            "path": self.path,
            "status": self.status.value,
            "expected": None if self.expected is None else self.expected.to_dict(),
            "actual": None if self.actual is None else self.actual.to_dict(),
            "explanation": self.explanation,
        }
        if self.similarity is not None:
            out["similarity"] = self.similarity
        if self.wants_judge:
            out["wants_judge"] = True
        return out


@dataclass(frozen=True, slots=True)
class StateComparison:
    """Every field's comparison: expected paths in expected order, then extra paths in actual
    order."""

    fields: tuple[FieldComparison, ...]
    _index: dict[str, FieldComparison] = dataclass_field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        self._index.update((f.path, f) for f in self.fields)

    def field(self, path: str) -> FieldComparison | None:
        """The comparison of ``path``, or None when it was not compared."""
        return self._index.get(path)

    def _paths(self, status: FieldStatus) -> tuple[str, ...]:
        return tuple(f.path for f in self.fields if f.status is status)

    @property
    def matching(self) -> tuple[str, ...]:
        """Paths whose status is matching."""
        return self._paths(FieldStatus.MATCHING)

    @property
    def mismatched(self) -> tuple[str, ...]:
        """Paths whose status is mismatched."""
        return self._paths(FieldStatus.MISMATCHED)

    @property
    def missing(self) -> tuple[str, ...]:
        """Paths only the expected state holds."""
        return self._paths(FieldStatus.MISSING)

    @property
    def extra(self) -> tuple[str, ...]:
        """Paths only the actual state holds."""
        return self._paths(FieldStatus.EXTRA)

    @property
    def counts(self) -> dict[str, int]:
        """``{"matching": n, "mismatched": n, "missing": n, "extra": n}``."""
        out = {status.value: 0 for status in FieldStatus}
        for f in self.fields:
            out[f.status.value] += 1
        return out

    @property
    def n_expected(self) -> int:
        """Number of expected fields compared (the denominator of `accuracy_score`)."""
        return sum(1 for f in self.fields if f.status is not FieldStatus.EXTRA)

    @property
    def overall_match(self) -> bool:
        """True when no field is mismatched, missing or extra."""
        return all(f.matched for f in self.fields)

    @property
    def accuracy_score(self) -> float:
        """matching / (matching + mismatched + missing); 0.0 when there are no expected fields."""
        n = self.n_expected
        return sum(1 for f in self.fields if f.matched) / n if n else 0.0

    @property
    def judge_requests(self) -> tuple[FieldComparison, ...]:
        """Fields whose values differ and whose policy asks for an LLM judge."""
        return tuple(f for f in self.fields if f.wants_judge)

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
        line = f"{_head(current.expected, current.actual)}: {verdict}"
        if explanation:
            line += f" ({explanation})"
        judged = replace(
            current,
            status=FieldStatus.MATCHING if ok else FieldStatus.MISMATCHED,
            value_matched=matched,
            explanation=line,
        )
        return StateComparison(tuple(judged if f.path == path else f for f in self.fields))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form for reports."""
        return {
            "overall_match": self.overall_match,
            "accuracy_score": self.accuracy_score,
            "counts": self.counts,
            "fields": [f.to_dict() for f in self.fields],
        }


def _show(vc: ValueConfidence) -> str:
    text = repr(vc.value)
    if len(text) > _SHOW_LIMIT:
        text = text[: _SHOW_LIMIT - 3] + "..."
    return f"{text} ({vc.confidence!r})"


def _head(expected: ValueConfidence | None, actual: ValueConfidence | None) -> str:
    left = "expected nothing" if expected is None else f"expected {_show(expected)}"
    right = "got nothing" if actual is None else f"got {_show(actual)}"
    return f"{left}, {right}"


def compare_field(
    path: str,
    expected: ValueConfidence | None,
    actual: ValueConfidence | None,
    policy: MatchPolicy | None = None,
) -> FieldComparison:
    """Compare one path's best candidates under ``policy`` (the seed rule when None).

    Raises:
        ComparisonError: Both candidates are None.
    """
    head = _head(expected, actual)
    recorded = None if policy is None or policy == _SEED_RULE else policy
    if expected is None and actual is None:
        raise ComparisonError(f"{path!r} is in neither state; nothing to compare")
    if actual is None:
        return FieldComparison(path, FieldStatus.MISSING, expected, None, f"{head}: missing")
    if expected is None:
        return FieldComparison(path, FieldStatus.EXTRA, None, actual, f"{head}: extra")
    policy = _SEED_RULE if policy is None else policy
    value = match_values(policy, expected.value, actual.value)
    conf = match_confidence(policy, expected.confidence, actual.confidence)
    if value.matched and conf.matched:
        status, what = FieldStatus.MATCHING, "match"
    elif conf.matched:
        status, what = FieldStatus.MISMATCHED, "value differs"
    elif value.matched:
        status, what = FieldStatus.MISMATCHED, "confidence differs"
    else:
        status, what = FieldStatus.MISMATCHED, "value and confidence differ"
    notes = [n for n in (value.note, conf.note) if n]
    if notes:
        what += f" ({'; '.join(notes)})"
    return FieldComparison(
        path,
        status,
        expected,
        actual,
        f"{head}: {what}",
        similarity=value.similarity,
        value_matched=value.matched,
        confidence_matched=conf.matched,
        policy=recorded,
    )


def compare_states(
    expected: InterpretiveState,
    actual: InterpretiveState,
    policies: FieldPolicies | MatchPolicy | None = None,
    *,
    paths: Iterable[str] | None = None,
) -> StateComparison:
    """Compare ``actual`` against ``expected`` field by field.

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
    order = expected.paths() + [p for p in actual.paths() if p not in expected]
    out: list[FieldComparison] = []
    for path in order:
        if wanted is not None and path not in wanted:
            continue
        policy = resolved.for_path(path)
        if policy.ignore:
            continue
        out.append(compare_field(path, expected.best(path), actual.best(path), policy))
    return StateComparison(tuple(out))
