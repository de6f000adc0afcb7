"""Episodes: a conversation's turns scored as a whole.

- ``_score.py``: one episode's `EpisodeScore` from its turns (`TurnRecord`, `score_episode`);
- ``_trajectory.py``: a run's trajectory metrics, counted in one pass (`TrajectoryTally` ->
  `TrajectorySummary`: success, first divergence, error propagation, the per-turn curve);
- ``_free_running.py``: running an episode's turns in order, each from the state the turn
  before left (`run_free`, over the run's `TurnRunner`).

The run gathers each episode's turns (`stateval.run`); this package scores and counts them.
"""

from __future__ import annotations

from stateval.episodes._free_running import TurnResult, TurnRunner, run_free
from stateval.episodes._score import SKIPPED, EpisodeScore, TurnRecord, propagation, score_episode
from stateval.episodes._trajectory import (
    FieldTrajectory,
    TrajectorySummary,
    TrajectoryTally,
    TurnPoint,
    episode_threshold_values,
)

__all__ = [
    "SKIPPED",
    "EpisodeScore",
    "FieldTrajectory",
    "TrajectorySummary",
    "TrajectoryTally",
    "TurnPoint",
    "TurnRecord",
    "TurnResult",
    "TurnRunner",
    "episode_threshold_values",
    "propagation",
    "run_free",
    "score_episode",
]
