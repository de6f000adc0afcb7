"""Diffs of large runs: the paired normal interval from `NORMAL_FROM` cases on agrees with the
bootstrap it replaces, is deterministic, and a diff over that many cases gives the verdicts
a bootstrap would."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.stats import bootstrap
from typer.testing import CliRunner

from stateval.cli import app
from stateval.regressions import NORMAL_FROM, Observation, ScoredRun, diff_runs, paired_bootstrap


def _paired_counts(n: int, seed: int) -> tuple[np.ndarray, ...]:
    """Per-case (right, expected) field counts of two runs; the candidate a little worse."""
    rng = np.random.default_rng(seed)
    den = rng.integers(1, 21, n).astype(np.float64)
    base = rng.binomial(den.astype(np.int64), 0.8).astype(np.float64)
    worse = rng.binomial(den.astype(np.int64), 0.02).astype(np.float64)
    cand = np.maximum(base - worse, 0.0)
    return base, den, cand, den.copy()


def _ratio_difference(bn, bd, cn, cd, axis=-1):  # type: ignore[no-untyped-def]
    return cn.sum(axis=axis) / cd.sum(axis=axis) - bn.sum(axis=axis) / bd.sum(axis=axis)


def test_the_normal_interval_agrees_with_the_bootstrap_at_its_threshold() -> None:
    bn, bd, cn, cd = _paired_counts(NORMAL_FROM, seed=3)
    normal = paired_bootstrap(bn, bd, cn, cd)
    assert normal is not None
    reference = bootstrap(
        (bn, bd, cn, cd),
        _ratio_difference,
        paired=True,
        vectorized=True,
        n_resamples=2000,
        batch=200,
        method="percentile",
        rng=np.random.default_rng(0),
    ).confidence_interval
    half = (reference.high - reference.low) / 2
    assert normal.low == pytest.approx(reference.low, abs=0.1 * half)
    assert normal.high == pytest.approx(reference.high, abs=0.1 * half)
    assert normal.estimate == pytest.approx(_ratio_difference(bn, bd, cn, cd))


def test_below_the_threshold_the_seeded_bootstrap_is_kept() -> None:
    bn, bd, cn, cd = _paired_counts(NORMAL_FROM - 1, seed=4)
    one = paired_bootstrap(bn, bd, cn, cd, seed=5, resamples=200)
    again = paired_bootstrap(bn, bd, cn, cd, seed=5, resamples=200)
    other = paired_bootstrap(bn, bd, cn, cd, seed=6, resamples=200)
    assert one == again
    assert one != other  # a resampled interval: the seed matters


def test_a_large_diff_is_deterministic_and_finds_the_regression() -> None:
    n = 2 * NORMAL_FROM
    rng = np.random.default_rng(11)
    worse = rng.random(n) < 0.03
    noise = rng.random(n) < 0.5

    def run(label: str, right_a: np.ndarray) -> ScoredRun:
        return ScoredRun(
            label,
            {
                f"c{i}": (
                    Observation(
                        {
                            "field:a": float(right_a[i]),
                            "field:b": float(noise[i]),
                            "state_accuracy": (float(right_a[i]) + float(noise[i])) / 2,
                        }
                    ),
                )
                for i in range(n)
            },
        )

    base, cand = run("base", np.ones(n)), run("cand", (~worse).astype(np.float64))
    first = diff_runs(base, cand, seed=1)
    assert first.to_dict() == diff_runs(base, cand, seed=2).to_dict() | {"seed": 1}
    assert [f.path for f in first.regressed_fields] == ["a"]
    accuracy = {m.name: m for m in first.metrics}["mean_state_accuracy"]
    assert accuracy.verdict == "regressed"
    assert accuracy.interval is not None
    assert accuracy.interval.low < accuracy.change < accuracy.interval.high < 0


def test_a_run_with_cases_the_suite_no_longer_defines_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / ".stateval"))
    cases = [
        {"id": f"c{i}", "input": {"prompt": "x"}, "expected_post_state": {"a": 1}} for i in range(3)
    ]
    suite = {"name": "s", "mutator": {"type": "python", "callable": "m:mutate", "path": "."}}
    (tmp_path / "m.py").write_text("def mutate(state, input):\n    return state\n")
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({**suite, "cases": {"inline": cases}}))
    assert CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix"]).exit_code in (0, 1)
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({**suite, "cases": {"inline": cases[:2]}}))
    result = CliRunner().invoke(app, ["diff", "latest", "latest"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    assert "no longer defines: ['c2']" in lines[0]
