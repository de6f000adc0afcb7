"""`stateval mutate`: the command, its exit codes and its terminal, JSON and JUnit reports."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import typer
from rich.console import Console
from typer.testing import CliRunner

from stateval.cli import mutate
from stateval.mutation import MutationConfig, run_mutation
from stateval.reports import print_mutation_report
from stateval.suite import load_suite

MODULE = """
from stateval import ValueConfidence


def fill(state, input):
    for part in input.prompt.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            vc = ValueConfidence(value.strip(), 1.0, "stated", input.message_id)
            state.set_value(key.strip(), vc)
    return state


def two_fields(output, case):
    return len(output) == 2
"""

SUITE = """
name: tiny
mutator: {type: python, callable: "cmdfill_mod:fill", path: .}
cases:
  inline:
    - id: one
      input: {prompt: "a.x=1; a.y=2"}
      expected_post_state: {a.x: "1", a.y: "2"}
    - id: two
      pre_state: {a.x: "1"}
      input: {prompt: "a.y=5"}
      expected_post_state: {a.x: "1", a.y: "5"}
thresholds:
  fields: {a.x: 1.0}
"""


def app() -> typer.Typer:
    cli = typer.Typer()
    cli.command()(mutate)

    @cli.command()
    def version() -> None:  # a second command, so "mutate" is a sub-command as in stateval
        """Print nothing."""

    return cli


def write(folder: Path) -> Path:
    (folder / "cmdfill_mod.py").write_text(MODULE, encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(SUITE, encoding="utf-8")
    return path


def test_mutate_writes_reports_and_exits_by_fail_under(tmp_path: Path) -> None:
    suite = write(tmp_path)
    runner = CliRunner()
    report, junit = tmp_path / "r.json", tmp_path / "j.xml"
    args = ["mutate", str(suite), "--operators", "drop_field", "--report-json", str(report)]
    result = runner.invoke(app(), [*args, "--junit", str(junit), "--fail-under", "60"])
    assert result.exit_code == 1, result.output
    assert "mutation score" in result.stdout
    assert "50.0% (1/2" in result.stdout
    assert "thresholds.fields['a.y']" in result.stdout
    assert "mutation score < 60%: FAILED" in result.stdout
    data = json.loads(report.read_text())
    assert data["counts"] == {
        "killed": 1,
        "survived": 1,
        "equivalent": 0,
        "inert": 0,
        "skipped": 0,
        "error": 0,
    }
    assert data["score"]["value"] == 0.5
    survivor = next(m for m in data["mutants"] if m["status"] == "survived")
    assert survivor["description"].startswith("drops the update to a.y")
    root = ET.parse(junit).getroot()
    mutants = root.find("testsuite")
    assert mutants is not None
    assert (mutants.get("tests"), mutants.get("failures")) == ("2", "1")
    failure = mutants.find("testcase/failure")
    assert failure is not None
    assert failure.get("message", "").startswith("add thresholds.fields['a.y']: 1.0")
    result = runner.invoke(app(), [*args, "--fail-under", "50"])
    assert result.exit_code == 0, result.output


def test_mutate_takes_evals_by_name_or_reference(tmp_path: Path) -> None:
    suite = write(tmp_path)
    runner = CliRunner()
    args = ["mutate", str(suite), "--operators", "strip_provenance,drop_field"]
    result = runner.invoke(
        app(), [*args, "--eval", "provenance", "--eval", "cmdfill_mod:two_fields"]
    )
    assert result.exit_code == 0, result.output
    assert "3 killed, 0 survived" in result.stdout


def test_mutate_usage_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    suite = write(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app(), ["mutate", str(suite), "--operators", "drop_feld"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: unknown operator 'drop_feld'")
    result = runner.invoke(app(), ["mutate", str(suite), "--eval", "nope"])
    assert result.exit_code == 2
    assert "error: --eval nope: no eval of that name" in result.stderr
    result = runner.invoke(app(), ["mutate", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2
    assert "cannot read" in result.stderr


async def test_terminal_report_lists_survivors_most_severe_first(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path))
    report = await run_mutation(suite, MutationConfig(operators="perturb_confidence,drop_field"))
    out = io.StringIO()
    print_mutation_report(report, Console(file=out, width=200), fail_under=10)
    text = out.getvalue()
    assert text.index("drops the update to a.y") < text.index("lowers the confidence of the")
    assert "mutation score >= 10%: PASSED" in text
    assert "by operator" in text


def test_equivalent_mutants_are_reported_apart_from_survivors(tmp_path: Path) -> None:
    suite = write(tmp_path)
    text = suite.read_text(encoding="utf-8").replace("a.y=2", "a.y=north")
    text = text.replace('a.y: "2"', "a.y: north") + 'policies:\n  "*": {normalize: [case]}\n'
    suite.write_text(text, encoding="utf-8")
    report, junit = tmp_path / "r.json", tmp_path / "j.xml"
    args = ["mutate", str(suite), "--operators", "change_case,drop_field", "--junit", str(junit)]
    result = CliRunner().invoke(app(), [*args, "--report-json", str(report)])
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "1 survived, 1 equivalent" in out
    assert "equivalent: the output changed, but nothing the suite observes did" in out
    assert "why: policies['*'] normalises letter case" in out
    survivors = out.split("survivors, most severe first", 1)[1].split("equivalent:", 1)[0]
    assert "change_case" not in survivors
    # killed / (killed + survived): the equivalent mutant is left out of the effective score
    assert "effective score 50.0% (1/2" in out
    data = json.loads(report.read_text())
    (equivalent,) = [m for m in data["mutants"] if m["status"] == "equivalent"]
    assert equivalent["operator"] == "change_case"
    assert data["survivors"] == [m["id"] for m in data["mutants"] if m["status"] == "survived"]
    cases = {c.get("classname"): c for c in ET.parse(junit).getroot().iter("testcase")}
    skipped = cases["change_case"].find("skipped")
    assert skipped is not None
    assert skipped.get("message", "").startswith("equivalent: nothing the suite observes")
