"""``stateval diff`` shows each run's figures as its summary computes them under the suite's
``metrics:`` settings (issue 28: value P/R/F1 under ``averaging: case`` / ``list_credit:
partial``, and a convention's figures)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.regressions import Observation, ScoredRun, diff_runs

MUTATOR = """
from pathlib import Path
from stateval.state import ValueConfidence

def track(state, input):
    mode = Path(__file__).with_name("mode").read_text().strip()
    index = int(input.prompt)
    items = [f"item{index}", f"side{index}", "water"]
    city = f"City{index}"
    if mode == "bad" and index % 2 == 0:
        items = items[:2] + ["juice"]   # one list item of three wrong: list F1 2/3
    if mode == "bad" and index % 3 == 0:
        city = "Nowhere"
    out = state.copy()
    out.set_value("order.items", ValueConfidence(items, 1.0))
    out.set_value("order.city", ValueConfidence(city, 1.0))
    if mode == "bad" and index % 5 == 0:
        out.set_value("order.note", ValueConfidence("rush", 1.0))
    return out
"""

N = 30

SETTINGS = {
    "averaging_case_partial_credit": {"averaging": "case", "list_credit": "partial"},
    "wrong_value_fp": {"wrong_value": "fp", "list_credit": "partial"},
    "mwzeval_convention": {"convention": "mwzeval"},
}


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metrics: dict[str, str]) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    name = "figures_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    cases = [
        {
            "id": f"case-{i:02d}",
            "input": {"prompt": str(i)},
            "expected_post_state": {
                "order.items": [f"item{i}", f"side{i}", "water"],
                "order.city": f"City{i}",
            },
        }
        for i in range(N)
    ]
    suite = {
        "name": "orders",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
        "policies": {"order.items": {"list_mode": "set"}},
        "metrics": metrics,
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    return tmp_path


@pytest.fixture(params=sorted(SETTINGS))
def project(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    return _project(tmp_path, monkeypatch, SETTINGS[request.param])


def _run(project: Path, mode: str) -> dict[str, Any]:
    (project / "mode").write_text(mode)
    report = project / f"{mode}.json"
    result = CliRunner().invoke(
        app, ["run", "suite.yaml", "--no-phoenix", "--report-json", str(report)]
    )
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(report.read_text())
    return data


def _figures(summary: dict[str, Any]) -> dict[str, float]:
    """The summary's value P/R/F1 and convention figures (``<convention>_<figure>``)."""
    names = [n for n in summary if n.startswith(("value_", "mwzeval_"))]
    return {n: summary[n] for n in names if isinstance(summary[n], float)}


def test_diff_shows_each_run_summary_figure_under_the_suite_settings(project: Path) -> None:
    good = _run(project, "good")
    bad = _run(project, "bad")
    result = CliRunner().invoke(app, ["diff", "latest~1", "latest", "--json"])
    assert result.exit_code == 0, result.output
    metrics = {m["name"]: m for m in json.loads(result.output)["metrics"]}
    expected_base, expected_cand = _figures(good), _figures(bad)
    assert {"value_precision", "value_recall", "value_f1"} <= expected_cand.keys()
    # the settings make the figures differ from the default count of the field labels
    assert expected_cand["value_f1"] < 1.0
    for name, value in expected_cand.items():
        assert name in metrics, f"diff does not compare {name}"
        assert metrics[name]["cand"] == pytest.approx(value, abs=1e-12), name
        assert metrics[name]["base"] == pytest.approx(expected_base[name], abs=1e-12), name
        assert metrics[name]["n"] == N


def test_convention_figures_are_compared_with_an_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, monkeypatch, {"convention": "mwzeval"})
    _run(project, "good")
    _run(project, "bad")
    result = CliRunner().invoke(app, ["diff", "latest~1", "latest", "--json"])
    metrics = {m["name"]: m for m in json.loads(result.output)["metrics"]}
    jga = metrics["mwzeval_joint_goal_accuracy"]
    assert jga["base"] == 1.0
    assert jga["cand"] < 1.0
    assert jga["verdict"] == "regressed"


def _labelled(label: str, value_labels: bool) -> ScoredRun:
    statuses = ["matching", "mismatched", "missing", "extra"]
    return ScoredRun(
        label,
        {
            f"c{i}": (
                Observation(
                    {"field:a": float(i % 4 == 0)},
                    {"field:a": statuses[i % 4]},
                    value_labels=value_labels,
                ),
            )
            for i in range(8)
        },
    )


def test_an_experiment_of_other_conventions_gets_no_value_figures_from_its_labels() -> None:
    """Counting labels gives the default conventions' figures: an experiment whose run used
    others (its metadata's ``conventions``) is not shown under the summary's names."""
    default = diff_runs(_labelled("a", True), _labelled("b", True))
    assert {"value_precision", "value_recall", "value_f1"} <= {m.name for m in default.metrics}
    other = diff_runs(_labelled("a", False), _labelled("b", False))
    assert not {"value_precision", "value_recall", "value_f1"} & {m.name for m in other.metrics}


def _stateval(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("stateval")), *args]
    env = {**os.environ, "STATEVAL_HOME": str(project / ".stateval")}
    return subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    ("metrics", "compared"),
    [({"list_credit": "all_or_nothing"}, True), ({"list_credit": "partial"}, False)],
    ids=["default_conventions", "partial_list_credit"],
)
def test_an_experiment_has_value_figures_only_under_the_default_conventions(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    phoenix_url: str,
    metrics: dict[str, str],
    compared: bool,
) -> None:
    """An experiment stores field evaluations, not each case's value counts: counting their
    labels gives the run's value P/R/F1 only under the default conventions, which the
    experiment's metadata names (read back over REST)."""
    project = _project(tmp_path, monkeypatch, metrics)
    suite = yaml.safe_load((project / "suite.yaml").read_text())
    suite["phoenix"] = {"dataset": f"figures-{uuid.uuid4().hex[:8]}"}
    (project / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    (project / "mode").write_text("bad")
    run = _stateval(
        project, "run", "suite.yaml", "--phoenix-url", phoenix_url, "--report-json", "r.json"
    )
    assert run.returncode in (0, 1), run.stderr
    summary = json.loads((project / "r.json").read_text())
    assert summary["experiment_url"], run.stderr
    diff = _stateval(
        project, "diff", summary["experiment_url"], "latest", "--suite", "suite.yaml", "--json"
    )
    assert diff.returncode == 0, diff.stderr
    metrics_by_name = {m["name"]: m for m in json.loads(diff.stdout)["metrics"]}
    assert ("value_f1" in metrics_by_name) is compared
    if compared:  # the experiment's labels give its run's figure
        assert metrics_by_name["value_f1"]["base"] == pytest.approx(summary["value_f1"], abs=1e-12)
        assert metrics_by_name["value_f1"]["cand"] == pytest.approx(summary["value_f1"], abs=1e-12)
