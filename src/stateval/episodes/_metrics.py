"""The table of episode metrics: a new trajectory metric is one `EpisodeMetric` in
`EPISODE_METRICS`, and the run summary (the JSON report's ``episodes`` object through
`trajectory_dict`, the experiment metadata), the episode thresholds, the terminal / Markdown /
HTML episode rows and the Phoenix session annotations read it.

Each metric has a run-level value (from the `TrajectorySummary`) and, when it has a per-episode
value, a session annotation of that episode (score, label, explanation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stateval.episodes._score import RETENTION_AGE, EpisodeScore
from stateval.episodes._trajectory import TrajectorySummary
from stateval.suite import ThresholdsSpec

__all__ = [
    "EPISODE_METRICS",
    "EpisodeMetric",
    "EpisodeValue",
    "episode_threshold_values",
    "trajectory_dict",
]


@dataclass(frozen=True, slots=True)
class EpisodeValue:
    """One episode's value of a metric, as its session annotation carries it.

    Attributes:
        score: The score (None when the episode has none, e.g. no diverging turn).
        label: A short category, or None.
        explanation: One line.
    """

    score: float | None
    label: str | None
    explanation: str


@dataclass(frozen=True, slots=True)
class EpisodeMetric:
    """A trajectory metric.

    Attributes:
        name: Its key in the JSON report, the experiment metadata and ``thresholds``.
        label: Its row label in the reports.
        run_value: Its run-level value (None when not measurable).
        count: A note shown beside the run value (``(12)``), or None.
        annotation: The name of its session annotation (None: no per-episode value).
        episode_value: One episode's value (with ``annotation``).
        threshold: Whether ``thresholds.<name>`` sets a minimum of it (the suite model declares
            the field; a test holds the two in step).
        report: Whether the reports and the experiment metadata show its run value (the
            first divergence has its distribution there instead).
        json: Whether the JSON report's ``episodes`` object carries its run value under
            ``name`` (``docs/report-schema.json`` lists it; a test holds the two in step).
        json_after: The key of that object it follows (None: at the end).
    """

    name: str
    label: str
    run_value: Callable[[TrajectorySummary], float | None]
    count: Callable[[TrajectorySummary], str] | None = None
    annotation: str | None = None
    episode_value: Callable[[EpisodeScore], EpisodeValue] | None = None
    threshold: bool = False
    report: bool = True
    json: bool = True
    json_after: str | None = None


def _success(e: EpisodeScore) -> EpisodeValue:
    first = e.first_divergence_turn
    if first is None:
        why = f"all {e.turns} turn(s) right ({e.mode})"
    else:
        why = f"turn {first} is the first of {e.turns} that is wrong ({e.mode})"
    return EpisodeValue(float(e.success), "success" if e.success else "failure", why)


def _divergence(e: EpisodeScore) -> EpisodeValue:
    first = e.first_divergence_turn
    if first is None:
        why = f"no turn's post-state differs from the expected one ({e.mode})"
        return EpisodeValue(None, "none", why)
    why = f"turn {first} is the first whose post-state differs from the expected one ({e.mode})"
    return EpisodeValue(float(first), f"turn {first}", why)


def _accuracy(e: EpisodeScore) -> EpisodeValue:
    why = f"{round(e.accuracy * e.turns)} of its {e.turns} turn(s) right ({e.mode})"
    return EpisodeValue(e.accuracy, None, why)


def _retention(e: EpisodeScore) -> EpisodeValue:
    if not e.n_old:
        why = f"no expected field reaches memory age {RETENTION_AGE} ({e.mode})"
        return EpisodeValue(None, "none", why)
    why = (
        f"{e.right_old} of {e.n_old} expected field(s) set {RETENTION_AGE} or more turns "
        f"earlier right ({e.mode})"
    )
    return EpisodeValue(e.retention, None, why)


def _retention_run(t: TrajectorySummary) -> float | None:
    return None if t.retention is None else t.retention.accuracy_from(RETENTION_AGE)


def _retention_count(t: TrajectorySummary) -> str:
    n = 0 if t.retention is None else t.retention.n_from(RETENTION_AGE)
    return f"({n} fields)"


EPISODE_METRICS: dict[str, EpisodeMetric] = {
    m.name: m
    for m in (
        EpisodeMetric(
            "episode_success",
            "episode success",
            lambda t: t.episode_success,
            lambda t: f"({t.n_success})",
            annotation="episode_success",
            episode_value=_success,
            threshold=True,
            json_after="n_success",
        ),
        EpisodeMetric(
            "first_divergence_turn",
            "first divergence turn (mean)",
            lambda t: (
                sum(turn * n for turn, n in t.first_divergence.items()) / t.n_diverged
                if t.n_diverged
                else None
            ),
            annotation="first_divergence_turn",
            episode_value=_divergence,
            report=False,
            json=False,  # the JSON report has its distribution, ``first_divergence``
        ),
        EpisodeMetric(
            "mean_episode_accuracy",
            "mean episode accuracy (turns right)",
            lambda t: t.mean_episode_accuracy,
            annotation="episode_accuracy",
            episode_value=_accuracy,
            json_after="episode_success",
        ),
        EpisodeMetric(
            "recovery_rate",
            "recovery rate (turn right after a wrong one)",
            lambda t: t.recovery_rate,
            json_after="n_recovered",
        ),
        EpisodeMetric(
            f"retention_at_{RETENTION_AGE}",
            f"retention (fields set {RETENTION_AGE}+ turns earlier)",
            _retention_run,
            _retention_count,
            annotation=f"retention_at_{RETENTION_AGE}",
            episode_value=_retention,
            threshold=True,
            json=False,  # the JSON report has the whole curve, ``retention``
        ),
    )
}
"""Every episode metric by name, in report order."""


def trajectory_dict(summary: TrajectorySummary) -> dict[str, Any]:
    """The JSON form of ``summary`` (``episodes`` of the JSON report): its counts and curves
    (`TrajectorySummary.to_dict`) with the run value of each metric of `EPISODE_METRICS` marked
    ``json``, each after the key its ``json_after`` names, the others at the end."""
    metrics = [m for m in EPISODE_METRICS.values() if m.json]
    out: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        out[key] = value
        for metric in metrics:
            if metric.json_after == key:
                put(metric.name, metric.run_value(summary))

    for key, value in summary.to_dict().items():
        put(key, value)
    for metric in metrics:
        if metric.json_after is None or metric.json_after not in out:
            put(metric.name, metric.run_value(summary))
    return out


def episode_threshold_values(
    spec: ThresholdsSpec, summary: TrajectorySummary | None
) -> list[tuple[str, float | None, float]]:
    """``(name, value, limit)`` of each episode threshold ``spec`` sets: the minimums of the
    episode metrics marked ``threshold`` in `stateval.episodes.EPISODE_METRICS`
    (``episode_success``...), and ``per_turn[<metric>]`` whose value is the worst turn index's
    (reached by at least ``per_turn.min_episodes`` episodes)."""
    out: list[tuple[str, float | None, float]] = []
    for metric in EPISODE_METRICS.values():
        limit = getattr(spec, metric.name, None) if metric.threshold else None
        if limit is not None:
            value = None if summary is None else metric.run_value(summary)
            out.append((metric.name, value, limit))
    per_turn = spec.per_turn
    if per_turn is not None:
        for name in ("joint_goal_accuracy", "accuracy"):
            limit = getattr(per_turn, name)
            if limit is None:
                continue
            points = [] if summary is None else summary.per_turn(name, per_turn.min_episodes)
            worst = min((v for _, v in points), default=None)
            out.append((f"per_turn[{name}]", worst, limit))
    return out
