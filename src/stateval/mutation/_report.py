"""A mutation test's report: the baseline, every mutant's result, the probes, the scores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stateval.mutation._probes import ProbeResult
from stateval.mutation._score import STATUSES, MutantResult, MutationScore
from stateval.run import RunSummary

if TYPE_CHECKING:
    from stateval.mutation._experiments import MutationExperiments

__all__ = ["MutationReport"]


@dataclass(frozen=True, slots=True)
class MutationReport:
    """A mutation test of a suite: the baseline, every mutant's result, the probes.

    Attributes:
        suite_name: The suite.
        seed: The seed used.
        operators: The operators that ran, by name.
        baseline: The baseline run's summary.
        baseline_failures: Verdict elements the baseline already fails (they cannot kill).
        results: Every mutant's result, in generation order.
        probes: Every probe's result.
        calls: Paid calls made (baseline included).
        max_calls: The budget, if any.
        phoenix: Where the baseline and mutants were logged in Phoenix, if they were
            (`stateval.mutation.log_mutation`).
        unwritten: Fields some case expects the mutator to change that its baseline output
            never changes (the fields state mutants of them find nothing to degrade in: they
            come out inert).
        mode: How the turns of the suite's episodes ran (``teacher_forced`` without episodes).
    """

    suite_name: str
    seed: int
    operators: tuple[str, ...]
    baseline: RunSummary
    baseline_failures: tuple[str, ...]
    results: tuple[MutantResult, ...]
    probes: tuple[ProbeResult, ...]
    calls: int = 0
    max_calls: int | None = None
    phoenix: MutationExperiments | None = None
    unwritten: tuple[str, ...] = ()
    mode: str = "teacher_forced"

    def count(self, status: str) -> int:
        """How many mutants have ``status``."""
        return sum(1 for r in self.results if r.status == status)

    @property
    def score(self) -> MutationScore:
        """Killed over evaluated (killed, survived, equivalent and inert mutants)."""
        killed = self.count("killed")
        unseen = self.count("equivalent") + self.count("inert")
        return MutationScore.of(killed, killed + self.count("survived") + unseen)

    @property
    def effective_score(self) -> MutationScore:
        """Killed over the mutants the suite could observe (equivalent and inert ones left
        out)."""
        killed = self.count("killed")
        return MutationScore.of(killed, killed + self.count("survived"))

    @property
    def equivalents(self) -> tuple[MutantResult, ...]:
        """Mutants whose output changed where the suite cannot see it, in generation order."""
        return tuple(r for r in self.results if r.status == "equivalent")

    @property
    def survivors(self) -> tuple[MutantResult, ...]:
        """Surviving mutants, most severe first."""
        order = {"high": 0, "medium": 1, "low": 2}
        alive = [r for r in self.results if r.status == "survived"]
        return tuple(sorted(alive, key=lambda r: (order.get(r.severity or "low", 3), r.id)))

    def passes(self, fail_under: float | None) -> bool:
        """True unless ``fail_under`` (a percentage) is set and the mutation score is below it."""
        if fail_under is None:
            return True
        value = self.score.value
        return value is not None and value * 100 >= fail_under

    def to_dict(self) -> dict[str, Any]:
        """The JSON report (``--report-json``)."""
        mutants = [r.to_dict() for r in self.results]
        if self.phoenix is not None:
            for item in mutants:
                item["experiment_url"] = self.phoenix.url_of(item["id"])
        return {
            "suite": self.suite_name,
            "seed": self.seed,
            "operators": list(self.operators),
            "mode": self.mode,
            "baseline": {
                "passed": self.baseline.passed,
                "failures": list(self.baseline_failures),
                "n_cases": self.baseline.n_cases,
                "overall_match_rate": self.baseline.overall_match_rate,
                "accuracy": self.baseline.accuracy,
                "joint_goal_accuracy": self.baseline.joint_goal_accuracy,
                "slot_accuracy": self.baseline.slot_accuracy,
                "thresholds": [t.to_dict() for t in self.baseline.thresholds],
            },
            "counts": {s: self.count(s) for s in STATUSES},
            "score": self.score.to_dict(),
            "effective_score": self.effective_score.to_dict(),
            "calls": self.calls,
            "max_calls": self.max_calls,
            "survivors": [r.id for r in self.survivors],
            "mutants": mutants,
            "probes": [p.to_dict() for p in self.probes],
            "phoenix": None if self.phoenix is None else self.phoenix.to_dict(),
            "unwritten_fields": list(self.unwritten),
        }
