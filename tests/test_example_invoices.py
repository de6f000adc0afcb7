"""examples/invoices: lists of records, a typed date, weights and critical fields, run as a user
runs it (`stateval run ... --no-phoenix`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateval.cli import app

SUITE = Path(__file__).resolve().parents[1] / "examples" / "invoices" / "suite.yaml"


def test_the_invoices_example_reports_sub_fields_and_fails_on_critical_fields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    report = tmp_path / "r.json"
    result = CliRunner().invoke(
        app, ["run", str(SUITE), "--no-phoenix", "--report-json", str(report)]
    )
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "threshold mean_weighted_state_accuracy 0.918 >= 0.900 ok" in out
    assert "threshold critical[invoice_number] 2.000 <= 0.000 FAILED" in out
    assert "threshold critical[line_items[].quantity] 53.000 <= 0.000 FAILED" in out
    data = json.loads(report.read_text())
    rows = {row["path"]: row for row in data["fields"]}
    quantity = rows["line_items[].quantity"]
    assert (quantity["matching"], quantity["mismatched"], quantity["missing"]) == (238, 17, 15)
    assert quantity["extra"] == 21
    assert (rows["line_items"]["matching"], rows["date"]["matching"]) == (23, 63)
    reorder = data["slices"]["metadata.variation"]["reorder"]
    assert reorder["value_f1"] == 1.0


def test_mutating_the_invoices_example_finds_order_and_date_form_equivalent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    report = tmp_path / "m.json"
    operators = "reorder_list,change_date_format,perturb_list_item"
    result = CliRunner().invoke(
        app,
        ["mutate", str(SUITE), "--operators", operators, "--report-json", str(report)],
    )
    assert result.exit_code in (0, 1), result.output
    out = " ".join(result.stdout.split())
    assert "why: policies['line_items'] treats the changed values of line_items as equal" in out
    # critical fields and the weighted threshold read every expected field
    assert "ok field_coverage: 5 of 5 expected fields are read by the verdict" in out
    statuses = {m["operator"]: m["status"] for m in json.loads(report.read_text())["mutants"]}
    assert statuses == {
        "reorder_list": "equivalent",
        "change_date_format": "equivalent",
        "perturb_list_item": "killed",
    }


def test_a_diff_of_two_invoice_runs_pools_accuracy_as_the_run_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    for _ in range(2):
        result = CliRunner().invoke(app, ["run", str(SUITE), "--no-phoenix"])
        assert result.exit_code == 1, result.output
    assert "accuracy (expected fields)                     82.7%" in result.stdout
    diff = CliRunner().invoke(app, ["diff", "latest~1", "latest", "--suite", str(SUITE)])
    assert diff.exit_code == 0, diff.output
    (accuracy,) = [line for line in diff.stdout.splitlines() if line.startswith(" accuracy ")]
    assert accuracy.split("│")[1:3] == [" 82.7% ", " 82.7% "]  # sub-fields are not fields
