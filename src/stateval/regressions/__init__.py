"""Regressions: is the candidate run worse than the baseline, per field, and is it real?

`diff_runs` pairs two runs' cases by case id and gives each field an exact McNemar verdict
(Tarone's and Holm's corrections across fields) and each run-level metric a seeded paired
bootstrap interval (the paired normal interval from `NORMAL_FROM` paired cases on).
Runs come from the local journal or from Phoenix experiments (`RunResolver`); `gate_result`
checks a diff against a suite's ``thresholds.regressions`` block. A diff reads each run as
columns (`RunColumns`: per field and per metric, arrays over the cases); `print_diff` and
`markdown_diff` render it. ``stateval diff BASE CAND`` is the command.
"""

from __future__ import annotations

from stateval.regressions._columns import ColumnsBuilder, FieldColumn, RunColumns, as_columns
from stateval.regressions._diff import (
    FieldDiff,
    MetricDiff,
    MetricVerdict,
    RunDiff,
    Verdict,
    diff_runs,
)
from stateval.regressions._gate import DEFAULT_GATE, gate_result
from stateval.regressions._links import compare_url, regression_filter
from stateval.regressions._metrics import RUN_METRICS, RunMetric
from stateval.regressions._phoenix_rest import (
    BASELINE_TAG,
    ExperimentAddress,
    parse_experiment,
    read_experiment,
    tag_baseline,
)
from stateval.regressions._render import markdown_diff, print_diff
from stateval.regressions._repetitions import (
    FieldStability,
    Reliability,
    RepetitionsBuilder,
    field_stability,
    print_reliability,
    print_stability,
    reliability,
)
from stateval.regressions._scores import ExperimentLink, Observation, ScoredRun
from stateval.regressions._sources import RunResolver, experiment_link, local_run
from stateval.regressions._stats import (
    NORMAL_FROM,
    Interval,
    bootstrap_mean,
    holm,
    mcnemar_exact,
    paired_bootstrap,
    paired_normal,
    tarone_testable,
)

__all__ = [
    "BASELINE_TAG",
    "DEFAULT_GATE",
    "NORMAL_FROM",
    "RUN_METRICS",
    "ColumnsBuilder",
    "ExperimentAddress",
    "ExperimentLink",
    "FieldColumn",
    "FieldDiff",
    "FieldStability",
    "Interval",
    "MetricDiff",
    "MetricVerdict",
    "Observation",
    "Reliability",
    "RepetitionsBuilder",
    "RunColumns",
    "RunDiff",
    "RunMetric",
    "RunResolver",
    "ScoredRun",
    "Verdict",
    "as_columns",
    "bootstrap_mean",
    "compare_url",
    "diff_runs",
    "experiment_link",
    "field_stability",
    "gate_result",
    "holm",
    "local_run",
    "markdown_diff",
    "mcnemar_exact",
    "paired_bootstrap",
    "paired_normal",
    "parse_experiment",
    "print_diff",
    "print_reliability",
    "print_stability",
    "read_experiment",
    "regression_filter",
    "reliability",
    "tag_baseline",
    "tarone_testable",
]
