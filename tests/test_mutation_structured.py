"""Mutation operators for structured values: one list item perturbed, a list reordered, a date
written in another form; `stateval mutate` tells which policies see them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from stateval.cli import mutate

MODULE = """
from stateval import ValueConfidence

ITEMS = [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}, {"sku": "C", "qty": 3}]


def extract(state, input):
    state.set_value("line_items", ValueConfidence(ITEMS, 1.0))
    state.set_value("date", ValueConfidence("2026-03-01", 1.0))
    return state
"""

SUITE = """
name: invoices
mutator: {type: python, callable: "structmut_mod:extract", path: .}
cases:
  inline:
    - id: one
      input: {prompt: "invoice"}
      expected_post_state:
        line_items: [{sku: A, qty: 1}, {sku: B, qty: 2}, {sku: C, qty: 3}]
        date: "2026-03-01"
thresholds: {overall_match_rate: 1.0}
"""


def app() -> typer.Typer:
    cli = typer.Typer()
    cli.command()(mutate)

    @cli.command()
    def version() -> None:  # a second command, so "mutate" is a sub-command as in stateval
        """Print nothing."""

    return cli


def statuses(tmp_path: Path, policies: str) -> dict[str, str]:
    (tmp_path / "structmut_mod.py").write_text(MODULE, encoding="utf-8")
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE + policies, encoding="utf-8")
    report = tmp_path / "r.json"
    operators = "perturb_list_item,reorder_list,change_date_format"
    args = ["mutate", str(suite), "--operators", operators, "--report-json", str(report)]
    result = CliRunner().invoke(app(), args)
    assert result.exit_code in (0, 1), result.output
    return {m["operator"]: m["status"] for m in json.loads(report.read_text())["mutants"]}


def test_order_and_date_form_kill_mutants_under_strict_policies(tmp_path: Path) -> None:
    assert statuses(tmp_path, "") == {
        "perturb_list_item": "killed",
        "reorder_list": "killed",
        "change_date_format": "killed",
    }


def test_align_and_the_date_comparator_make_them_equivalent(tmp_path: Path) -> None:
    policies = "policies:\n  line_items: {list_mode: align}\n  date: {comparator: date}\n"
    assert statuses(tmp_path, policies) == {
        "perturb_list_item": "killed",
        "reorder_list": "equivalent",
        "change_date_format": "equivalent",
    }


@pytest.mark.parametrize(
    ("name", "value", "changed"),
    [
        ("reorder", [1, 2, 3], [2, 3, 1]),
        ("reorder", [1, 1], None),
        ("reformat_date", "2026-12-25", "December 25, 2026"),
        ("reformat_date", "2026-02-30", None),
        ("perturb_item", ["not records"], None),
    ],
)
def test_value_changes(name: str, value: object, changed: object) -> None:
    import random

    from stateval.mutation import _value_changes

    assert getattr(_value_changes, name)(value, random.Random(0)) == changed
