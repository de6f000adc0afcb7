"""A paired comparison of two runs: per-field verdicts and run-level intervals.

Cases are paired by case id. Per field, a paired case *regressed* when its correctness (the
mean over its repetitions) is lower in the candidate, *improved* when higher; the exact
McNemar test on those discordant pairs (a sign test once repetitions make correctness a
fraction) gives a p-value. Fields with too few discordant pairs to ever be significant are
left out of the family (Tarone's correction for discrete tests), and Holm's correction across
the testable fields controls the chance of any false verdict. A field counts in a case when
either run evaluated it there; a run that did not evaluate it (nothing expected, nothing
produced) has it right. Run-level metrics get a seeded paired bootstrap interval of their
difference (from `NORMAL_FROM` paired cases on, the paired normal interval: O(n), no
resampling).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from stateval.regressions._columns import FieldColumn, RunColumns, as_columns
from stateval.regressions._links import compare_url, regression_filter
from stateval.regressions._scores import ScoredRun
from stateval.regressions._stats import (
    Interval,
    holm,
    mcnemar_exact,
    paired_bootstrap,
    tarone_testable,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["FieldDiff", "MetricDiff", "MetricVerdict", "RunDiff", "Verdict", "diff_runs"]

Verdict = Literal["regressed", "improved", "no evidence"]
MetricVerdict = Literal["regressed", "improved", "no evidence", "not judged"]


@dataclass(frozen=True, slots=True)
class FieldDiff:
    """One field, baseline against candidate.

    Attributes:
        path: The field.
        n: Paired cases in which either run evaluated the field.
        regressed: Cases right(er) in the baseline than in the candidate.
        improved: Cases right(er) in the candidate.
        base_accuracy: Mean correctness over the ``n`` cases in the baseline.
        cand_accuracy: The same in the candidate.
        p_value: Exact McNemar p-value on the discordant pairs.
        p_adjusted: ``p_value`` after Holm's correction across the testable fields; 1.0 for a
            field with too few discordant pairs to be significant (Tarone).
        verdict: ``regressed`` / ``improved`` when ``p_adjusted < alpha``, else ``no evidence``.
        regressed_cases: The case ids that regressed.
        improved_cases: The case ids that improved.
        compare_url: The Phoenix compare page of the two experiments, with a filter showing
            the regressed cases (when both runs are experiments on one dataset).
        filter: That filter condition (exactly the regressed cases with one repetition per
            case; with more, the cases where some candidate repetition scored lower).
    """

    path: str
    n: int
    regressed: int
    improved: int
    base_accuracy: float
    cand_accuracy: float
    p_value: float
    p_adjusted: float
    verdict: Verdict
    regressed_cases: tuple[str, ...] = ()
    improved_cases: tuple[str, ...] = ()
    compare_url: str | None = None
    filter: str | None = None

    @property
    def unchanged(self) -> int:
        """Paired cases with the same correctness in both runs."""
        return self.n - self.regressed - self.improved

    @property
    def change(self) -> float:
        """Candidate accuracy minus baseline accuracy."""
        return self.cand_accuracy - self.base_accuracy

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "path": self.path,
            "n": self.n,
            "regressed": self.regressed,
            "improved": self.improved,
            "unchanged": self.unchanged,
            "base_accuracy": self.base_accuracy,
            "cand_accuracy": self.cand_accuracy,
            "change": self.change,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "verdict": self.verdict,
            "regressed_cases": list(self.regressed_cases),
            "improved_cases": list(self.improved_cases),
            "compare_url": self.compare_url,
            "filter": self.filter,
        }


@dataclass(frozen=True, slots=True)
class MetricDiff:
    """One run-level metric, baseline against candidate, over the paired cases.

    Attributes:
        name: The metric (``joint_goal_accuracy``...).
        n: Paired cases that measure it in both runs.
        base: Its baseline value.
        cand: Its candidate value.
        interval: The bootstrap interval of ``cand - base`` (None with fewer than 2 cases).
        higher_is_better: False for error rate and time.
        verdict: ``regressed`` / ``improved`` when the interval excludes zero; ``not judged``
            for time per call (it measures the machine's load as much as the mutator).
    """

    name: str
    n: int
    base: float | None
    cand: float | None
    interval: Interval | None
    higher_is_better: bool
    verdict: MetricVerdict

    @property
    def change(self) -> float | None:
        """Candidate minus baseline."""
        return None if self.base is None or self.cand is None else self.cand - self.base

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "name": self.name,
            "n": self.n,
            "base": self.base,
            "cand": self.cand,
            "change": self.change,
            "low": None if self.interval is None else self.interval.low,
            "high": None if self.interval is None else self.interval.high,
            "confidence": None if self.interval is None else self.interval.confidence,
            "higher_is_better": self.higher_is_better,
            "verdict": self.verdict,
        }


@dataclass(frozen=True, slots=True)
class RunDiff:
    """Baseline against candidate: fields (worst first), metrics, and the unpaired cases.

    Attributes:
        base: The baseline's label.
        cand: The candidate's label.
        n_paired: Cases in both runs.
        removed: Case ids only in the baseline.
        added: Case ids only in the candidate.
        fields: Per-field verdicts: regressions first (largest drop first), then the rest.
        metrics: Run-level metrics that either run measures.
        alpha: The significance level of the field verdicts (after Holm).
        tested_fields: Fields with enough discordant pairs to be significant (Tarone's
            testable family, which Holm corrects over).
        seed: The bootstrap's seed.
        resamples: Bootstrap resamples.
        base_repetitions: Most repetitions of a baseline case.
        cand_repetitions: Most repetitions of a candidate case.
        base_url: The baseline's Phoenix experiment, if any.
        cand_url: The candidate's Phoenix experiment, if any.
    """

    base: str
    cand: str
    n_paired: int
    removed: tuple[str, ...]
    added: tuple[str, ...]
    fields: tuple[FieldDiff, ...]
    metrics: tuple[MetricDiff, ...]
    alpha: float
    seed: int
    resamples: int
    base_repetitions: int = 1
    cand_repetitions: int = 1
    base_url: str | None = None
    cand_url: str | None = None
    tested_fields: int = 0

    @property
    def regressed_fields(self) -> tuple[FieldDiff, ...]:
        """Fields with a ``regressed`` verdict, worst first."""
        return tuple(f for f in self.fields if f.verdict == "regressed")

    @property
    def improved_fields(self) -> tuple[FieldDiff, ...]:
        """Fields with an ``improved`` verdict."""
        return tuple(f for f in self.fields if f.verdict == "improved")

    @property
    def regressed_metrics(self) -> tuple[MetricDiff, ...]:
        """Run-level metrics whose interval says they got worse."""
        return tuple(m for m in self.metrics if m.verdict == "regressed")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``stateval diff --json``)."""
        return {
            "base": self.base,
            "cand": self.cand,
            "base_url": self.base_url,
            "cand_url": self.cand_url,
            "n_paired": self.n_paired,
            "removed": list(self.removed),
            "added": list(self.added),
            "alpha": self.alpha,
            "tested_fields": self.tested_fields,
            "seed": self.seed,
            "resamples": self.resamples,
            "base_repetitions": self.base_repetitions,
            "cand_repetitions": self.cand_repetitions,
            "regressed_fields": [f.path for f in self.regressed_fields],
            "improved_fields": [f.path for f in self.improved_fields],
            "fields": [f.to_dict() for f in self.fields],
            "metrics": [m.to_dict() for m in self.metrics],
        }


@dataclass(frozen=True, slots=True)
class _FieldCounts:
    n: int
    base_sum: float
    cand_sum: float
    regressed: list[str]
    improved: list[str]


def _paired_values(
    column: FieldColumn | None, size: int, positions: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """A field's correctness in each paired case (NaN where the run did not evaluate it)."""
    import numpy as np

    dense = np.full(size, np.nan)
    if column is not None:
        dense[column.cases] = column.values
    return dense[positions]


def _field_counts(
    base: RunColumns,
    cand: RunColumns,
    paired: Sequence[str],
    b_pos: npt.NDArray[np.int64],
    c_pos: npt.NDArray[np.int64],
) -> dict[str, _FieldCounts]:
    """Per field, over the paired cases where either run evaluated it (a run that did not has
    it right): the counts McNemar reads (O(cases) arrays, one field at a time)."""
    import numpy as np

    counts: dict[str, _FieldCounts] = {}
    for path in sorted(base.fields.keys() | cand.fields.keys()):
        b = _paired_values(base.fields.get(path), len(base.case_ids), b_pos)
        c = _paired_values(cand.fields.get(path), len(cand.case_ids), c_pos)
        either = ~(np.isnan(b) & np.isnan(c))
        if not either.any():
            continue
        b = np.where(np.isnan(b), 1.0, b)[either]
        c = np.where(np.isnan(c), 1.0, c)[either]
        ids = np.flatnonzero(either)
        counts[path] = _FieldCounts(
            int(either.sum()),
            float(b.sum()),
            float(c.sum()),
            [paired[i] for i in ids[c < b]],
            [paired[i] for i in ids[c > b]],
        )
    return counts


def _metric_diffs(
    base: RunColumns,
    cand: RunColumns,
    b_pos: npt.NDArray[np.int64],
    c_pos: npt.NDArray[np.int64],
    *,
    seed: int,
    resamples: int,
) -> list[MetricDiff]:
    out: list[MetricDiff] = []
    known = {m.name for m in base.measures}
    for metric in (*base.measures, *(m for m in cand.measures if m.name not in known)):
        if metric.name not in base.metrics or metric.name not in cand.metrics:
            continue  # one run has no share of it in any case
        # per-case (numerator, denominator) columns: 16 bytes a case, whatever the run's size
        b = base.metrics[metric.name][b_pos]
        c = cand.metrics[metric.name][c_pos]
        both = (b[:, 1] > 0) & (c[:, 1] > 0)
        if not both.any():
            continue
        b_num, b_den, c_num, c_den = b[both, 0], b[both, 1], c[both, 0], c[both, 1]
        interval = paired_bootstrap(b_num, b_den, c_num, c_den, seed=seed, resamples=resamples)
        verdict: MetricVerdict = "no evidence" if metric.judged else "not judged"
        if metric.judged and interval is not None and interval.excludes_zero:
            better = (interval.low > 0) == metric.higher_is_better
            verdict = "improved" if better else "regressed"
        out.append(
            MetricDiff(
                metric.name,
                int(both.sum()),
                float(b_num.sum() / b_den.sum()),
                float(c_num.sum() / c_den.sum()),
                interval,
                metric.higher_is_better,
                verdict,
            )
        )
    return out


def diff_runs(
    base: ScoredRun | RunColumns,
    cand: ScoredRun | RunColumns,
    *,
    alpha: float = 0.05,
    seed: int = 0,
    resamples: int = 2000,
) -> RunDiff:
    """Compare ``cand`` with ``base``, case by case.

    Args:
        base: The baseline run.
        cand: The candidate run.
        alpha: Significance level of the field verdicts, after Tarone's and Holm's corrections.
        seed: Seeds the bootstrap (the same inputs and seed give the same intervals).
        resamples: Bootstrap resamples per metric.

    Example:
        >>> from stateval.regressions import Observation, ScoredRun
        >>> def run(label, right):
        ...     return ScoredRun(label, {f"c{i}": (Observation({"field:a": float(r)}),)
        ...                              for i, r in enumerate(right)})
        >>> diff = diff_runs(run("old", [1] * 20), run("new", [1] * 8 + [0] * 12))
        >>> [(f.path, f.regressed, f.verdict) for f in diff.fields]
        [('a', 12, 'regressed')]
    """
    import numpy as np

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    base, cand = as_columns(base), as_columns(cand)
    b_index = {case_id: i for i, case_id in enumerate(base.case_ids)}
    c_index = {case_id: i for i, case_id in enumerate(cand.case_ids)}
    paired = sorted(b_index.keys() & c_index.keys())
    removed = tuple(sorted(b_index.keys() - c_index.keys()))
    added = tuple(sorted(c_index.keys() - b_index.keys()))
    b_pos = np.fromiter((b_index[c] for c in paired), dtype=np.int64, count=len(paired))
    c_pos = np.fromiter((c_index[c] for c in paired), dtype=np.int64, count=len(paired))
    del b_index, c_index
    counts = _field_counts(base, cand, paired, b_pos, c_pos)
    paths = sorted(counts)
    worse = [len(counts[p].regressed) for p in paths]
    better = [len(counts[p].improved) for p in paths]
    raw = [mcnemar_exact(w, b) for w, b in zip(worse, better, strict=True)]
    testable = tarone_testable([w + b for w, b in zip(worse, better, strict=True)], alpha)
    family = iter(holm([p for p, t in zip(raw, testable, strict=True) if t]))
    adjusted = [next(family) if t else 1.0 for t in testable]
    link = _shared_link(base, cand)
    fields: list[FieldDiff] = []
    for path, p_value, p_adj in zip(paths, raw, adjusted, strict=True):
        row = counts[path]
        verdict: Verdict = "no evidence"
        if p_adj < alpha and len(row.regressed) != len(row.improved):
            verdict = "regressed" if len(row.regressed) > len(row.improved) else "improved"
        url = condition = None
        if link is not None and row.regressed:
            condition = regression_filter(path)
            url = compare_url(*link, condition)
        fields.append(
            FieldDiff(
                path=path,
                n=row.n,
                regressed=len(row.regressed),
                improved=len(row.improved),
                base_accuracy=row.base_sum / row.n,
                cand_accuracy=row.cand_sum / row.n,
                p_value=p_value,
                p_adjusted=p_adj,
                verdict=verdict,
                regressed_cases=tuple(row.regressed),
                improved_cases=tuple(row.improved),
                compare_url=url,
                filter=condition,
            )
        )
    rank = {"regressed": 0, "improved": 2, "no evidence": 1}
    fields.sort(key=lambda f: (rank[f.verdict], f.change, f.p_adjusted, f.path))
    return RunDiff(
        base=base.label,
        cand=cand.label,
        n_paired=len(paired),
        removed=removed,
        added=added,
        fields=tuple(fields),
        metrics=tuple(_metric_diffs(base, cand, b_pos, c_pos, seed=seed, resamples=resamples)),
        alpha=alpha,
        seed=seed,
        resamples=resamples,
        base_repetitions=base.repetitions,
        cand_repetitions=cand.repetitions,
        base_url=None if base.experiment is None else base.experiment.url,
        cand_url=None if cand.experiment is None else cand.experiment.url,
        tested_fields=sum(testable),
    )


def _shared_link(base: RunColumns, cand: RunColumns) -> tuple[str, str, str, str] | None:
    """(server, dataset, base experiment, candidate experiment) when both runs are experiments
    on one dataset of one server."""
    b, c = base.experiment, cand.experiment
    if b is None or c is None:
        return None
    if (b.phoenix_url, b.dataset_id) != (c.phoenix_url, c.dataset_id):
        return None
    return b.phoenix_url, b.dataset_id, b.experiment_id, c.experiment_id
