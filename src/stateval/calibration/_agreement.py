"""Agreement of an LLM judge with human verdicts: Cohen's kappa, TPR/TNR, confusion counts.

A case may carry human verdicts on judged fields (``human: {"hotel.name": "same"}``). Each
verdict the judge also gave on that field of that case is one `AgreementSample`; "same" (the
values are equivalent) is the positive class.

Example:
    >>> report = judge_agreement([
    ...     AgreementSample("c1", "name", human=True, judge=True),
    ...     AgreementSample("c2", "name", human=False, judge=False),
    ...     AgreementSample("c3", "name", human=False, judge=True),
    ...     AgreementSample("c4", "name", human=True, judge=True),
    ... ])
    >>> report.overall.kappa, report.overall.tpr, report.overall.tnr
    (0.5, 1.0, 0.5)
    >>> [d.case_id for d in report.disagreements]
    ['c3']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "HUMAN_LABELS",
    "Agreement",
    "AgreementReport",
    "AgreementSample",
    "HumanVerdict",
    "cohen_kappa",
    "judge_agreement",
]

HUMAN_LABELS: dict[str, bool] = {
    "same": True,
    "equivalent": True,
    "different": False,
}
"""Human verdicts a case may give, and whether each says the values are equivalent."""

_OVERALL = "(all judged fields)"


@dataclass(frozen=True, slots=True)
class HumanVerdict:
    """A person's verdict on one judged field of one case.

    Attributes:
        same: The person says the mutator's value is equivalent to the expected one.
        actual: With `pinned`, the mutator's value the verdict is on.
        pinned: The verdict holds only when the mutator gives `actual` (a run whose mutator
            gives another value does not compare it with the judge).
    """

    same: bool
    actual: Any = None
    pinned: bool = False


def cohen_kappa(tp: int, fn: int, fp: int, tn: int) -> float | None:
    """Cohen's kappa of two raters over a 2x2 table (rows: rater A yes/no; columns: B yes/no).

    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e`` the agreement
    expected by chance from each rater's marginals. None when ``p_e`` is 1 (both raters gave
    one and the same label throughout) or the table is empty: kappa is undefined there.

    Example:
        >>> round(cohen_kappa(20, 5, 10, 15), 6)  # 50 items, p_o = 0.7, p_e = 0.5
        0.4
    """
    n = tp + fn + fp + tn
    if not n:
        return None
    p_o = (tp + tn) / n
    p_e = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


@dataclass(frozen=True, slots=True)
class AgreementSample:
    """One field of one case with both a human verdict and the judge's.

    Attributes:
        case_id: The case.
        path: The judged field.
        human: The human says the values are equivalent.
        judge: The judge says they are.
        expected: The expected value.
        actual: The mutator's value.
        explanation: The judge's reason.
    """

    case_id: str
    path: str
    human: bool
    judge: bool
    expected: Any = None
    actual: Any = None
    explanation: str = ""

    @property
    def agrees(self) -> bool:
        """True when judge and human gave the same verdict."""
        return self.human == self.judge

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "case_id": self.case_id,
            "path": self.path,
            "human": "same" if self.human else "different",
            "judge": "same" if self.judge else "different",
            "expected": self.expected,
            "actual": self.actual,
            "explanation": self.explanation,
        }


@dataclass(frozen=True, slots=True)
class Agreement:
    """The judge against the humans on one field (or pooled).

    Attributes:
        path: The field, or ``(all judged fields)``.
        tp: Both say same.
        fn: Human says same, judge different.
        fp: Human says different, judge same.
        tn: Both say different.
    """

    path: str
    tp: int
    fn: int
    fp: int
    tn: int

    @property
    def n(self) -> int:
        """Verdicts compared."""
        return self.tp + self.fn + self.fp + self.tn

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa (None when undefined, see `cohen_kappa`)."""
        return cohen_kappa(self.tp, self.fn, self.fp, self.tn)

    @property
    def observed(self) -> float | None:
        """Share of verdicts where judge and human agree."""
        return (self.tp + self.tn) / self.n if self.n else None

    @property
    def tpr(self) -> float | None:
        """Of the values humans call the same, the share the judge calls the same."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def tnr(self) -> float | None:
        """Of the values humans call different, the share the judge calls different."""
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "path": self.path,
            "n": self.n,
            "kappa": self.kappa,
            "observed": self.observed,
            "tpr": self.tpr,
            "tnr": self.tnr,
            "confusion": {"tp": self.tp, "fn": self.fn, "fp": self.fp, "tn": self.tn},
        }


def _agreement(path: str, samples: Iterable[AgreementSample]) -> Agreement:
    counts = {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    for s in samples:
        key = ("tp" if s.judge else "fn") if s.human else ("fp" if s.judge else "tn")
        counts[key] += 1
    return Agreement(path, **counts)


@dataclass(frozen=True, slots=True)
class AgreementReport:
    """The judge's agreement with human verdicts over a run.

    Attributes:
        overall: Every compared verdict pooled.
        fields: One per judged field with human verdicts, by path.
        disagreements: The verdicts where judge and human differ, in the order given.
        not_judged: Human verdicts the judge gave no verdict for (the rule already matched the
            values, the judge failed, or the mutator left the field out), as
            ``(case_id, path, why)``.
    """

    overall: Agreement
    fields: tuple[Agreement, ...]
    disagreements: tuple[AgreementSample, ...]
    not_judged: tuple[tuple[str, str, str], ...] = field(default=())

    def field(self, path: str) -> Agreement | None:
        """The agreement on ``path``, or None."""
        return next((f for f in self.fields if f.path == path), None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "overall": self.overall.to_dict(),
            "fields": [f.to_dict() for f in self.fields],
            "disagreements": [d.to_dict() for d in self.disagreements],
            "not_judged": [{"case_id": c, "path": p, "why": why} for c, p, why in self.not_judged],
        }


def judge_agreement(
    samples: Iterable[AgreementSample], not_judged: Iterable[tuple[str, str, str]] = ()
) -> AgreementReport:
    """Agreement per judged field and pooled, with the disagreements listed."""
    pooled = list(samples)
    paths = sorted({s.path for s in pooled})
    return AgreementReport(
        overall=_agreement(_OVERALL, pooled),
        fields=tuple(_agreement(p, (s for s in pooled if s.path == p)) for p in paths),
        disagreements=tuple(s for s in pooled if not s.agrees),
        not_judged=tuple(not_judged),
    )
