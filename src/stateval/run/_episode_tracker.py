"""A run's scored turns gathered per episode, each episode scored the moment its last planned turn
arrives (turns of one episode usually arrive together, so little is held).

`EpisodeTracker` keeps one small `TurnRecord` per turn of the episodes still in progress and
hands back each episode's `EpisodeScore` (`stateval.episodes`) once it is complete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stateval.compare import FieldStatus, Outcome, StateComparison
from stateval.episodes import SKIPPED, EpisodeScore, TurnRecord, score_episode
from stateval.run._results import CaseScore
from stateval.run._scoring import Scoring
from stateval.suite import Case, Episodes

__all__ = ["EpisodeTracker", "episode_tracker", "turn_fields", "turn_record"]

_WRONG = frozenset({Outcome.WRONG, Outcome.MISSING, Outcome.EXTRA})
_ABSENT = object()


def turn_record(case: Case, score: CaseScore, scoring: Scoring) -> TurnRecord:
    """The record of a scored case (a turn of an episode); a field is *set* at this turn when
    the case's own (gold) pre-state does not hold its expected value, whatever the mode."""
    metrics = score.metrics_under(scoring, case)
    wrong = frozenset(o.path for o in metrics.outcomes if o.outcome in _WRONG)
    comparison = score.comparison
    return TurnRecord(
        turn=case.turn_index if case.turn_index is not None else 0,
        case_id=case.id,
        ok=score.ok,
        right=score.ok and metrics.joint_goal,
        accuracy=score.accuracy,
        matching=comparison.counts["matching"],
        expected=comparison.n_expected,
        wrong=wrong,
        skipped=score.result.error_type == SKIPPED,
        fields=turn_fields(case, comparison),
    )


def turn_fields(case: Case, comparison: StateComparison) -> tuple[tuple[str, bool, bool], ...]:
    """``(path, set here, right)`` of each expected field of a turn: set when the case's own
    (gold) pre-state does not hold its expected value, whatever the mode; right when it
    matches (fields a policy ignores are left out)."""
    pre, expected = case.pre_state.flat_values, case.expected_post_state.flat_values
    before = pre.values if pre is not None else case.pre_state.to_flat()
    after = expected.values if expected is not None else case.expected_post_state.to_flat()
    out = []
    for path, value in after.items():
        status = comparison.status(path)
        if status is not None:
            was = before.get(path, _ABSENT)
            out.append((path, was is _ABSENT or was != value, status is FieldStatus.MATCHING))
    return tuple(out)


class EpisodeTracker:
    """Gathers a run's scored turns per episode; an episode is scored when its last planned
    turn arrives (in any order).

    Args:
        plan: Episode id -> its planned case ids, in turn order.
        mode: The run's mode.
        scoring: The run's scoring (decides which fields count).
    """

    def __init__(self, plan: Mapping[str, Sequence[str]], mode: str, scoring: Scoring) -> None:
        self.plan = plan
        self.mode = mode
        self.scoring = scoring
        self._where = {c: (e, i) for e, ids in plan.items() for i, c in enumerate(ids)}
        self._pending: dict[str, list[TurnRecord | None]] = {}

    @property
    def n_pending(self) -> int:
        """Episodes begun and not yet complete."""
        return len(self._pending)

    def episode_of(self, case_id: str) -> str | None:
        """The planned episode ``case_id`` is a turn of, or None."""
        found = self._where.get(case_id)
        return None if found is None else found[0]

    def add(
        self, case: Case, score: CaseScore
    ) -> tuple[EpisodeScore, tuple[TurnRecord, ...]] | None:
        """Take one scored turn; return its episode's score and turns if it completed it."""
        found = self._where.get(case.id)
        if found is None:
            return None
        episode, position = found
        slots = self._pending.get(episode)
        if slots is None:
            slots = self._pending[episode] = [None] * len(self.plan[episode])
        if slots[position] is not None:
            return None  # a second repetition of the turn: episodes count the first
        slots[position] = turn_record(case, score, self.scoring)
        if any(s is None for s in slots):
            return None
        del self._pending[episode]
        turns = tuple(s for s in slots if s is not None)
        return score_episode(episode, self.mode, turns), turns


def episode_tracker(
    episodes: Episodes | None, case_ids: Sequence[str], mode: str, scoring: Scoring
) -> EpisodeTracker | None:
    """The tracker of a run planning ``case_ids`` of a suite with ``episodes`` (None without)."""
    if episodes is None:
        return None
    return EpisodeTracker(episodes.plan(set(case_ids)), mode, scoring)
