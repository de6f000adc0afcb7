"""Episode scores: an episode's turns, in order, scored as a whole.

A turn is *right* when the mutator returned a state and every scored field of it is right (every
slot with a slot schema: the joint goal; every compared field without one). From an episode's
turns in order come its `EpisodeScore`: success (every turn right), the first divergence turn,
the fraction of turns right, and the error propagation per field from one turn to the next
(`propagation`).

The run gathers the turns (`stateval.run._episode_tracker`); this module only scores them, so the
trajectory summary can use it without importing the run's scoring.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "RETENTION_AGE",
    "SKIPPED",
    "EpisodeScore",
    "TurnRecord",
    "memory_ages",
    "propagation",
    "score_episode",
]

SKIPPED = "EpisodeSkipped"
"""The ``error_type`` of a free-running turn not run because an earlier turn of its episode
failed (``episodes.on_error: skip``)."""

RETENTION_AGE = 5
"""The memory age from which ``retention_at_5`` counts (`stateval.episodes.RetentionCurve`)."""


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """What episode metrics need of one scored turn.

    Attributes:
        turn: The turn index (``episodes.order``).
        case_id: The case.
        ok: The mutator returned a state.
        right: ``ok`` and every scored field right.
        accuracy: The case's ``state_accuracy``.
        matching: Expected fields that match.
        expected: Expected fields.
        wrong: The scored fields that are wrong, missing or extra.
        skipped: Not run: an earlier turn failed and the policy is ``skip``.
        fields: ``(path, set here, right)`` of each expected field: whether the gold sets
            (adds or changes) it at this turn, and whether the mutator has it right.
    """

    turn: int
    case_id: str
    ok: bool
    right: bool
    accuracy: float
    matching: int = 0
    expected: int = 0
    wrong: frozenset[str] = frozenset()
    skipped: bool = False
    fields: tuple[tuple[str, bool, bool], ...] = ()


def memory_ages(turns: Sequence[TurnRecord]) -> Iterator[tuple[str, int, bool]]:
    """``(path, age, right)`` of every expected field of every turn, the turns in order."""
    if not turns:
        return
    last_set: dict[str, int] = {}
    start = turns[0].turn - 1
    for record in turns:
        for path, set_here, right in record.fields:
            if set_here:
                last_set[path] = record.turn
            yield path, record.turn - last_set.get(path, start), right


def propagation(
    before: frozenset[str], now: frozenset[str]
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """``(inherited, introduced, corrected)`` fields of a turn: wrong now and in the turn
    before, wrong now but not before, wrong before but right now.

    >>> inherited, introduced, corrected = propagation(frozenset("ab"), frozenset("bc"))
    >>> sorted(inherited), sorted(introduced), sorted(corrected)
    (['b'], ['c'], ['a'])
    """
    return now & before, now - before, before - now


@dataclass(frozen=True, slots=True)
class EpisodeScore:
    """How one episode (a conversation of turns) fared in a run.

    Attributes:
        episode_id: The episode.
        mode: ``teacher_forced`` or ``free_running``.
        turns: How many of its turns the run scored.
        success: Every turn right.
        first_divergence_turn: The turn index of its first turn that is not right (None on
            success).
        accuracy: The fraction of its turns that are right (joint goal accuracy over the
            episode).
        mean_state_accuracy: The mean of its turns' ``state_accuracy``.
        n_errors: Turns whose mutator call failed (skipped turns included).
        n_skipped: Turns not run because an earlier one failed (``on_error: skip``).
        inherited: Field errors carried over from the turn before (summed over turns).
        introduced: Field errors new at their turn.
        corrected: Fields wrong at a turn and right at the next.
        recovered: Diverged, and a later turn is right again.
        final_right: Its last turn is right.
        first_wrong: Field -> the turn index where it first goes wrong.
        case_ids: Its cases, in turn order.
        first_turn: The turn index of its first turn.
        n_old: Expected fields of memory age >= `RETENTION_AGE` over its turns.
        right_old: Those that are right.
    """

    episode_id: str
    mode: str
    turns: int
    success: bool
    first_divergence_turn: int | None
    accuracy: float
    mean_state_accuracy: float = 0.0
    n_errors: int = 0
    n_skipped: int = 0
    inherited: int = 0
    introduced: int = 0
    corrected: int = 0
    recovered: bool = False
    final_right: bool = False
    first_wrong: Mapping[str, int] = field(default_factory=dict)
    case_ids: tuple[str, ...] = ()
    first_turn: int = 0
    n_old: int = 0
    right_old: int = 0

    @property
    def retention(self) -> float | None:
        """Its fields of memory age >= `RETENTION_AGE` that are right, as a fraction (None
        when it has none that old)."""
        return self.right_old / self.n_old if self.n_old else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "episode_id": self.episode_id,
            "mode": self.mode,
            "turns": self.turns,
            "success": self.success,
            "first_divergence_turn": self.first_divergence_turn,
            "accuracy": self.accuracy,
            "mean_state_accuracy": self.mean_state_accuracy,
            "n_errors": self.n_errors,
            "n_skipped": self.n_skipped,
            "inherited": self.inherited,
            "introduced": self.introduced,
            "corrected": self.corrected,
            "recovered": self.recovered,
            "final_right": self.final_right,
            "first_wrong": dict(self.first_wrong),
            "case_ids": list(self.case_ids),
            "first_turn": self.first_turn,
            "n_old": self.n_old,
            "right_old": self.right_old,
        }


def score_episode(episode_id: str, mode: str, turns: Sequence[TurnRecord]) -> EpisodeScore:
    """The score of an episode from its turns, in turn order.

    >>> right = TurnRecord(0, "d:0", ok=True, right=True, accuracy=1.0)
    >>> wrong = TurnRecord(1, "d:1", ok=True, right=False, accuracy=0.5,
    ...                    wrong=frozenset({"hotel.area"}))
    >>> score = score_episode("d", "free_running", [right, wrong])
    >>> score.success, score.first_divergence_turn, score.accuracy, dict(score.first_wrong)
    (False, 1, 0.5, {'hotel.area': 1})
    """
    n = len(turns)
    n_right = sum(t.right for t in turns)
    divergence = next((t.turn for t in turns if not t.right), None)
    first_wrong: dict[str, int] = {}
    inherited = introduced = corrected = 0
    before: frozenset[str] = frozenset()
    for turn in turns:
        kept, new, fixed = propagation(before, turn.wrong)
        inherited += len(kept)
        introduced += len(new)
        corrected += len(fixed)
        for path in sorted(new):
            first_wrong.setdefault(path, turn.turn)
        before = turn.wrong
    recovered = divergence is not None and any(t.right for t in turns if t.turn > divergence)
    n_old = right_old = 0
    for _, age, right in memory_ages(turns):
        if age >= RETENTION_AGE:
            n_old += 1
            right_old += right
    return EpisodeScore(
        episode_id=episode_id,
        mode=mode,
        turns=n,
        success=n > 0 and n_right == n,
        first_divergence_turn=divergence,
        accuracy=n_right / n if n else 0.0,
        mean_state_accuracy=sum(t.accuracy for t in turns) / n if n else 0.0,
        n_errors=sum(not t.ok for t in turns),
        n_skipped=sum(t.skipped for t in turns),
        inherited=inherited,
        introduced=introduced,
        corrected=corrected,
        recovered=recovered,
        final_right=bool(turns) and turns[-1].right,
        first_wrong=first_wrong,
        case_ids=tuple(t.case_id for t in turns),
        first_turn=turns[0].turn if turns else 0,
        n_old=n_old,
        right_old=right_old,
    )
