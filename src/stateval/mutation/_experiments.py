"""Where a mutation test went in Phoenix (what `log_mutation` returns)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stateval.upload import ExperimentRef

__all__ = ["MutationExperiments"]


@dataclass(frozen=True, slots=True)
class MutationExperiments:
    """Where a mutation test went in Phoenix.

    Attributes:
        url: The Phoenix server.
        dataset_id: The suite's dataset.
        baseline: The baseline's experiment (None if it could not be created).
        mutants: Mutant id -> its experiment.
        runs: Experiment runs posted.
        evaluations: Evaluations posted.
        error: Why logging stopped early, if it did (the mutation test itself is unaffected).
    """

    url: str
    dataset_id: str | None = None
    baseline: ExperimentRef | None = None
    mutants: Mapping[str, ExperimentRef] = field(default_factory=dict)
    runs: int = 0
    evaluations: int = 0
    error: str | None = None

    def url_of(self, mutant_id: str) -> str | None:
        """The mutant's experiment in the Phoenix UI, compared with the baseline when there is
        one, or None when it was not logged. The mutant is the compare view's base, so the
        view lists only the cases it changed (its split), each beside the baseline's run."""
        ref = self.mutants.get(mutant_id)
        if ref is None:
            return None
        if self.baseline is None:
            return ref.url
        return f"{ref.url}&experimentId={self.baseline.id}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``--report-json``)."""
        return {
            "url": self.url,
            "dataset_id": self.dataset_id,
            "baseline_experiment_id": None if self.baseline is None else self.baseline.id,
            "baseline_experiment_url": None if self.baseline is None else self.baseline.url,
            "experiments": {
                mid: {
                    "id": ref.id,
                    "name": ref.name,
                    "url": ref.url,
                    "compare_url": self.url_of(mid),
                }
                for mid, ref in self.mutants.items()
            },
            "runs": self.runs,
            "evaluations": self.evaluations,
            "error": self.error,
        }
