"""`stateval run` on lists of records: sub-field rows in the reports, critical fields."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app

MUTATOR = """
from stateval.state import ValueConfidence

def extract(state, input):
    items = [
        {"sku": "B", "quantity": 2},
        {"sku": "A", "quantity": 5 if input.prompt == "wrong" else 1},
    ]
    out = state.copy()
    out.set_value("invoice", ValueConfidence("INV-1", 1.0))
    out.set_value("line_items", ValueConfidence(items, 1.0))
    return out
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    name = "structured_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    gold = {
        "invoice": "INV-1",
        "line_items": [{"sku": "A", "quantity": 1}, {"sku": "B", "quantity": 2}],
    }
    suite = {
        "name": "invoices",
        "mutator": {"type": "python", "callable": f"{name}:extract", "path": "."},
        "cases": {
            "inline": [
                {"id": "ok", "input": {"prompt": "right"}, "expected_post_state": gold},
                {"id": "bad", "input": {"prompt": "wrong"}, "expected_post_state": gold},
            ]
        },
        "policies": {
            "line_items": {"list_mode": "align", "score": "similarity", "weight": 2},
        },
        "thresholds": {
            "critical_fields": ["line_items[].quantity"],
            "fields": {"line_items[].*": 0.5},
            "mean_weighted_state_accuracy": 0.95,
        },
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    return tmp_path


def test_a_wrong_critical_sub_field_fails_the_run_and_every_report_has_its_row(
    project: Path,
) -> None:
    result = CliRunner().invoke(
        app, ["run", "suite.yaml", "--no-phoenix", "--report-json", "r.json", "--markdown", "r.md"]
    )
    assert result.exit_code == 1, result.output
    assert "critical[line_items[].quantity] 1.000 <= 0.000 FAILED" in result.stdout
    assert "mean_weighted_state_accuracy 0.917 >= 0.950 FAILED" in result.stdout
    assert "fields[line_items[].*] 0.750 >= 0.500 ok" in result.stdout
    report = json.loads((project / "r.json").read_text())
    rows = {row["path"]: row for row in report["fields"]}
    quantity = rows["line_items[].quantity"]
    assert (quantity["matching"], quantity["mismatched"]) == (3, 1)
    assert rows["line_items[].sku"]["matching"] == 4
    assert "line_items[].quantity" in (project / "r.md").read_text()
    (bad,) = [c for c in report["cases"] if c["case_id"] == "bad"]
    scores = {e["name"]: e for e in bad["evaluations"]}
    assert scores["field:line_items[].quantity"]["score"] == 0.5
    assert scores["field:line_items"]["score"] == 0.75
    assert (scores["critical_fields"]["score"], scores["critical_fields"]["label"]) == (
        0.0,
        "failed",
    )
    assert scores["weighted_state_accuracy"]["score"] == pytest.approx((1 + 2 * 0.75) / 3)
    assert report["mean_weighted_state_accuracy"] == pytest.approx((1 + (1 + 2 * 0.75) / 3) / 2)
    assert "weighted state accuracy" in result.stdout
    assert "| weighted state accuracy |" in (project / "r.md").read_text()
