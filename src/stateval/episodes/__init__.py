"""Episodes: a conversation's turns scored as a whole.

- ``_score.py``: one episode's `EpisodeScore` from its turns (`TurnRecord`, `score_episode`);
- ``_trajectory.py``: a run's trajectory metrics, counted in one pass (`TrajectoryTally` ->
  `TrajectorySummary`: success, first divergence, error propagation, the per-turn curve);
- ``_retention.py``: accuracy by memory age (turns since the gold value was set), with
  intervals and a slope test (`RetentionCurve`);
- ``_metrics.py``: the table of episode metrics (`EPISODE_METRICS`): a new trajectory metric is
  one entry, and the reports, thresholds, experiment metadata and session annotations follow;
- ``_free_running.py``: running an episode's turns in order, each from the state the turn
  before left (`run_free`, over the run's `TurnRunner`).

The run gathers each episode's turns (`stateval.run`); this package scores and counts them.
"""

from __future__ import annotations

from stateval.episodes._free_running import TurnResult, TurnRunner, run_free
from stateval.episodes._metrics import (
    EPISODE_METRICS,
    EpisodeMetric,
    EpisodeValue,
    episode_threshold_values,
    trajectory_dict,
)
from stateval.episodes._retention import AgePoint, RetentionCurve, RetentionTally, SlopeTest
from stateval.episodes._score import (
    RETENTION_AGE,
    SKIPPED,
    EpisodeScore,
    TurnRecord,
    memory_ages,
    propagation,
    score_episode,
)
from stateval.episodes._trajectory import (
    FieldTrajectory,
    TrajectorySummary,
    TrajectoryTally,
    TurnPoint,
)

__all__ = [
    "EPISODE_METRICS",
    "RETENTION_AGE",
    "SKIPPED",
    "AgePoint",
    "EpisodeMetric",
    "EpisodeScore",
    "EpisodeValue",
    "FieldTrajectory",
    "RetentionCurve",
    "RetentionTally",
    "SlopeTest",
    "TrajectorySummary",
    "TrajectoryTally",
    "TurnPoint",
    "TurnRecord",
    "TurnResult",
    "TurnRunner",
    "episode_threshold_values",
    "memory_ages",
    "propagation",
    "run_free",
    "score_episode",
    "trajectory_dict",
]
