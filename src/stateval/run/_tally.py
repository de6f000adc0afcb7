"""A run's summary from running aggregates: each case's scores are counted as they are
produced and then dropped, so a run of 100,000 cases holds counts, not scores.

`RunTally` counts what the summary reports (per-field statuses, headline rates, slot metrics,
errors, the first failing cases); `JournalScores` is the second pass that reports needing
every case (JSON, JUnit) iterate: each planned case's result read back from the journal and
scored again, one at a time.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

from stateval._exact_sum import ExactSum
from stateval.calibration import HumanVerdict
from stateval.compare import EditTally, MetricsAccumulator
from stateval.episodes import EpisodeScore, TrajectoryTally, episode_threshold_values
from stateval.errors import JournalError
from stateval.run._calibration import run_agreement
from stateval.run._calibration_tally import CalibrationTally
from stateval.run._episode_tracker import EpisodeTracker, episode_tracker
from stateval.run._journal import Journal
from stateval.run._results import CaseResult, CaseScore
from stateval.run._scoring import Scoring, score_case
from stateval.run._summary import (
    FieldRow,
    RunSummary,
    ThresholdResult,
    field_minimum,
    threshold_results,
)
from stateval.suite import Case, EpisodeMode, Episodes, Suite

__all__ = [
    "JournalScores",
    "RunTally",
    "TallyPart",
    "journaled_results",
    "journaled_scores",
    "run_summary",
    "summarize",
]

FAILING_KEPT = 10
"""Failing cases a summary keeps for the terminal and Markdown reports (the first, in plan
order)."""


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


@dataclass(slots=True)
class _Failing:
    index: int
    score: CaseScore


@dataclass(frozen=True, slots=True)
class TallyPart:
    """A run's counts as a worker hands them back to be merged (`RunTally.part`, then
    `RunTally.merge`): plain values, so it pickles to another process or machine. Cases are
    named by their place in the worker's plan.

    Attributes:
        counts: The run-level counts (cases, errors, matching fields, ...).
        sums: The exact sums (state accuracy; weighted accuracy, None without weights).
        time_sum: The mutator's time over the cases.
        metrics: The run metrics' counts (pickled without the suite's scoring).
        edits: The edit matrix's counts.
        trajectory: The episodes' counts (None without episodes).
        calibration: The mutator's values for calibration, with their cases' places.
        failing: The first failing cases' places, in plan order.
        judged: The places of the cases with human verdicts, in plan order.
        pending_episodes: Episodes begun and not finished (a part must have none: a shard
            holds whole episodes).
    """

    counts: tuple[int, ...]
    sums: tuple[ExactSum, ExactSum | None]
    time_sum: float
    metrics: MetricsAccumulator
    edits: EditTally
    trajectory: TrajectoryTally | None
    calibration: CalibrationTally
    failing: tuple[int, ...]
    judged: tuple[int, ...]
    pending_episodes: int


_COUNTS = ("n", "n_errors", "n_overall", "n_failing", "matching", "expected")
"""`RunTally`'s integer counts, as `TallyPart.counts` holds them."""


class RunTally:
    """Running aggregates of a run's case scores (see the module docstring): the run metrics'
    `MetricsAccumulator` (per-field confusion counts, slot metrics, value P/R/F1, slices) and
    the run-level counts.

    With an `EpisodeTracker`, turns are also gathered per episode: `add` returns the episode a
    case completes, and the summary carries the trajectory metrics (`TrajectoryTally`).

    Args:
        scoring: The run's scoring (its slot schema, metric options and thresholds).
        episodes: Gathers the turns of the run's episodes (None without episodes).
    """

    def __init__(self, scoring: Scoring, episodes: EpisodeTracker | None = None) -> None:
        self.scoring = scoring
        self.episodes = episodes
        self.trajectory = None if episodes is None else TrajectoryTally(episodes.mode)
        self.metrics = scoring.accumulator()
        self._strict_metrics = self.metrics.counts_strict  # strict cases counted off columns
        self.edits = EditTally()
        self.n = 0
        self.n_errors = 0
        self.n_overall = 0
        self.n_failing = 0
        self.matching = 0
        self.expected = 0
        self.accuracy_sum = ExactSum()  # the same figure in any order of the cases
        self.weighted_sum = ExactSum() if scoring.policies.has_weights else None
        self.time_sum = 0.0
        self._failing: list[_Failing] = []
        self._failing_keys: list[int] = []
        self._calibration = CalibrationTally()
        self._judged: list[CaseScore] = []
        self._judged_at: list[int] = []  # their places in the plan
        self._human: dict[str, Mapping[str, HumanVerdict]] = {}

    def add(self, case: Case, score: CaseScore, index: int) -> EpisodeScore | None:
        """Count one case's scores; ``index`` is its place in the plan (orders failing cases).
        Returns the episode the case completes, if it does."""
        self.n += 1
        comparison = score.comparison
        # a case decided as columns is counted off them (metrics, calibration, edits)
        strict = score.strict_under(self.scoring)
        if strict is not None and self._strict_metrics:
            self.metrics.add_strict(strict, case.metadata)
        else:
            self.metrics.add_case(
                score.metrics_under(self.scoring, case), case.metadata, comparison
            )
        if strict is not None:  # only made for a state returned: its counts are its columns'
            matching, mismatched, missing, extra = strict.shape.counts
            self.matching += matching
            self.expected += matching + mismatched + missing
            overall = not (mismatched or missing or extra)
        else:
            self.matching += comparison.n_matching
            self.expected += comparison.n_expected
            overall = score.overall_match
            self.n_errors += not score.ok
        self.n_overall += overall
        self.accuracy_sum += score.accuracy
        if self.weighted_sum is not None:
            weighted = score.evaluation("weighted_state_accuracy")
            self.weighted_sum += 0.0 if weighted is None else weighted.score or 0.0
        self.time_sum += score.result.time_used
        if not overall or (score.checks and score.failed_checks):
            self.n_failing += 1
            self._keep_failing(index, score)
        if strict is not None:  # only made for a state returned
            self._calibration.add_strict(strict, index)
            self.edits.add_strict(strict)
        elif score.ok:
            self._calibration.add(comparison, index)
            edits = score.edits_under(self.scoring, case)
            if edits is not None:
                self.edits.add(edits)
        if case.human:  # human verdicts on judged fields: few cases, kept whole
            self._judged.append(score)
            self._judged_at.append(index)
            self._human[case.id] = case.human
        if self.episodes is None or self.trajectory is None:
            return None
        done = self.episodes.add(case, score)
        if done is None:
            return None
        self.trajectory.add(*done)
        return done[0]

    def part(self) -> TallyPart:
        """These counts, to be merged into the run's (a worker's shard, handed to the driver)."""
        return TallyPart(
            counts=tuple(getattr(self, name) for name in _COUNTS),
            sums=(self.accuracy_sum, self.weighted_sum),
            time_sum=self.time_sum,
            metrics=self.metrics,
            edits=self.edits,
            trajectory=self.trajectory,
            calibration=self._calibration,
            failing=tuple(self._failing_keys),
            judged=tuple(sorted(self._judged_at)),
            pending_episodes=0 if self.episodes is None else self.episodes.n_pending,
        )

    def merge(
        self,
        part: TallyPart,
        positions: Sequence[int],
        score: Callable[[int], tuple[Case, CaseScore]],
    ) -> None:
        """Count the cases ``part`` counted, as if each had been added here: O(fields), but
        for the calibration values (copied) and the few cases kept whole (the first failing,
        those with human verdicts: scored again by ``score``).

        Args:
            part: A shard's counts (`part`).
            positions: The place in this run's plan of each case of the shard's plan.
            score: The case at a place in this run's plan, and its scores.

        Raises:
            JournalError: The part holds unfinished episodes (episodes split across parts).
        """
        if part.pending_episodes:
            raise JournalError(
                f"a shard holds {part.pending_episodes} unfinished episode(s): its episodes "
                "were split across shards"
            )
        for name, value in zip(_COUNTS, part.counts, strict=True):
            setattr(self, name, getattr(self, name) + value)
        accuracy, weighted = part.sums
        self.accuracy_sum.merge(accuracy)
        if self.weighted_sum is not None and weighted is not None:
            self.weighted_sum.merge(weighted)
        self.time_sum += part.time_sum
        self.metrics.merge(part.metrics)
        self.edits.merge(part.edits)
        if self.trajectory is not None and part.trajectory is not None:
            self.trajectory.merge(part.trajectory)
        self._calibration.merge(part.calibration, positions)
        for index in (positions[i] for i in part.failing):
            if len(self._failing) < FAILING_KEPT or index < self._failing_keys[-1]:
                self._keep_failing(index, score(index)[1])
        for index in (positions[i] for i in part.judged):
            case, judged = score(index)
            at = bisect.bisect(self._judged_at, index)
            self._judged_at.insert(at, index)
            self._judged.insert(at, judged)
            self._human[case.id] = case.human

    def _keep_failing(self, index: int, score: CaseScore) -> None:
        if len(self._failing) >= FAILING_KEPT and index > self._failing_keys[-1]:
            return
        at = bisect.bisect(self._failing_keys, index)
        self._failing_keys.insert(at, index)
        self._failing.insert(at, _Failing(index, score))
        del self._failing_keys[FAILING_KEPT:], self._failing[FAILING_KEPT:]

    def summary(
        self,
        cases: Sequence[CaseScore],
        *,
        suite_name: str,
        run_id: str,
        n_planned: int,
        experiment_url: str | None = None,
    ) -> RunSummary:
        """The `RunSummary` of what was counted; ``cases`` is what reports iterate."""
        scoring = self.scoring
        metrics = self.metrics.result()
        minimums = scoring.thresholds.fields
        rows = [FieldRow.of(f, field_minimum(f.path, minimums)) for f in metrics.worst_fields()]
        n = self.n
        has_slots = scoring.slots is not None
        jga = metrics.joint_goal_accuracy if has_slots else None
        slot_acc = metrics.slot_accuracy if has_slots else None
        values = {
            "overall_match_rate": _ratio(self.n_overall, n),
            "accuracy": _ratio(self.matching, self.expected),
            "joint_goal_accuracy": jga,
            "slot_accuracy": slot_acc,
            "value_precision": metrics.precision,
            "value_recall": metrics.recall,
            "value_f1": metrics.f1,
            "mean_weighted_state_accuracy": None
            if self.weighted_sum is None
            else _ratio(float(self.weighted_sum), n),
        }
        agreement = run_agreement(self._judged, self._human)
        values["judge_kappa"] = None if agreement is None else agreement.overall.kappa
        thresholds = threshold_results(scoring.thresholds, values, _ratio(self.n_errors, n), rows)
        trajectory = None if self.trajectory is None else self.trajectory.summary()
        thresholds += tuple(
            ThresholdResult(name, value, limit, "min", value is not None and value >= limit)
            for name, value, limit in episode_threshold_values(scoring.thresholds, trajectory)
        )
        return RunSummary(
            suite_name=suite_name,
            run_id=run_id,
            n_cases=n,
            n_planned=n_planned,
            n_errors=self.n_errors,
            overall_match_rate=values["overall_match_rate"] or 0.0,
            accuracy=values["accuracy"] or 0.0,
            mean_state_accuracy=_ratio(float(self.accuracy_sum), n),
            joint_goal_accuracy=jga,
            slot_accuracy=slot_acc,
            fields=tuple(rows),
            thresholds=thresholds,
            cases=cases,
            experiment_url=experiment_url,
            mean_time=_ratio(self.time_sum, n),
            metrics=metrics,
            calibration=self._calibration.report(),
            agreement=agreement,
            failing=tuple(f.score for f in self._failing),
            n_failing=self.n_failing,
            episodes=trajectory,
            edits=self.edits.result(),
            mean_weighted_state_accuracy=values["mean_weighted_state_accuracy"],
        )


def summarize(
    scores: Iterable[CaseScore],
    scoring: Scoring,
    *,
    cases: Sequence[Case],
    suite_name: str,
    run_id: str,
    n_planned: int | None = None,
    experiment_url: str | None = None,
    episodes: Episodes | None = None,
    mode: EpisodeMode = "teacher_forced",
) -> RunSummary:
    """Summarise case scores held in memory (in any order) into a `RunSummary` whose cases
    are in the order of ``cases`` (with ``episodes``, its trajectory metrics in ``mode``)."""
    by_id = {s.case_id: s for s in scores}
    tracker = episode_tracker(episodes, [c.id for c in cases], mode, scoring)
    tally = RunTally(scoring, tracker)
    order: list[CaseScore] = []
    for case in cases:
        score = by_id.get(case.id)
        if score is not None:
            tally.add(case, score, len(order))
            order.append(score)
    return tally.summary(
        tuple(order),
        suite_name=suite_name,
        run_id=run_id,
        n_planned=len(cases) if n_planned is None else n_planned,
        experiment_url=experiment_url,
    )


class JournalScores(Sequence[CaseScore]):
    """Every planned case of a journaled run that has a result, scored again from the journal
    one at a time, in suite order, each time it is iterated (a second pass: nothing is kept).

    Args:
        suite: The suite (its cases and expected states).
        journal: The run.
        scoring: How to score.
    """

    def __init__(self, suite: Suite, journal: Journal, scoring: Scoring) -> None:
        self.suite = suite
        self.journal = journal
        self.scoring = scoring
        self._ids = [c for c in journal.header.case_ids if c in journal.results]

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> CaseScore: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[CaseScore]: ...

    def __getitem__(self, index: int | slice) -> CaseScore | Sequence[CaseScore]:
        if isinstance(index, slice):
            return [self._score(case_id) for case_id in self._ids[index]]
        return self._score(self._ids[index])

    def _score(self, case_id: str) -> CaseScore:
        case = self.suite.case(case_id)
        if case is None:
            raise JournalError(f"run {self.journal.run_id}: case {case_id!r} left the suite")
        result = CaseResult.from_dict(self.journal.results[case_id])
        return score_case(case, result, self.scoring)

    def __iter__(self) -> Iterator[CaseScore]:
        for case, result in journaled_results(self.suite, self.journal, set(self._ids)):
            yield score_case(case, result, self.scoring)


def journaled_results(
    suite: Suite, journal: Journal, case_ids: Collection[str]
) -> Iterator[tuple[Case, CaseResult]]:
    """``(case, journaled result)`` of each of ``case_ids`` that has a result, in suite order,
    read one at a time (the case file and the journal each through one open file)."""
    current: list[Case] = []

    def ids() -> Iterator[str]:
        for case in suite.cases.select(case_ids):
            current[:] = [case]
            yield case.id

    for _, result in journal.results.results(ids()):
        if result is not None:
            yield current[0], result


def journaled_scores(suite: Suite, journal: Journal, scoring: Scoring) -> dict[str, CaseScore]:
    """Scores of every planned case that already has a journaled result (held in memory: for
    small runs and tests; a run's summary uses `RunTally` and `JournalScores`)."""
    return {s.case_id: s for s in JournalScores(suite, journal, scoring)}


def run_summary(
    suite: Suite, journal: Journal, tally: RunTally, experiment_url: str | None = None
) -> RunSummary:
    """The summary of ``journal``'s run from its running aggregates; its cases are read back
    from the journal when a report iterates them."""
    return tally.summary(
        JournalScores(suite, journal, tally.scoring),
        suite_name=suite.name,
        run_id=journal.run_id,
        n_planned=len(journal.header.case_ids),
        experiment_url=experiment_url,
    )
