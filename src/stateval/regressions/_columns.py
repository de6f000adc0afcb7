"""A run as columns: what a diff reads of each case, in arrays, whatever the run's size.

Each case's repetitions are reduced, as they arrive, to its correctness on each field it
evaluates (the mean over its repetitions, a repetition without the field counting as right)
and its (numerator, denominator) of each run-level metric (`case_ratio`); its observations are
then dropped. Per field, the positions of the cases that evaluate it and their correctness;
per metric, one row of two floats per case: two 100,000-case runs of 20 fields hold about
70 MB, where their observations held about 600 MB.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stateval.regressions._metrics import RUN_METRICS, RunMetric, case_ratio, share_metric
from stateval.regressions._scores import FIELD_PREFIX, ExperimentLink, Observation, ScoredRun

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ColumnsBuilder", "FieldColumn", "RunColumns", "as_columns", "correctness"]


def correctness(reps: Sequence[Observation], name: str) -> float | None:
    """Mean score of evaluation ``name`` over the repetitions (absent = right), or None when no
    repetition evaluated it."""
    values = [obs.scores.get(name) for obs in reps]
    if all(v is None for v in values):
        return None
    return sum(1.0 if v is None else v for v in values) / len(values)


@dataclass(frozen=True, slots=True)
class FieldColumn:
    """One field over a run's cases.

    Attributes:
        cases: Positions (in `RunColumns.case_ids`) of the cases that evaluate the field.
        values: Their correctness, in the same order.
    """

    cases: npt.NDArray[np.int64]
    values: npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class RunColumns:
    """One side of a diff, as columns (see the module docstring).

    Attributes:
        label: How the run is named in reports (``run 20250101-...``).
        case_ids: Its cases, in the order they were added.
        fields: Field path -> its column.
        metrics: Run-level metric name -> an (n, 2) array of each case's numerator and
            denominator ((0, 0) where the case does not measure it), rows in `case_ids` order.
        measures: The metrics of `metrics`, in report order: `RUN_METRICS`, then the figures
            the cases have a share of (a convention's), in the order first seen.
        repetitions: The most repetitions any case has.
        experiment: The run's Phoenix experiment, when it has one.
        suite_name: The suite, when known.
        unfinished: For a journaled run without its ``end`` record, what it holds.
    """

    label: str
    case_ids: tuple[str, ...]
    fields: Mapping[str, FieldColumn]
    metrics: Mapping[str, npt.NDArray[np.float64]]
    measures: tuple[RunMetric, ...] = RUN_METRICS
    repetitions: int = 0
    experiment: ExperimentLink | None = None
    suite_name: str | None = None
    unfinished: str | None = None


class ColumnsBuilder:
    """Adds cases to growing columns, one case's repetitions at a time.

    Example:
        >>> builder = ColumnsBuilder()
        >>> builder.add("c1", [Observation({"field:a": 1.0, "state_accuracy": 1.0})])
        >>> builder.add("c2", [Observation({"field:a": 0.0}), Observation({"field:b": 0.0})])
        >>> run = builder.build("run r")
        >>> run.case_ids, run.fields["a"].values.tolist(), run.fields["b"].cases.tolist()
        (('c1', 'c2'), [1.0, 0.5], [1])
        >>> run.metrics["mean_state_accuracy"].tolist()
        [[1.0, 1.0], [0.0, 0.0]]
    """

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._fields: dict[str, tuple[array[int], array[float]]] = {}
        self._metrics = {m.name: array("d") for m in RUN_METRICS}
        self._measures = list(RUN_METRICS)
        self._repetitions = 0

    def add(self, case_id: str, reps: Sequence[Observation]) -> None:
        """Reduce one case's repetitions to its place in each column."""
        position = len(self._ids)
        self._ids.append(case_id)
        self._repetitions = max(self._repetitions, len(reps))
        if len(reps) == 1:  # the usual case: its scores are its correctness
            values: Iterable[tuple[str, float]] = (
                (n, v) for n, v in reps[0].scores.items() if n.startswith(FIELD_PREFIX)
            )
        else:
            names = {n for obs in reps for n in obs.scores if n.startswith(FIELD_PREFIX)}
            # never None: some repetition evaluated each name
            values = ((n, correctness(reps, n) or 0.0) for n in sorted(names))
        fields = self._fields
        for name, value in values:
            column = fields.get(name)
            if column is None:
                column = fields[name] = (array("q"), array("d"))
            column[0].append(position)
            column[1].append(value)
        metrics = self._metrics
        for obs in reps:
            for name in obs.shares:
                if name not in metrics:  # a figure first seen here: none before had a share
                    metrics[name] = array("d", bytes(16 * position))
                    self._measures.append(share_metric(name))
        for metric in self._measures:
            metrics[metric.name].extend(case_ratio(metric, reps))

    def build(
        self,
        label: str,
        *,
        experiment: ExperimentLink | None = None,
        suite_name: str | None = None,
        unfinished: str | None = None,
    ) -> RunColumns:
        """The columns of the cases added so far."""
        import numpy as np

        fields = {
            name.removeprefix(FIELD_PREFIX): FieldColumn(
                np.frombuffer(cases, dtype=np.int64), np.frombuffer(values, dtype=np.float64)
            )
            for name, (cases, values) in self._fields.items()
        }
        metrics = {
            name: np.frombuffer(values, dtype=np.float64).reshape(-1, 2)
            for name, values in self._metrics.items()
        }
        return RunColumns(
            label,
            tuple(self._ids),
            fields,
            metrics,
            tuple(self._measures),
            self._repetitions,
            experiment,
            suite_name,
            unfinished,
        )


def observed_columns(
    label: str,
    cases: Mapping[str, Sequence[Observation]],
    *,
    experiment: ExperimentLink | None = None,
    suite_name: str | None = None,
    unfinished: str | None = None,
) -> RunColumns:
    """The columns of cases held as observations (a `ScoredRun`'s)."""
    builder = ColumnsBuilder()
    for case_id, reps in cases.items():
        builder.add(case_id, reps)
    return builder.build(label, experiment=experiment, suite_name=suite_name, unfinished=unfinished)


def as_columns(run: ScoredRun | RunColumns) -> RunColumns:
    """A run as a diff reads it: columns as they are, a `ScoredRun`'s observations in columns."""
    if isinstance(run, RunColumns):
        return run
    return observed_columns(
        run.label,
        run.cases,
        experiment=run.experiment,
        suite_name=run.suite_name,
        unfinished=run.unfinished,
    )
