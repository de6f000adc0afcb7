"""The run-level metrics a diff puts an interval on, each read from one case's evaluations.

Each metric is a ratio of sums over cases (a mean has denominator 1 per case; the pooled field
accuracy counts matching over expected fields, slot accuracy right schema slots over scored
ones (as the run's summary pools them), and the edit-operation rates count the fields of each
expected operation (keep, add, update, delete) that are right, and the stale ones among the
updates (so a diff says which kind of update got worse)), so the bootstrap resamples cases and
recomputes the ratio. With repetitions, a case's numerator and denominator are its repetitions'
means.

Value precision, recall and F1 and a convention's figures (``sgd_joint_goal_accuracy``...) are
the run summary's: a local run's case carries its share of each as its suite's metric
accumulator computes it (`stateval.compare.MetricsAccumulator.case_shares`: the ``metrics:``
settings such as ``averaging: case`` or ``list_credit: partial``, and the slot schema). An
experiment read from Phoenix has no such shares: its value P/R/F1 are counted from the field
evaluations' labels under the default conventions (a wrong value is a false positive and a
false negative, pooled over every field evaluation), only when its run used those conventions
(its metadata's ``conventions``), and it has no convention figures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from stateval.compare import is_item_path
from stateval.regressions._scores import FIELD_PREFIX, Observation

__all__ = ["RUN_METRICS", "RunMetric", "case_ratio", "run_metrics", "share_metric"]


def _score(name: str) -> Callable[[Observation], tuple[float, float] | None]:
    def extract(obs: Observation) -> tuple[float, float] | None:
        value = obs.scores.get(name)
        return None if value is None else (value, 1.0)

    return extract


def _joint_goal(obs: Observation) -> tuple[float, float] | None:
    value = obs.scores.get("slot_accuracy")
    return None if value is None else (1.0 if value >= 1.0 else 0.0, 1.0)


def _slot_accuracy(obs: Observation) -> tuple[float, float] | None:
    """Right schema slots over scored ones, pooled over cases as the run's summary pools them
    (a case's own fraction when its counts are unknown)."""
    if obs.slots is not None:
        right, total = obs.slots
        return float(right), float(total)
    value = obs.scores.get("slot_accuracy")
    return None if value is None else (value, 1.0)


def _op_right(op: str) -> Callable[[Observation], tuple[float, float] | None]:
    """Right fields of expected operation ``op`` over such fields (its ``op:<op>`` counts)."""

    def extract(obs: Observation) -> tuple[float, float] | None:
        counts = obs.ops.get(op)
        return None if counts is None or not counts[1] else (float(counts[0]), float(counts[1]))

    return extract


def _staleness(obs: Observation) -> tuple[float, float] | None:
    counts = obs.ops.get("update")
    if counts is None or not counts[1]:
        return None
    return float(counts[2].get("stale", 0)), float(counts[1])


def _pooled_accuracy(obs: Observation) -> tuple[float, float] | None:
    matched = expected = 0.0
    for name, score in obs.scores.items():
        # a list's sub-fields (field:line_items[].qty) are counted per item: the run's accuracy
        # counts the list field once
        if (
            name.startswith(FIELD_PREFIX)
            and obs.labels.get(name) != "extra"
            and not is_item_path(name)
        ):
            expected += 1
            matched += score >= 1.0
    return (matched, expected) if expected else None


def _statuses(obs: Observation) -> dict[str, int]:
    counts = {"matching": 0, "mismatched": 0, "missing": 0, "extra": 0}
    for name, label in obs.labels.items():
        if name.startswith(FIELD_PREFIX) and label in counts:
            counts[label] += 1
    return counts


def _share(name: str) -> Callable[[Observation], tuple[float, float] | None]:
    """A figure the run's summary computes under its suite's settings: the case's share of it
    (`Observation.shares`), or None when it has none or a zero denominator."""

    def extract(obs: Observation) -> tuple[float, float] | None:
        share = obs.shares.get(name)
        return None if share is None or not share[1] else share

    return extract


def _value(
    name: str, counted: Callable[[dict[str, int]], tuple[int, int]]
) -> Callable[[Observation], tuple[float, float] | None]:
    """Value precision / recall / F1: the case's share as its suite computes it when known (a
    local run), else counted from the field evaluations' labels under the default conventions
    (an experiment whose run used them)."""
    shared = _share(name)

    def extract(obs: Observation) -> tuple[float, float] | None:
        if name in obs.shares:
            return shared(obs)
        if not obs.value_labels:
            return None
        num, den = counted(_statuses(obs))
        return (num, den) if den else None

    return extract


_value_precision = _value(
    "value_precision", lambda c: (c["matching"], c["matching"] + c["mismatched"] + c["extra"])
)
_value_recall = _value(
    "value_recall", lambda c: (c["matching"], c["matching"] + c["mismatched"] + c["missing"])
)
_value_f1 = _value(
    "value_f1",
    lambda c: (
        2 * c["matching"],
        2 * c["matching"] + 2 * c["mismatched"] + c["missing"] + c["extra"],
    ),
)


def _error(obs: Observation) -> tuple[float, float] | None:
    return (1.0 if obs.error else 0.0, 1.0)


def _time(obs: Observation) -> tuple[float, float] | None:
    return None if obs.time_used is None else (obs.time_used, 1.0)


@dataclass(frozen=True, slots=True)
class RunMetric:
    """A run-level metric.

    Attributes:
        name: As in the run summary (``joint_goal_accuracy``...).
        higher_is_better: False for error rate and time.
        extract: One observation's (numerator, denominator), or None when not measured.
        judged: False when the metric is shown but given no verdict: time per call depends
            on the machine's load during each run as much as on the mutator, and load is
            shared by all of a run's cases, so no resampling of cases can tell them apart.
    """

    name: str
    higher_is_better: bool
    extract: Callable[[Observation], tuple[float, float] | None]
    judged: bool = True


RUN_METRICS: tuple[RunMetric, ...] = (
    RunMetric("joint_goal_accuracy", True, _joint_goal),
    RunMetric("slot_accuracy", True, _slot_accuracy),
    RunMetric("overall_match_rate", True, _score("overall_match")),
    RunMetric("accuracy", True, _pooled_accuracy),
    RunMetric("value_precision", True, _value_precision),
    RunMetric("value_recall", True, _value_recall),
    RunMetric("value_f1", True, _value_f1),
    RunMetric("mean_state_accuracy", True, _score("state_accuracy")),
    RunMetric("changed_fields_accuracy", True, _score("changed_fields_accuracy")),
    RunMetric("preserved_fields_accuracy", True, _score("preserved_fields_accuracy")),
    RunMetric("keep_success", True, _op_right("keep")),
    RunMetric("add_success", True, _op_right("add")),
    RunMetric("update_propagation_rate", True, _op_right("update")),
    RunMetric("staleness_rate", False, _staleness),
    RunMetric("deletion_success", True, _op_right("delete")),
    RunMetric("error_rate", False, _error),
    RunMetric("mean_time", False, _time, judged=False),
)
"""Every run-level metric of a `stateval.run.RunSummary`, in report order."""


def run_metrics(runs: Iterable[Iterable[Sequence[Observation]]]) -> tuple[RunMetric, ...]:
    """`RUN_METRICS`, then a metric for each other figure the observations of ``runs`` (each
    an iterable of a case's repetitions) have a share of: a convention's figures (``sgd_*``,
    ``mwzeval_*``...), in the order first seen. Every such figure is higher-is-better."""
    known = {m.name for m in RUN_METRICS}
    extra: dict[str, None] = {}
    for run in runs:
        for reps in run:
            for obs in reps:
                extra.update((n, None) for n in obs.shares if n not in known)
    return (*RUN_METRICS, *(share_metric(n) for n in extra))


def share_metric(name: str) -> RunMetric:
    """The metric of a run-summary figure read from the cases' shares (`Observation.shares`):
    a convention's figures, higher-is-better."""
    return RunMetric(name, True, _share(name))


def case_ratio(metric: RunMetric, reps: Sequence[Observation]) -> tuple[float, float]:
    """A case's (numerator, denominator) for ``metric``: the means over its measured
    repetitions, or (0, 0) when none measured it."""
    if len(reps) == 1:  # the usual case, without the lists (a diff calls this per case)
        part = metric.extract(reps[0])
        return (0.0, 0.0) if part is None else part
    parts = [p for p in (metric.extract(o) for o in reps) if p is not None]
    if not parts:
        return 0.0, 0.0
    return sum(n for n, _ in parts) / len(parts), sum(d for _, d in parts) / len(parts)
