"""What `stateval mutate` tells a user: what a mutant wrote, cancelling errors, inert mutants,
and progress in logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from stateval import InterpretiveState, StructuredInput, ValueConfidence
from stateval.cli._mutate import mutate
from stateval.mutation import Mutant, MutationConfig, as_system, run_mutation
from stateval.reports import inert_summary
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
"""


def write(folder: Path, cases: list[dict[str, Any]], **sections: Any) -> Path:
    (folder / "advicefill_mod.py").write_text(MODULE, encoding="utf-8")
    data = {
        "name": "advice",
        "mutator": {"type": "python", "callable": "advicefill_mod:fill", "path": "."},
        "cases": {"inline": cases},
        **sections,
    }
    path = folder / "suite.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def case(case_id: str, prompt: str, expected: dict[str, str]) -> dict[str, Any]:
    return {
        "id": case_id,
        "input": {"prompt": prompt, "message_id": case_id},
        "expected_post_state": expected,
    }


async def test_a_value_mutant_shows_what_it_wrote_not_the_expected_value(tmp_path: Path) -> None:
    # the tracker writes "20" where the suite expects "2": the mutant perturbs what it wrote
    path = write(tmp_path, [case("one", "a.y=20", {"a.y": "2"})])
    report = await run_mutation(load_suite(path), MutationConfig(operators="perturb_value"))
    (result,) = report.results
    assert result.wrote in (
        "case one: a.y '19' (baseline '20')",
        "case one: a.y '21' (baseline '20')",
    )
    assert result.description == f"{result.mutant.description}; e.g. {result.wrote}"
    assert "'2'" not in result.description  # the expected value is not shown as if written
    assert result.to_dict()["wrote"] == result.wrote


def swap_errors(target: Any) -> list[Mutant]:
    """Fixes case `wrong` and breaks case `right` (the errors cancel in every aggregate)."""
    system = as_system(target)

    def transform(
        pre: InterpretiveState, input: StructuredInput, post: InterpretiveState
    ) -> InterpretiveState:
        out = post.copy()
        value = {"wrong": "y", "right": "nope"}.get(input.message_id)
        if value is not None:
            out.set_value("f", ValueConfidence(value, 1.0, "stated", input.message_id))
        return out

    return [
        Mutant(
            "swap_errors",
            "fixes one case, breaks another",
            system.with_output(transform, "swap errors"),
            "state",
        )
    ]


async def test_errors_that_cancel_are_named_not_blamed_on_a_policy(tmp_path: Path) -> None:
    cases = [case("wrong", "f=x", {"f": "y"}), case("right", "f=z", {"f": "z"})]
    path = write(
        tmp_path,
        cases,
        policies={"*": {"normalize": ["case"]}},
        thresholds={"accuracy": 0.4},
    )
    report = await run_mutation(load_suite(path), MutationConfig(operators=[swap_errors]))
    (result,) = report.results
    assert result.status == "survived"
    assert result.suggestion is not None
    assert result.suggestion.startswith(
        "the errors cancel: f turns wrong in 1 case(s) (right) and right in 1 (wrong)"
    )
    assert "policies" not in result.suggestion


async def test_inert_mutants_are_summarised_with_the_fields_they_target(tmp_path: Path) -> None:
    # the suite expects a.z to change, but the tracker never writes it: drop_field a.z is inert
    cases = [case("one", "a.x=1", {"a.x": "1", "a.z": "9"})]
    path = write(tmp_path, cases, thresholds={"accuracy": 0.4})
    report = await run_mutation(load_suite(path), MutationConfig(operators="drop_field"))
    assert [r.status for r in report.results] == ["killed", "inert"]
    assert "a.z" in report.results[1].mutant.description
    assert report.unwritten == ("a.z",)
    assert report.to_dict()["unwritten_fields"] == ["a.z"]
    line = inert_summary(report)
    assert line == (
        "1 inert mutant(s): their output equals the baseline's, so no suite can kill them; the "
        "mutator never writes 1 field(s) the cases expect it to change: a.z. The mutation score "
        "counts them as not killed, the effective score leaves them out."
    )


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    cases = [case("one", "a.x=1; a.y=2", {"a.x": "1", "a.y": "2"})]
    path = write(tmp_path, cases, thresholds={"accuracy": 0.9})
    cli = typer.Typer()
    cli.command()(mutate)

    @cli.command()
    def version() -> None:  # a second command, so "mutate" is a sub-command as in stateval
        """Print nothing."""

    result = CliRunner().invoke(cli, ["mutate", str(path), "--operators", "drop_field"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith("advice: running the baseline")
    assert any(line.startswith("advice: baseline done; 2 mutants to evaluate") for line in lines)
    assert any(line.startswith("advice: mutants 1/2 decided") for line in lines)
    assert any(line.startswith("advice: mutants 2/2 decided, 2 killed") for line in lines)
