"""One field's comparison: `FieldStatus`, `FieldComparison` and `compare_field` (seed 000's rule,
loosened by the field's match policy; a list of records is paired item by item).

Example:
    >>> from stateval.state import ValueConfidence
    >>> compare_field("a", ValueConfidence("x", 1.0), ValueConfidence("X", 1.0)).verdict
    'value differs'
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from enum import StrEnum
from typing import Any

from stateval.compare._field_policies import FieldPolicies
from stateval.compare._match import Verdict, match_confidence, match_values
from stateval.compare._policy import MatchPolicy
from stateval.compare._records import RecordAlignment, align_records, is_records
from stateval.errors import ComparisonError
from stateval.state import ValueConfidence

__all__ = ["FieldComparison", "FieldStatus", "compare_field"]

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
        verdict: Why, after the candidates: ``match``, ``value differs (fuzzy 0.62 < 0.8)``,
            ``missing``...
        similarity: The fuzzy ratio in [0, 1] when a fuzzy policy compared the values.
        value_matched: Whether the values matched (None unless both sides are present).
        confidence_matched: Whether the confidences matched (None unless both are present).
        policy: The policy that decided (None when the default seed rule was used).
        records: How the items of two lists of records lined up (``list_mode: align``).
    """

    path: str
    status: FieldStatus
    expected: ValueConfidence | None
    actual: ValueConfidence | None
    verdict: str
    similarity: float | None = None
    value_matched: bool | None = None
    confidence_matched: bool | None = None
    policy: MatchPolicy | None = dataclass_field(default=None, repr=False)
    records: RecordAlignment | None = dataclass_field(default=None, repr=False)
    _explanation: str | None = dataclass_field(default=None, init=False, repr=False, compare=False)

    @property
    def explanation(self) -> str:
        """One human-readable line, e.g.
        ``expected 'centre' (0.9), got 'center' (0.9): value differs`` (made when first read)."""
        text = self._explanation
        if text is None:
            text = f"{_head(self.expected, self.actual)}: {self.verdict}"
            object.__setattr__(self, "_explanation", text)
        return text

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
        if self.records is not None:
            out["items"] = [item.to_dict() for item in self.records.items]
        return out


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
    *,
    policies: FieldPolicies | None = None,
) -> FieldComparison:
    """Compare one path's best candidates under ``policy`` (the seed rule when None).

    Under ``list_mode: align``, two lists of records are paired item by item and their
    sub-fields compared under ``policies`` (``<path>[].<key>``; the seed rule when None).

    Raises:
        ComparisonError: Both candidates are None.
    """
    recorded = None if policy is None or policy == _SEED_RULE else policy
    if expected is None and actual is None:
        raise ComparisonError(f"{path!r} is in neither state; nothing to compare")
    if actual is None:
        return FieldComparison(path, FieldStatus.MISSING, expected, None, "missing")
    if expected is None:
        return FieldComparison(path, FieldStatus.EXTRA, None, actual, "extra")
    policy = _SEED_RULE if policy is None else policy
    records = None
    if policy.list_mode == "align" and is_records(expected.value) and is_records(actual.value):
        records = align_records(
            path,
            expected.value,
            actual.value,
            FieldPolicies.of(policies),
            threshold=policy.item_threshold,
            key=policy.item_key,
        )
        value = Verdict(records.all_matched, records.score, records.summary())
    else:
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
        what,
        similarity=value.similarity,
        value_matched=value.matched,
        confidence_matched=conf.matched,
        policy=recorded,
        records=records,
    )
