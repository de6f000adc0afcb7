"""A run's summary: its figures, per-field rows, slices, episodes and thresholds, from the
running counts of its scored cases (see ``_tally.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from stateval.calibration import AgreementReport, CalibrationReport
from stateval.compare import EditMatrix, FieldMetrics, MetricOptions, RunMetrics, path_matches
from stateval.episodes import (
    EPISODE_METRICS,
    TrajectorySummary,
    episode_threshold_values,
    trajectory_dict,
)
from stateval.run._results import CaseScore
from stateval.run._summary_metadata import quality_metadata
from stateval.suite import ThresholdsSpec

__all__ = [
    "RUN_THRESHOLDS",
    "FieldRow",
    "RunSummary",
    "ThresholdResult",
    "field_minimum",
    "threshold_names",
    "threshold_results",
]

_GLOB = frozenset("*?[")
_WORST_SHOWN = 10
_REPORT_NAMES = {"correct": "matching", "wrong": "mismatched"}
_FIELD_FIGURES = (
    "n",
    "matching",
    "mismatched",
    "missing",
    "extra",
    "absent",
    "precision",
    "recall",
    "f1",
    "slot_accuracy",
    "accuracy",
    "mean_score",
)
RUN_THRESHOLDS = (
    "overall_match_rate",
    "accuracy",
    "joint_goal_accuracy",
    "slot_accuracy",
    "value_precision",
    "value_recall",
    "value_f1",
    "judge_kappa",
    "mean_weighted_state_accuracy",
)


@dataclass(frozen=True, slots=True)
class FieldRow(FieldMetrics):
    """How one field fared over a run: its `FieldMetrics` (confusion counts and the figures
    derived from them), the suite's minimum accuracy for it, and the names reports give the
    counts (``matching`` for correct, ``mismatched`` for wrong).

    Attributes:
        minimum: The suite's minimum accuracy for it, if any.
    """

    minimum: float | None = None

    @classmethod
    def of(cls, metrics: FieldMetrics, minimum: float | None = None) -> FieldRow:
        """The row of a field's run metrics."""
        counts = {f.name: getattr(metrics, f.name) for f in fields(FieldMetrics)}
        return cls(**counts, minimum=minimum)

    @property
    def matching(self) -> int:
        """Cases where it matched (`correct`)."""
        return self.correct

    @property
    def mismatched(self) -> int:
        """Cases where both held it and it differed (`wrong`)."""
        return self.wrong

    @property
    def passed(self) -> bool:
        """True unless the field was expected and has a minimum it does not reach."""
        return self.minimum is None or not self.n_expected or self.accuracy >= self.minimum

    def rates(self) -> dict[str, float | None]:
        """Each outcome's count over `n_scored`, as reports name the outcomes."""
        return {_REPORT_NAMES.get(k, k): v for k, v in FieldMetrics.rates(self).items()}

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: `FieldMetrics`'s, its counts under the report names, then the
        minimum and whether it passed."""
        out = {_REPORT_NAMES.get(k, k): v for k, v in FieldMetrics.to_dict(self).items()}
        out["minimum"] = self.minimum
        out["passed"] = self.passed
        return out


@dataclass(frozen=True, slots=True)
class ThresholdResult:
    """One threshold checked against a run.

    Attributes:
        name: The threshold (``accuracy``, ``fields[hotel.*]``...).
        value: The run's value (None when nothing was measured, e.g. no field matched).
        limit: The threshold.
        kind: ``min`` (value must be at least limit) or ``max`` (at most).
        passed: Whether the run meets it.
    """

    name: str
    value: float | None
    limit: float
    kind: Literal["min", "max"]
    passed: bool

    def describe(self) -> str:
        """``accuracy 0.812 >= 0.800 ok``-style line."""
        op = ">=" if self.kind == "min" else "<="
        value = "n/a" if self.value is None else f"{self.value:.3f}"
        verdict = "ok" if self.passed else "FAILED"
        return f"{self.name} {value} {op} {self.limit:.3f} {verdict}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "name": self.name,
            "value": self.value,
            "limit": self.limit,
            "kind": self.kind,
            "passed": self.passed,
        }


@dataclass(frozen=True, slots=True)
class RunSummary:
    """A run's results: headline metrics, fields worst first, thresholds, and every case.

    Attributes:
        suite_name: The suite.
        run_id: The run (its journal folder).
        n_cases: Cases scored.
        n_planned: Cases the run was asked to run (fewer were scored if it was interrupted).
        n_errors: Cases whose mutator call failed.
        overall_match_rate: Fraction of cases whose every field matches.
        accuracy: Matching expected fields over all expected fields (pooled over cases).
        mean_state_accuracy: Mean of the cases' ``state_accuracy``.
        joint_goal_accuracy: With a slot schema: fraction of cases with every slot right.
        slot_accuracy: With a slot schema: correct (case, slot) pairs over all pairs.
        fields: Per-field rows, worst first.
        thresholds: Every threshold checked.
        cases: Every case's scores, in suite order (for a run, read back from its journal
            and scored again each time they are iterated: see `stateval.run.JournalScores`).
        experiment_url: The Phoenix experiment, when uploaded.
        mean_time: Mean seconds per mutator call.
        metrics: Value precision / recall / F1, per-field confusion counts and slices (with
            a slot schema, over its slots only).
        calibration: How well the mutator's confidences predict its values being right.
        agreement: The LLM judge against the cases' human verdicts (None without any).
        failing: The first failing cases (a field wrong, a check failed or the mutator
            failed), in suite order, at most ten.
        n_failing: How many cases failed.
        episodes: Trajectory metrics of the run's episodes (None when the suite has none).
        compared: The same suite run in the other mode (``stateval run --mode both``), shown
            side by side with this one.
        edits: The edit-operation matrix (expected x actual keep / add / update / delete per
            field, the named errors, update propagation, staleness, deletion success) of the
            cases whose mutator returned a state.
        mean_weighted_state_accuracy: Mean of the cases' ``weighted_state_accuracy`` (None
            unless some field policy sets a ``weight``).
    """

    suite_name: str
    run_id: str
    n_cases: int
    n_planned: int
    n_errors: int
    overall_match_rate: float
    accuracy: float
    mean_state_accuracy: float
    joint_goal_accuracy: float | None
    slot_accuracy: float | None
    fields: tuple[FieldRow, ...]
    thresholds: tuple[ThresholdResult, ...]
    cases: Sequence[CaseScore]
    experiment_url: str | None = None
    mean_time: float = 0.0
    metrics: RunMetrics | None = None
    calibration: CalibrationReport | None = None
    agreement: AgreementReport | None = None
    failing: tuple[CaseScore, ...] = ()
    n_failing: int = 0
    episodes: TrajectorySummary | None = None
    compared: RunSummary | None = None
    edits: EditMatrix | None = None
    mean_weighted_state_accuracy: float | None = None

    @property
    def value_precision(self) -> float | None:
        """Value precision (None when no metrics were computed)."""
        return None if self.metrics is None else self.metrics.precision

    @property
    def value_recall(self) -> float | None:
        """Value recall."""
        return None if self.metrics is None else self.metrics.recall

    @property
    def value_f1(self) -> float | None:
        """Value F1."""
        return None if self.metrics is None else self.metrics.f1

    def headline(self) -> dict[str, Any]:
        """The run-level figures: what Phoenix stores on the experiment and compares (with
        episodes, also the mode and the run value of each reported metric of
        `stateval.episodes.EPISODE_METRICS`)."""
        trajectory = self.episodes
        episodes = (
            {}
            if trajectory is None
            else {
                "mode": trajectory.mode,
                **{m.name: m.run_value(trajectory) for m in EPISODE_METRICS.values() if m.report},
            }
        )
        return {
            "passed": self.passed,
            "complete": self.complete,
            "n_cases": self.n_cases,
            "n_errors": self.n_errors,
            "overall_match_rate": self.overall_match_rate,
            "accuracy": self.accuracy,
            "mean_state_accuracy": self.mean_state_accuracy,
            **self._weighted(),
            "value_precision": self.value_precision,
            "value_recall": self.value_recall,
            "value_f1": self.value_f1,
            "joint_goal_accuracy": self.joint_goal_accuracy,
            "slot_accuracy": self.slot_accuracy,
            **self.convention_figures(),
            **episodes,
        }

    def convention_figures(self) -> dict[str, float | None]:
        """A published scorer's figures (``metrics.convention``), each named after the
        convention it follows (``sgd_joint_goal_accuracy``); empty when none is asked for."""
        found = None if self.metrics is None else self.metrics.convention
        return {} if found is None else dict(found.figures)

    def _weighted(self) -> dict[str, float]:
        value = self.mean_weighted_state_accuracy
        return {} if value is None else {"mean_weighted_state_accuracy": value}

    def experiment_metadata(self) -> dict[str, Any]:
        """What a run stores on its Phoenix experiment's metadata: the `headline` figures as
        top-level keys (so the experiments list shows and compares them), the scorer
        ``conventions``, the ``thresholds``, the ten ``worst_fields``, per-field confusion
        counts and figures under ``fields`` (keyed by path), per-slice figures under
        ``slices``, the edit-operation rates (top level) and matrix (``edits``) and, with
        episodes, the pooled retention curve and its slope test (``retention``)."""
        fields = {}
        for row in self.fields:
            data = row.to_dict()
            fields[row.path] = {k: data[k] for k in _FIELD_FIGURES}
        slices = {
            key: {
                value: {k: v for k, v in figures.items() if k != "fields"}
                for value, figures in groups.items()
            }
            for key, groups in self.slices_dict().items()
        }
        return {
            **self.headline(),
            "conventions": _conventions(self.metrics),
            "thresholds": [t.to_dict() for t in self.thresholds],
            "worst_fields": [row.path for row in self.fields[:_WORST_SHOWN]],
            "fields": fields,
            "slices": slices,
            **(
                {}
                if self.edits is None
                else {**self.edits.pooled.rates(), "edits": self.edits.to_dict()}
            ),
            **self._retention_metadata(),
            **quality_metadata(self.calibration, self.agreement),
        }

    def _retention_metadata(self) -> dict[str, Any]:
        curve = None if self.episodes is None else self.episodes.retention
        if curve is None:
            return {}
        data = curve.to_dict()
        del data["fields"]  # per field: in the JSON report (the metadata stays small)
        return {"retention": data}

    def slices_dict(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Every slice's headline figures and per-field rows, ``{key: {value: {...}}}``."""
        if self.metrics is None:
            return {}
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for key, groups in self.metrics.slices.items():
            out[key] = {}
            for value, m in groups.items():
                out[key][value] = {
                    "n_cases": m.n_cases,
                    "value_precision": m.precision,
                    "value_recall": m.recall,
                    "value_f1": m.f1,
                    "joint_goal_accuracy": m.joint_goal_accuracy,
                    "slot_accuracy": m.slot_accuracy,
                    "fields": [FieldRow.of(f).to_dict() for f in m.worst_fields()],
                }
        return out

    @property
    def passed(self) -> bool:
        """True when every threshold is met and every planned case was scored (by the run in
        the other mode too, when ``compared``)."""
        mine = self.complete and all(t.passed for t in self.thresholds)
        return mine and (self.compared is None or self.compared.passed)

    @property
    def complete(self) -> bool:
        """True when every planned case was scored."""
        return self.n_cases >= self.n_planned

    def to_dict(self) -> dict[str, Any]:
        """The JSON report (``--report-json``), every case included."""
        return {**self.head_dict(), "cases": [c.to_dict() for c in self.cases]}

    def head_dict(self) -> dict[str, Any]:
        """The JSON report without its ``cases``."""
        return {
            "suite": self.suite_name,
            "run_id": self.run_id,
            "passed": self.passed,
            "complete": self.complete,
            "n_cases": self.n_cases,
            "n_planned": self.n_planned,
            "n_errors": self.n_errors,
            "overall_match_rate": self.overall_match_rate,
            "accuracy": self.accuracy,
            "mean_state_accuracy": self.mean_state_accuracy,
            **self._weighted(),
            "value_precision": self.value_precision,
            "value_recall": self.value_recall,
            "value_f1": self.value_f1,
            "joint_goal_accuracy": self.joint_goal_accuracy,
            "slot_accuracy": self.slot_accuracy,
            **self.convention_figures(),
            "conventions": _conventions(self.metrics),
            "mean_time": self.mean_time,
            "experiment_url": self.experiment_url,
            "thresholds": [t.to_dict() for t in self.thresholds],
            "fields": [f.to_dict() for f in self.fields],
            "slices": self.slices_dict(),
            "calibration": None if self.calibration is None else self.calibration.to_dict(),
            "judge_agreement": None if self.agreement is None else self.agreement.to_dict(),
            "episodes": None if self.episodes is None else trajectory_dict(self.episodes),
            "edits": None if self.edits is None else self.edits.to_dict(),
            **({} if self.compared is None else {"modes": self.modes_dict()}),
        }

    @property
    def mode(self) -> str | None:
        """``teacher_forced`` or ``free_running`` for a run of episodes, else None."""
        return None if self.episodes is None else self.episodes.mode

    def side_by_side(self) -> tuple[RunSummary, ...]:
        """This run and the one in the other mode (``compared``), teacher-forced first."""
        runs = (self,) if self.compared is None else (self, self.compared)
        return tuple(sorted(runs, key=lambda r: r.mode != "teacher_forced"))

    def modes_dict(self) -> dict[str, dict[str, Any]]:
        """Each mode's headline figures, trajectory metrics and edit-operation matrix, keyed
        by mode."""
        return {
            str(run.mode): {
                "run_id": run.run_id,
                "passed": run.passed,
                "n_cases": run.n_cases,
                "n_errors": run.n_errors,
                "overall_match_rate": run.overall_match_rate,
                "accuracy": run.accuracy,
                "joint_goal_accuracy": run.joint_goal_accuracy,
                "slot_accuracy": run.slot_accuracy,
                "episodes": None if run.episodes is None else trajectory_dict(run.episodes),
                "edits": None if run.edits is None else run.edits.to_dict(),
            }
            for run in self.side_by_side()
        }


def _conventions(metrics: RunMetrics | None) -> dict[str, Any]:
    options = MetricOptions() if metrics is None else metrics.options
    return {
        "list_credit": options.list_credit,
        "wrong_value": options.wrong_value,
        "averaging": options.averaging,
        "slot_schema": metrics is not None and metrics.has_schema,
        "convention": None
        if metrics is None or metrics.convention is None
        else metrics.convention.to_dict(),
    }


def field_minimum(path: str, minimums: Mapping[str, float]) -> float | None:
    """The minimum accuracy the thresholds set for ``path`` (exact key, else first glob)."""
    if path in minimums:
        return minimums[path]
    return next(
        (m for p, m in minimums.items() if _GLOB.intersection(p) and path_matches(path, p)), None
    )


def threshold_names(spec: ThresholdsSpec) -> list[str]:
    r"""The names of the thresholds ``spec`` sets, as a run's `ThresholdResult`\ s carry them
    (``accuracy``, ``error_rate``, ``fields[hotel.*]``...), in the same order."""
    names = [name for name in RUN_THRESHOLDS if getattr(spec, name) is not None]
    if spec.max_error_rate is not None:
        names.append("error_rate")
    names.extend(f"fields[{pattern}]" for pattern in spec.fields)
    names.extend(f"critical[{pattern}]" for pattern in spec.critical_fields)
    names.extend(name for name, _, _ in episode_threshold_values(spec, None))
    return names


def threshold_results(
    spec: ThresholdsSpec,
    values: Mapping[str, float | None],
    error_rate: float,
    rows: Sequence[FieldRow],
) -> tuple[ThresholdResult, ...]:
    """Every threshold of ``spec`` checked against a run's values and field rows."""
    out: list[ThresholdResult] = []
    for name in RUN_THRESHOLDS:
        limit = getattr(spec, name)
        if limit is None:
            continue
        value = values.get(name)
        out.append(ThresholdResult(name, value, limit, "min", value is not None and value >= limit))
    if spec.max_error_rate is not None:
        limit = spec.max_error_rate
        out.append(ThresholdResult("error_rate", error_rate, limit, "max", error_rate <= limit))
    for pattern, limit in spec.fields.items():
        is_glob = bool(_GLOB.intersection(pattern))
        matched = [
            r
            for r in rows
            if r.n_expected and (r.path == pattern or (is_glob and path_matches(r.path, pattern)))
        ]
        worst = min((r.accuracy for r in matched), default=None)
        passed = worst is None or worst >= limit
        out.append(ThresholdResult(f"fields[{pattern}]", worst, limit, "min", passed))
    for pattern in spec.critical_fields:
        errors = sum(r.errors for r in rows if r.path == pattern or path_matches(r.path, pattern))
        out.append(ThresholdResult(f"critical[{pattern}]", errors, 0, "max", errors == 0))
    return tuple(out)
