"""What a diff compares: every case's evaluations in one run, per repetition, wherever they came
from (a journaled local run rescored under its suite, or a Phoenix experiment read over REST)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from sys import intern
from typing import TYPE_CHECKING, Any

from stateval.compare import FIELD_PREFIX, op_counts, slot_counts
from stateval.run import RunSummary

if TYPE_CHECKING:
    from stateval.run import CaseScore

__all__ = ["FIELD_PREFIX", "ExperimentLink", "Observation", "ScoredRun", "edit_counts"]

"""Evaluations named ``field:<path>`` are per-field verdicts."""


OP_PREFIX = "op:"

_SHARED = {0.0: 0.0, 1.0: 1.0}  # the two scores most evaluations have, one object each


def edit_counts(
    evaluations: Iterable[tuple[str, str | None]],
) -> dict[str, tuple[int, int, Mapping[str, int]]]:
    """Operation -> its counts, from ``(name, explanation)`` of a case's ``op:<op>``
    evaluations."""
    out: dict[str, tuple[int, int, Mapping[str, int]]] = {}
    for name, explanation in evaluations:
        if name.startswith(OP_PREFIX):
            counts = op_counts(explanation)
            if counts is not None:
                out[name.removeprefix(OP_PREFIX)] = counts
    return out


@dataclass(frozen=True, slots=True)
class Observation:
    """One repetition of one case.

    Attributes:
        scores: Evaluation name -> score (``field:<path>``, ``state_accuracy``...).
        labels: Evaluation name -> label, where there is one (``extra``, ``error``...).
        error: True when the mutator call failed.
        time_used: Seconds the mutator call took, when known.
        slots: ``(right, total)`` schema slots of its ``slot_accuracy`` evaluation (see
            `stateval.compare.slot_counts`), when it has one.
        ops: Expected operation (``keep``, ``add``, ``update``, ``delete``) -> ``(right, n,
            {error: count})`` of its ``op:<op>`` evaluation (`stateval.compare.op_counts`).
        shares: Run-summary figure -> this case's ``(numerator, denominator)`` share of it,
            as the run's suite computes it (`stateval.compare.MetricsAccumulator.case_shares`:
            value precision / recall / F1 under its ``metrics:`` settings and slot schema, a
            convention's figures); a local run's observations have them.
        value_labels: Whether value precision / recall / F1 may be counted from the field
            evaluations' labels when ``shares`` lacks them (the default conventions over every
            field evaluation): False for an experiment whose run used other conventions.
    """

    scores: Mapping[str, float]
    labels: Mapping[str, str] = field(default_factory=dict)
    error: bool = False
    time_used: float | None = None
    slots: tuple[int, int] | None = None
    ops: Mapping[str, tuple[int, int, Mapping[str, int]]] = field(default_factory=dict)
    shares: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    value_labels: bool = True

    @classmethod
    def from_case_score(
        cls, score: CaseScore, shares: Mapping[str, tuple[float, float]] | None = None
    ) -> Observation:
        """The observation of one scored case of a local run (``shares``: its share of the
        run-summary figures, see the attribute): the names, scores and labels of its
        evaluations, read from the scoring core without making each field's explanation
        (`stateval.compare.CaseScores.field_outcomes`) when the score can."""
        core = score.case_scores()
        named: list[tuple[str, float, str | None, str | None]]
        if core is None:
            named = [(e.name, e.score, e.label, e.explanation) for e in score.evaluations]
        else:
            named = [
                (v.name, v.score, v.label, v.explanation)
                for v in (*core.case_level(), *core.edit_ops())
                if v.score is not None
            ]
            named += [(name, value, label, None) for name, value, label in core.field_outcomes()]
            named += [(e.name, e.score, e.label, e.explanation) for e in score.checks]
        slot = next((text for name, _, _, text in named if name == "slot_accuracy"), None)
        # names interned and scores of 0 and 1 shared: 100k cases share one object for each
        return cls(
            scores={intern(name): _SHARED.get(value, value) for name, value, _, _ in named},
            labels={intern(name): label for name, _, label, _ in named if label is not None},
            error=not score.ok,
            time_used=score.result.time_used,
            slots=None if slot is None else slot_counts(slot),
            ops=edit_counts((name, text) for name, _, _, text in named),
            shares={} if shares is None else {intern(k): v for k, v in shares.items()},
        )

    @classmethod
    def from_compact(
        cls, data: Mapping[str, Any], *, error: bool, time_used: float | None
    ) -> Observation:
        """The observation of a local run's case from its compact scores
        (`stateval.run.compact_scores`, journaled with its result or made from its score):
        what the diff's columns and metrics read, its field labels only where ``extra``."""
        slots = data.get("slots")
        return cls(
            scores={intern(name): _SHARED.get(value, value) for name, value in data["s"].items()},
            labels={intern(name): "extra" for name in data.get("x", ())},
            error=error,
            time_used=time_used,
            slots=None if slots is None else (int(slots[0]), int(slots[1])),
            ops={
                op: (int(right), int(n), dict(errors))
                for op, (right, n, errors) in data.get("ops", {}).items()
            },
            shares={intern(k): (float(a), float(b)) for k, (a, b) in data["shares"].items()},
        )

    @property
    def fields(self) -> list[str]:
        """The field paths evaluated in this observation."""
        return [n.removeprefix(FIELD_PREFIX) for n in self.scores if n.startswith(FIELD_PREFIX)]


@dataclass(frozen=True, slots=True)
class ExperimentLink:
    """Where a run lives in Phoenix.

    Attributes:
        phoenix_url: The server's base URL.
        dataset_id: The experiment's dataset.
        experiment_id: The experiment.
    """

    phoenix_url: str
    dataset_id: str
    experiment_id: str

    @property
    def url(self) -> str:
        """The experiment in the Phoenix UI."""
        return (
            f"{self.phoenix_url}/datasets/{self.dataset_id}/compare?"
            f"experimentId={self.experiment_id}"
        )


@dataclass(frozen=True, slots=True)
class ScoredRun:
    """One side of a diff.

    Attributes:
        label: How the run is named in reports (``run 20250101-...``, ``experiment RXhw...``).
        cases: Case id -> its observations, one per repetition.
        experiment: The run's Phoenix experiment, when it has one.
        suite_name: The suite, when known.
        unfinished: For a journaled run without its ``end`` record, what it holds
            (``2 of 3 planned cases``); None for a finished run or an experiment.
    """

    label: str
    cases: Mapping[str, Sequence[Observation]]
    experiment: ExperimentLink | None = None
    suite_name: str | None = None
    unfinished: str | None = None

    @classmethod
    def from_scores(
        cls,
        label: str,
        scores: Iterable[CaseScore] | Mapping[str, Sequence[CaseScore]] | Mapping[str, CaseScore],
        *,
        experiment: ExperimentLink | None = None,
        suite_name: str | None = None,
    ) -> ScoredRun:
        """A run from local case scores: one per case, or case id -> its score, or case id ->
        one score per repetition."""
        if isinstance(scores, Mapping):
            cases = {
                case_id: tuple(
                    Observation.from_case_score(s)
                    for s in (reps if isinstance(reps, Sequence) else (reps,))
                )
                for case_id, reps in scores.items()
            }
        else:
            cases = {s.case_id: (Observation.from_case_score(s),) for s in scores}
        return cls(label, cases, experiment, suite_name)

    @classmethod
    def from_summary(
        cls, summary: RunSummary, *, experiment: ExperimentLink | None = None
    ) -> ScoredRun:
        """A run from its summary (one repetition per case)."""
        return cls.from_scores(
            f"run {summary.run_id}",
            summary.cases,
            experiment=experiment,
            suite_name=summary.suite_name,
        )

    @property
    def repetitions(self) -> int:
        """The most repetitions any case has."""
        return max((len(reps) for reps in self.cases.values()), default=0)

    @property
    def case_ids(self) -> tuple[str, ...]:
        """Its cases."""
        return tuple(self.cases)
