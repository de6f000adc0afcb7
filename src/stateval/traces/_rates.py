"""Production error rates per field: the monitor's flags on every span, corrected by the human
review of a sample of them.

A flag rate is not an error rate. `RateTally` counts, per field, the spans of a window the
monitor's checks flag, and reads the reviewed cases of an exported case file (``stateval traces
export`` then ``import``): for each, which fields the draft got wrong against the person's
correction, and which the checks flag on the draft. `RateTally.rates` hands both to
`stateval.calibration.estimate_error_rate`: per field the naive flag rate, the human-only
estimate and the bias-corrected one, each with its 95% interval or the reason it has none.

The estimates assume the reviewed cases are a random sample of the spans (``traces export
--sample N`` reviewed whole; at least within flagged and within unflagged spans). A review that
went down a queue part of the way is not: `RateTally.unreviewed` counts the drafts left, so the
report can say so.

Example:
    >>> from stateval.state import InterpretiveState
    >>> from stateval.traces._checks import NoGoldChecks
    >>> from stateval.traces._mapping import MappedCall
    >>> tally = RateTally(NoGoldChecks(grounded=("phone",)))
    >>> call = MappedCall(None, "call 555-0101", InterpretiveState.from_flat({"phone": "555-0199"}))
    >>> tally.add_call(call)
    >>> tally.flagged["phone"], tally.calls
    (1, 1)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stateval.calibration import ErrorRates, estimate_error_rate
from stateval.compare import FieldStatus, compare_states
from stateval.state import InterpretiveState
from stateval.suite import REVIEW_KEY, UNREVIEWED
from stateval.traces._checks import NoGoldChecks
from stateval.traces._mapping import MappedCall
from stateval.wire import coerce_state

__all__ = ["FieldRates", "RateTally", "ReviewedCase"]


@dataclass(frozen=True, slots=True)
class ReviewedCase:
    """One reviewed draft: the fields it got wrong and the fields the checks flag on it."""

    errors: frozenset[str]
    flags: frozenset[str]


@dataclass(frozen=True, slots=True)
class FieldRates:
    """One field's error rate three ways, and the counts behind them."""

    path: str
    flagged: int
    errors_found: int
    rates: ErrorRates

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "flagged": self.flagged,
            "errors_found": self.errors_found,
            **self.rates.to_dict(),
        }


@dataclass(slots=True)
class RateTally:
    """Flags counted over a window's spans, and the reviewed sample beside them.

    Args:
        checks: The monitor's no-gold checks.
    """

    checks: NoGoldChecks
    calls: int = 0
    flagged: Counter[str] = field(default_factory=Counter)
    reviewed: list[ReviewedCase] = field(default_factory=list)
    unreviewed: int = 0

    def add_call(self, call: MappedCall) -> None:
        """Count one span's call: which fields the checks flag."""
        self.calls += 1
        self.flagged.update(self.checks.check(call).flagged)

    def add_case(self, case: Mapping[str, Any]) -> bool:
        """Read one line of an exported case file; False when it is a draft not reviewed yet.

        Raises:
            StatevalError: The case's states cannot be read.
        """
        review = (case.get("metadata") or {}).get(REVIEW_KEY) or {}
        expected_data = case.get("expected_post_state")
        if review.get("status", UNREVIEWED) == UNREVIEWED or expected_data is None:
            self.unreviewed += 1
            return False
        pre_data = case.get("pre_state")
        pre = coerce_state(pre_data, what="pre_state") if pre_data else None
        draft = coerce_state(case.get("actual_post_state") or {}, what="actual_post_state")
        expected = coerce_state(expected_data, what="expected_post_state")
        prompt = (case.get("input") or {}).get("prompt", "")
        verdict = self.checks.check(MappedCall(pre, str(prompt), draft))
        # Confidences are not compared: gold written by a person has none.
        comparison = compare_states(
            InterpretiveState.from_flat(expected.to_flat()),
            InterpretiveState.from_flat(draft.to_flat()),
            self.checks.policies,
        )
        errors = frozenset(
            path
            for path, status in zip(comparison.paths, comparison.statuses, strict=True)
            if status is not FieldStatus.MATCHING
        )
        self.reviewed.append(ReviewedCase(errors, frozenset(verdict.flagged)))
        return True

    def add_cases(self, cases: Iterable[Mapping[str, Any]]) -> None:
        """`add_case` for every line."""
        for case in cases:
            self.add_case(case)

    def rates(self, confidence: float = 0.95) -> list[FieldRates]:
        """Every field that was flagged or found wrong, most erroneous first (corrected
        estimate, then the human one, then the flag rate)."""
        paths = set(self.flagged)
        for case in self.reviewed:
            paths.update(case.errors, case.flags)
        out = []
        for path in paths:
            flagged = self.flagged[path]
            flags = np.zeros(self.calls, dtype=bool)
            flags[:flagged] = True
            errors = [path in case.errors for case in self.reviewed]
            labelled_flags = [path in case.flags for case in self.reviewed]
            rates = estimate_error_rate(flags, errors, labelled_flags, confidence=confidence)
            out.append(FieldRates(path, flagged, sum(errors), rates))
        return sorted(out, key=_worst_first)


def _worst_first(rates: FieldRates) -> tuple[float, float, float, str]:
    r = rates.rates
    return (
        -(r.corrected.estimate if r.corrected.estimate is not None else -1.0),
        -(r.human.estimate if r.human.estimate is not None else -1.0),
        -(r.flag_rate.estimate if r.flag_rate.estimate is not None else -1.0),
        rates.path,
    )
