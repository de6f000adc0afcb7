"""The suite's ``mutation:`` section: defaults of ``stateval mutate`` that its options override."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from stateval.cli import mutate
from stateval.errors import PluginError, SuiteProblemsError
from stateval.mutation import (
    OPERATORS,
    Mutant,
    as_system,
    provenance_eval,
    register_operator,
    run_mutation,
    suite_config,
    suite_fail_under,
)
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
mutator: {type: python, callable: "setfill_mod:fill", path: .}
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

SECTION = """mutation:
  operators: [drop_field]
  seed: 7
  fail_under: 60
  evals: [provenance, "setfill_mod:two_fields"]
  max_calls: 10
  max_mutants: 5
"""


def _app() -> typer.Typer:
    cli = typer.Typer()
    cli.command()(mutate)

    @cli.command()
    def version() -> None:  # a second command, so "mutate" is a sub-command as in stateval
        """Print nothing."""

    return cli


def _write(folder: Path, section: str = SECTION) -> Path:
    (folder / "setfill_mod.py").write_text(MODULE, encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(SUITE + section, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # problem lines name files relative to the working directory


@pytest.fixture
def shout() -> Iterator[str]:
    def operator(target: object) -> list[Mutant]:
        system = as_system(target)
        return [Mutant("shout", "drops every output", system.with_output(_empty, "empty"))]

    register_operator("shout", operator)
    try:
        yield "shout"
    finally:
        OPERATORS.pop("shout", None)


def _empty(pre: object, input: object, post: object) -> object:
    from stateval.state import InterpretiveState

    return InterpretiveState()


def test_the_suite_section_sets_operators_seed_evals_and_budget(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path))
    config = suite_config(suite)
    assert config.operators == ["drop_field"]
    assert config.seed == 7
    assert config.max_calls == 10
    assert config.max_mutants == 5
    assert config.evals[0] is provenance_eval
    assert getattr(config.evals[1], "__name__", None) == "two_fields"
    assert config.concurrency == suite.model.concurrency
    assert suite_fail_under(suite) == 60


def test_arguments_override_the_suite_section(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path))
    config = suite_config(
        suite, operators="stale", seed=0, evals=["provenance"], max_calls=0, max_mutants=1
    )
    assert config.operators == "stale"
    assert config.seed == 0
    assert config.evals == [provenance_eval]
    assert (config.max_calls, config.max_mutants) == (0, 1)
    assert suite_fail_under(suite, 0) == 0


def test_without_a_section_everything_registered_runs(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, ""))
    config = suite_config(suite)
    assert (config.operators, config.seed, list(config.evals)) == (None, 0, [])
    assert (config.max_calls, config.max_mutants) == (None, None)
    assert suite_fail_under(suite) is None


async def test_run_mutation_without_a_config_follows_the_suite(tmp_path: Path) -> None:
    report = await run_mutation(load_suite(_write(tmp_path)))
    assert report.operators == ("drop_field",)
    assert report.seed == 7
    # a.y's dropped update survives the suite's threshold but not the two_fields eval
    assert {r.status for r in report.results} == {"killed"}
    assert any("eval:two_fields" in r.killed_by for r in report.results)


def test_an_unknown_operator_in_the_suite_is_one_problem_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "mutation:\n  operators:\n    - drop_field\n    - drop_feld\n")
    suite = load_suite(path)
    with pytest.raises(SuiteProblemsError) as info:
        suite_config(suite)
    (line,) = info.value.problems
    assert line.startswith("suite.yaml:18: mutation.operators[1]: unknown operator 'drop_feld'")
    assert "(known: " in line
    assert "drop_field" in line.split("(known: ")[1]
    # overridden on the command line, the suite's list is not used, so not checked
    assert suite_config(suite, operators="stale").operators == "stale"


def test_an_operator_registered_by_a_plugin_may_be_named_in_the_suite(
    tmp_path: Path, shout: str
) -> None:
    suite = load_suite(_write(tmp_path, f"mutation: {{operators: [{shout}]}}\n"))
    assert suite_config(suite).operators == [shout]


def test_an_unknown_eval_in_the_suite_is_one_problem_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "mutation:\n  evals: [provenance, nope]\n")
    with pytest.raises(SuiteProblemsError) as info:
        suite_config(load_suite(path))
    assert info.value.problems == [
        "suite.yaml:16: mutation.evals[1]: 'nope': no eval of that name "
        "(known: provenance; or module:attr)"
    ]
    with pytest.raises(PluginError, match=r"^--eval nope: no eval of that name"):
        suite_config(load_suite(_write(tmp_path, "")), evals=["nope"])


def test_the_command_takes_the_suite_section_and_its_options_override_it(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path, "mutation: {operators: [drop_field], fail_under: 60, seed: 3}\n")
    runner = CliRunner()
    report = tmp_path / "r.json"
    result = runner.invoke(_app(), ["mutate", str(path), "--report-json", str(report)])
    assert result.exit_code == 1, result.output  # 50% < the suite's fail_under 60
    assert "mutation score < 60%: FAILED" in result.stdout
    data = json.loads(report.read_text())
    assert (data["operators"], data["seed"]) == (["drop_field"], 3)
    result = runner.invoke(_app(), ["mutate", str(path), "--fail-under", "50", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "seed 1" in result.stdout
    result = runner.invoke(
        _app(), ["mutate", str(path), "--operators", "stale", "--report-json", str(report)]
    )
    assert result.exit_code == 0, result.output  # stale is killed: 100% >= 60
    assert json.loads(report.read_text())["operators"] == ["stale"]


def test_the_command_reports_an_unknown_suite_operator_on_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "mutation:\n  operators: [drop_feld]\n")
    result = CliRunner().invoke(_app(), ["mutate", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: suite.yaml:16: mutation.operators[0]: unknown operator 'drop_feld' (known: "
    )
    assert len(result.stderr.splitlines()) == 1
