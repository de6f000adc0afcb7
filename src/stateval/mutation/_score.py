"""Scoring mutation runs: each mutant's result, severity, and the mutation score with its Wilson
95% interval.

A mutant is *killed* when the suite's verdict fails on it where it passed on the baseline: a
threshold the baseline meets is missed, or a check or eval that passes on a case's baseline output
fails on that case's mutant output. It is *inert* when its output equals the baseline's on every
case (nothing can kill it), and *equivalent* when its output differs but nothing the suite
observes does: on every case each field's comparison status, each check's outcome and each eval's
outcome equal the baseline's (say, a case change under a policy that normalises case). Mutation
score = killed / evaluated; the effective score leaves inert and equivalent mutants out of the
denominator.

Example:
    >>> low, high = wilson_interval(8, 10)
    >>> round(low, 4), round(high, 4)
    (0.4902, 0.9433)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from stateval.calibration import wilson_interval
from stateval.mutation._mutant import Mutant, Severity
from stateval.run import RunSummary

__all__ = [
    "SHOWN_CASES",
    "STATUSES",
    "MutantResult",
    "MutantStatus",
    "MutationScore",
    "Severity",
    "severity",
    "wilson_interval",
]

MutantStatus: TypeAlias = Literal["killed", "survived", "equivalent", "inert", "skipped", "error"]
STATUSES: tuple[MutantStatus, ...] = (
    "killed",
    "survived",
    "equivalent",
    "inert",
    "skipped",
    "error",
)
"""Every mutant status, in report order."""

SHOWN_CASES = 20
"""Changed case ids a mutant keeps (and its JSON form shows) unless the test keeps them all."""

_LEVELS: tuple[Severity, ...] = ("low", "medium", "high")
WIDE_IMPACT = 0.2
"""A survivor that changed at least this fraction of cases is one severity level higher."""


_TARGET_SEVERITY: dict[str, Severity] = {
    "state": "medium",
    "prompt": "medium",
    "context": "medium",
    "tools": "high",
    "model": "high",
}


def severity(
    mutant: Mutant, changed_cases: int, n_cases: int, *, rated: Severity | None = None
) -> Severity:
    """A survivor's severity: its operator's (`RatedOperator`, carried by the mutant; else by
    target), one level
    higher when it changed at least `WIDE_IMPACT` of the cases."""
    base = rated or _TARGET_SEVERITY.get(mutant.target, "medium")
    level = _LEVELS.index(base)
    if n_cases and changed_cases / n_cases >= WIDE_IMPACT:
        level = min(level + 1, len(_LEVELS) - 1)
    return _LEVELS[level]


@dataclass(frozen=True, slots=True)
class MutationScore:
    """Killed over evaluated, with its Wilson 95% interval.

    Attributes:
        killed: Mutants killed.
        evaluated: Mutants the denominator counts.
        value: killed / evaluated (None when nothing was evaluated).
        low: Lower end of the interval.
        high: Upper end of the interval.
    """

    killed: int
    evaluated: int
    value: float | None
    low: float
    high: float

    @classmethod
    def of(cls, killed: int, evaluated: int) -> MutationScore:
        """The score of ``killed`` out of ``evaluated``."""
        low, high = wilson_interval(killed, evaluated)
        value = killed / evaluated if evaluated else None
        return cls(killed, evaluated, value, low, high)

    def describe(self) -> str:
        """``62.5% (10/16, 95% CI 38.6%-81.5%)``."""
        if self.value is None:
            return "n/a (no mutant evaluated)"
        return (
            f"{self.value:.1%} ({self.killed}/{self.evaluated}, "
            f"95% CI {self.low:.1%}-{self.high:.1%})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "killed": self.killed,
            "evaluated": self.evaluated,
            "value": self.value,
            "ci95": [self.low, self.high],
        }


@dataclass(frozen=True, slots=True)
class MutantResult:
    """What the suite made of one mutant.

    Attributes:
        id: ``M001``... in generation order (stable under the same seed and operators).
        mutant: The mutant.
        status: killed, survived, equivalent (the output changed, but no field status, check
            or eval outcome the suite observes did), inert (output identical to the baseline
            on every case), skipped (over ``--max-calls``) or error (the mutant could not run).
        kills: Why it was killed, one line per failed verdict element.
        killed_by: The verdict elements that failed (``threshold:accuracy``,
            ``check:hotel.area``, ``eval:provenance``).
        changed_cases: Cases whose output differs from the baseline's: every one when the
            test kept its cases (`MutationConfig.keep_cases`), else the first `SHOWN_CASES`.
        n_changed: How many cases' output differs from the baseline's.
        moved: Whether any score of the suite differs from the baseline's (a survivor that
            moved was seen but tolerated; one that did not is invisible to the suite).
        severity: A survivor's severity.
        suggestion: For a survivor, the field policy, threshold, check or eval that would kill
            it; for an equivalent mutant, what hides the change (a field policy, say).
        closest: For a survivor, the verdict element that came closest to failing.
        error: Why the mutant could not run, or was skipped.
        calls: Paid calls spent on it (LLM mutator calls and ``is_llm`` evals).
        summary: The mutant's run summary (None unless it ran). When the test kept its
            cases (`MutationConfig.keep_cases`), whole, its ``cases`` the changed ones;
            else its figures only (headline rates, per-field rows, thresholds, edit matrix:
            no cases, failing cases, metrics, calibration or episodes).
        complete: False when ``--max-calls`` stopped its LLM evals early.
        wrote: One example of what the mutant's output holds where it differs from the
            baseline's (``case c1: hotel.area 'nort' (baseline 'north')``).
    """

    id: str
    mutant: Mutant
    status: MutantStatus
    kills: tuple[str, ...] = ()
    killed_by: tuple[str, ...] = ()
    changed_cases: tuple[str, ...] = ()
    moved: bool = False
    severity: Severity | None = None
    suggestion: str | None = None
    closest: str | None = None
    error: str | None = None
    calls: int = 0
    summary: RunSummary | None = field(default=None, repr=False)
    complete: bool = True
    wrote: str | None = None
    n_changed: int = 0

    def __post_init__(self) -> None:
        if self.n_changed < len(self.changed_cases):
            object.__setattr__(self, "n_changed", len(self.changed_cases))

    @property
    def killed(self) -> bool:
        """True when the suite's verdict failed on this mutant."""
        return self.status == "killed"

    @property
    def description(self) -> str:
        """The mutant's description, with what it wrote when it changed an output."""
        if self.wrote is None:
            return self.mutant.description
        return f"{self.mutant.description}; e.g. {self.wrote}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``--report-json``)."""
        out: dict[str, Any] = {
            "id": self.id,
            "operator": self.mutant.operator,
            "target": self.mutant.target,
            "description": self.mutant.description,
            "wrote": self.wrote,
            "status": self.status,
            "killed_by": list(self.killed_by),
            "kills": list(self.kills),
            "n_changed_cases": self.n_changed,
            "changed_cases": list(self.changed_cases[:SHOWN_CASES]),
            "moved": self.moved,
            "severity": self.severity,
            "suggestion": self.suggestion,
            "closest": self.closest,
            "error": self.error,
            "calls": self.calls,
            "complete": self.complete,
        }
        if self.summary is not None:
            s = self.summary
            out["metrics"] = {
                "overall_match_rate": s.overall_match_rate,
                "accuracy": s.accuracy,
                "joint_goal_accuracy": s.joint_goal_accuracy,
                "slot_accuracy": s.slot_accuracy,
                "n_errors": s.n_errors,
            }
        return out
