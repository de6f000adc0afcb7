"""Trajectory metrics of a run's episodes, from running aggregates (one pass, linear).

Per turn index (a curve): how many episodes reach it, the fraction of those turns right (joint
goal accuracy with a slot schema), the pooled field accuracy, and the field errors inherited from
the turn before, introduced at it, or corrected at it. Per episode, pooled: success rate, mean
episode accuracy, the first-divergence distribution, recovery. Per field: in how many episodes
it goes wrong, at which turn first, and its inherited / introduced / corrected counts.

Recovery rate is turn-level: of the turns whose previous turn was not right, the fraction that
are right (the state got back on track).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from stateval._exact_sum import ExactSum
from stateval.episodes._retention import RetentionCurve, RetentionTally
from stateval.episodes._score import EpisodeScore, TurnRecord, propagation

__all__ = ["FieldTrajectory", "TrajectorySummary", "TrajectoryTally", "TurnPoint"]


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


@dataclass(slots=True)
class _TurnCounts:
    n: int = 0
    right: int = 0
    errors: int = 0
    accuracy_sum: ExactSum = field(default_factory=ExactSum)
    matching: int = 0
    expected: int = 0
    inherited: int = 0
    introduced: int = 0
    corrected: int = 0

    def merge(self, other: _TurnCounts) -> None:
        for f in fields(self):
            if f.name == "accuracy_sum":
                self.accuracy_sum.merge(other.accuracy_sum)
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass(slots=True)
class _FieldCounts:
    episodes_wrong: int = 0
    first_wrong_sum: int = 0
    inherited: int = 0
    introduced: int = 0
    corrected: int = 0

    def merge(self, other: _FieldCounts) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass(frozen=True, slots=True)
class TurnPoint:
    """The run's figures at one turn index.

    Attributes:
        turn: The turn index.
        n: Episodes that reach it.
        right: Those whose turn is right.
        joint_goal_accuracy: right / n (every scored slot, or field, right).
        accuracy: Matching expected fields over expected fields at this turn.
        mean_state_accuracy: Mean ``state_accuracy`` of the turns.
        errors: Failed mutator calls (skipped turns included).
        inherited: Field errors carried over from the turn before.
        introduced: Field errors new at this turn.
        corrected: Fields wrong at the turn before and right at this one.
    """

    turn: int
    n: int
    right: int
    joint_goal_accuracy: float
    accuracy: float | None
    mean_state_accuracy: float
    errors: int
    inherited: int
    introduced: int
    corrected: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "turn": self.turn,
            "n": self.n,
            "right": self.right,
            "joint_goal_accuracy": self.joint_goal_accuracy,
            "accuracy": self.accuracy,
            "mean_state_accuracy": self.mean_state_accuracy,
            "errors": self.errors,
            "inherited": self.inherited,
            "introduced": self.introduced,
            "corrected": self.corrected,
        }


@dataclass(frozen=True, slots=True)
class FieldTrajectory:
    """How one field fared over the episodes.

    Attributes:
        path: The field.
        episodes_wrong: Episodes in which it is wrong at some turn.
        mean_first_wrong: The mean turn index where it first goes wrong (over those episodes).
        inherited: Turns where its error was carried over from the turn before.
        introduced: Turns where it went wrong (it was right, or absent, the turn before).
        corrected: Turns where it was wrong the turn before and is right now.
    """

    path: str
    episodes_wrong: int
    mean_first_wrong: float | None
    inherited: int
    introduced: int
    corrected: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "path": self.path,
            "episodes_wrong": self.episodes_wrong,
            "mean_first_wrong": self.mean_first_wrong,
            "inherited": self.inherited,
            "introduced": self.introduced,
            "corrected": self.corrected,
        }


@dataclass(frozen=True, slots=True)
class TrajectorySummary:
    """A run's trajectory metrics (see the module docstring).

    Attributes:
        mode: ``teacher_forced`` or ``free_running``.
        n_episodes: Episodes scored (every planned turn of them).
        n_success: Episodes with every turn right.
        episode_success: n_success / n_episodes.
        mean_episode_accuracy: The mean over episodes of their fraction of turns right.
        first_divergence: Turn index -> episodes that first diverge there.
        n_recovered: Diverged episodes that are right again at a later turn.
        recovery_rate: Of the turns whose previous turn is not right, the fraction right.
        inherited: Field errors carried over from the turn before (all turns).
        introduced: Field errors new at their turn.
        corrected: Fields wrong at one turn and right at the next.
        turns: The per-turn curve, by turn index.
        fields: Per-field figures, most often wrong first.
        retention: Accuracy by memory age (turns since the gold value was set), pooled and
            per field (`stateval.episodes.RetentionCurve`).
    """

    mode: str
    n_episodes: int
    n_success: int
    episode_success: float | None
    mean_episode_accuracy: float | None
    first_divergence: Mapping[int, int]
    n_recovered: int
    recovery_rate: float | None
    inherited: int
    introduced: int
    corrected: int
    turns: tuple[TurnPoint, ...]
    fields: tuple[FieldTrajectory, ...] = field(default=())
    retention: RetentionCurve | None = None

    @property
    def n_diverged(self) -> int:
        """Episodes with a turn that is not right."""
        return self.n_episodes - self.n_success

    def per_turn(self, metric: str, min_episodes: int = 1) -> list[tuple[int, float]]:
        """``(turn, value)`` of ``metric`` (``joint_goal_accuracy`` or ``accuracy``) at each
        turn index reached by at least ``min_episodes`` episodes."""
        out: list[tuple[int, float]] = []
        for point in self.turns:
            value = getattr(point, metric)
            if point.n >= min_episodes and value is not None:
                out.append((point.turn, value))
        return out

    def to_dict(self) -> dict[str, Any]:
        """Its counts and curves as JSON; the JSON report's ``episodes`` object adds the run
        value of each metric of the table (`stateval.episodes.trajectory_dict`)."""
        return {
            "mode": self.mode,
            "n_episodes": self.n_episodes,
            "n_success": self.n_success,
            "first_divergence": {str(k): v for k, v in sorted(self.first_divergence.items())},
            "n_recovered": self.n_recovered,
            "inherited": self.inherited,
            "introduced": self.introduced,
            "corrected": self.corrected,
            "turns": [t.to_dict() for t in self.turns],
            "fields": [f.to_dict() for f in self.fields],
            "retention": None if self.retention is None else self.retention.to_dict(),
        }


class TrajectoryTally:
    """Running aggregates of a run's episode scores and turns.

    Args:
        mode: The run's mode.
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.n_episodes = 0
        self.n_success = 0
        self.accuracy_sum = ExactSum()  # the same figure in any order of the episodes
        self.n_recovered = 0
        self.after_wrong = 0
        self.recovered_turns = 0
        self.first_divergence: dict[int, int] = {}
        self._turns: dict[int, _TurnCounts] = {}
        self._fields: dict[str, _FieldCounts] = {}
        self._retention = RetentionTally()

    def add(self, episode: EpisodeScore, turns: Sequence[TurnRecord]) -> None:
        """Count one complete episode (its turns in order)."""
        self.n_episodes += 1
        self._retention.add(turns)
        self.n_success += episode.success
        self.accuracy_sum += episode.accuracy
        self.n_recovered += episode.recovered
        if episode.first_divergence_turn is not None:
            turn = episode.first_divergence_turn
            self.first_divergence[turn] = self.first_divergence.get(turn, 0) + 1
        for path, turn in episode.first_wrong.items():
            counts = self._field(path)
            counts.episodes_wrong += 1
            counts.first_wrong_sum += turn
        before: frozenset[str] = frozenset()
        previous_right: bool | None = None
        for record in turns:
            point = self._turns.get(record.turn)
            if point is None:
                point = self._turns[record.turn] = _TurnCounts()
            point.n += 1
            point.right += record.right
            point.errors += not record.ok
            point.accuracy_sum += record.accuracy
            point.matching += record.matching
            point.expected += record.expected
            kept, new, fixed = propagation(before, record.wrong)
            point.inherited += len(kept)
            point.introduced += len(new)
            point.corrected += len(fixed)
            for paths, name in ((kept, "inherited"), (new, "introduced"), (fixed, "corrected")):
                for path in paths:
                    counts = self._field(path)
                    setattr(counts, name, getattr(counts, name) + 1)
            if previous_right is False:
                self.after_wrong += 1
                self.recovered_turns += record.right
            before, previous_right = record.wrong, record.right

    def merge(self, other: TrajectoryTally) -> None:
        """Add the counts of ``other`` (another shard's episodes, say), as if its episodes had
        been added here."""
        self.n_episodes += other.n_episodes
        self.n_success += other.n_success
        self.accuracy_sum.merge(other.accuracy_sum)
        self.n_recovered += other.n_recovered
        self.after_wrong += other.after_wrong
        self.recovered_turns += other.recovered_turns
        for turn, n in other.first_divergence.items():
            self.first_divergence[turn] = self.first_divergence.get(turn, 0) + n
        for turn, counts in other._turns.items():
            point = self._turns.get(turn)
            if point is None:
                point = self._turns[turn] = _TurnCounts()
            point.merge(counts)
        for path, field_counts in other._fields.items():
            self._field(path).merge(field_counts)
        self._retention.merge(other._retention)

    def _field(self, path: str) -> _FieldCounts:
        counts = self._fields.get(path)
        if counts is None:
            counts = self._fields[path] = _FieldCounts()
        return counts

    def summary(self) -> TrajectorySummary:
        """The summary of what was counted."""
        turns = tuple(
            TurnPoint(
                turn=turn,
                n=c.n,
                right=c.right,
                joint_goal_accuracy=c.right / c.n,
                accuracy=_ratio(c.matching, c.expected),
                mean_state_accuracy=float(c.accuracy_sum) / c.n,
                errors=c.errors,
                inherited=c.inherited,
                introduced=c.introduced,
                corrected=c.corrected,
            )
            for turn, c in sorted(self._turns.items())
        )
        fields = sorted(
            (
                FieldTrajectory(
                    path,
                    c.episodes_wrong,
                    _ratio(c.first_wrong_sum, c.episodes_wrong),
                    c.inherited,
                    c.introduced,
                    c.corrected,
                )
                for path, c in self._fields.items()
            ),
            key=lambda f: (-f.episodes_wrong, -f.inherited, f.path),
        )
        return TrajectorySummary(
            mode=self.mode,
            n_episodes=self.n_episodes,
            n_success=self.n_success,
            episode_success=_ratio(self.n_success, self.n_episodes),
            mean_episode_accuracy=_ratio(float(self.accuracy_sum), self.n_episodes),
            first_divergence=dict(sorted(self.first_divergence.items())),
            n_recovered=self.n_recovered,
            recovery_rate=_ratio(self.recovered_turns, self.after_wrong),
            inherited=sum(t.inherited for t in turns),
            introduced=sum(t.introduced for t in turns),
            corrected=sum(t.corrected for t in turns),
            turns=turns,
            fields=tuple(fields),
            retention=self._retention.result(),
        )
