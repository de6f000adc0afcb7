"""Mutation testing end to end: a small form-filling suite, evals, LLM prompt mutants, budgets."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stateval import InterpretiveState, LLMMutator
from stateval.errors import MutationError, PluginError
from stateval.mutation import (
    EvalOutcome,
    MutationConfig,
    MutationReport,
    as_system,
    log_mutation,
    provenance_eval,
    run_mutation,
)
from stateval.run import PhoenixTarget
from stateval.suite import load_suite
from stateval.testing import ScriptedClient

MODULE = '''
from stateval import ValueConfidence


def fill(state, input):
    """Set every ``path=value`` pair of the message."""
    for part in input.prompt.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            vc = ValueConfidence(value.strip(), 1.0, "stated", input.message_id)
            state.set_value(key.strip(), vc)
    return state
'''

CASES: list[dict[str, Any]] = [
    {
        "id": "c1",
        "input": {"prompt": "person.name=Ada; person.city=Paris"},
        "expected_post_state": {"person.name": "Ada", "person.city": "Paris"},
    },
    {
        "id": "c2",
        "pre_state": {"person.name": "Ada"},
        "input": {"prompt": "person.city=Rome"},
        "expected_post_state": {"person.name": "Ada", "person.city": "Rome"},
    },
    {
        "id": "c3",
        "pre_state": {"person.name": "Ada", "person.city": "Rome"},
        "input": {"prompt": "hello there"},
        "expected_post_state": {"person.name": "Ada", "person.city": "Rome"},
    },
    {
        "id": "c4",
        "pre_state": {"person.name": "Ada", "person.city": "Paris"},
        "input": {"prompt": "person.age=36; person.city=Rome"},
        "expected_post_state": {"person.name": "Ada", "person.city": "Rome", "person.age": "36"},
    },
    {
        "id": "c5",
        "pre_state": {"person.name": "Ada"},
        "input": {"prompt": "write to ada@example.org"},
        "expected_post_state": {"person.name": "Ada", "person.email": "ada@example.org"},
    },
]


def write_suite(folder: Path, **sections: Any) -> Path:
    """A suite over `CASES` with the form-filling python mutator, plus ``sections``."""
    (folder / "formfill_mod.py").write_text(MODULE, encoding="utf-8")
    data = {
        "name": "form",
        "mutator": {"type": "python", "callable": "formfill_mod:fill", "path": "."},
        "cases": {"inline": CASES},
        **sections,
    }
    path = folder / "suite.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def by_description(report: MutationReport) -> dict[str, str]:
    return {r.mutant.description: r.status for r in report.results}


def status_of(report: MutationReport, operator: str, path: str) -> str:
    found = [
        r.status
        for r in report.results
        if r.mutant.operator == operator
        and re.search(rf"\b{re.escape(path)}\b", r.mutant.description)
    ]
    assert len(found) == 1, (operator, path, by_description(report))
    return found[0]


async def test_checking_only_some_fields_leaves_survivors_until_thresholds_cover_them(
    tmp_path: Path,
) -> None:
    partial = load_suite(write_suite(tmp_path, thresholds={"fields": {"person.name": 1.0}}))
    report = await run_mutation(partial, MutationConfig(operators=["drop_field"]))
    assert report.baseline.passed
    assert status_of(report, "drop_field", "person.name") == "killed"
    assert status_of(report, "drop_field", "person.city") == "survived"
    assert status_of(report, "drop_field", "person.age") == "survived"
    assert status_of(report, "drop_field", "person.email") == "inert"  # never set by the mutator
    city = next(r for r in report.survivors if "person.city" in r.mutant.description)
    assert city.severity == "high"
    assert city.suggestion is not None
    assert city.suggestion.startswith("add thresholds.fields['person.city']: 1.0")
    assert (report.score.killed, report.score.evaluated) == (1, 4)
    assert (report.effective_score.killed, report.effective_score.evaluated) == (1, 3)

    full = load_suite(
        write_suite(
            tmp_path,
            thresholds={"fields": {"person.name": 1.0, "person.city": 1.0, "person.age": 1.0}},
        )
    )
    report = await run_mutation(full, MutationConfig(operators=["drop_field"]))
    assert status_of(report, "drop_field", "person.city") == "killed"
    assert status_of(report, "drop_field", "person.age") == "killed"
    assert report.effective_score.value == 1.0
    assert report.score.value == 0.75
    killed = next(r for r in report.results if "person.age" in r.mutant.description)
    assert "threshold:fields[person.age]" in killed.killed_by
    assert killed.changed_cases == ("c4",)


async def test_case_mutants_are_equivalent_under_a_case_normalising_policy_until_overridden(
    tmp_path: Path,
) -> None:
    loose = {"*": {"normalize": ["case"]}}
    suite = load_suite(
        write_suite(tmp_path, policies=loose, thresholds={"overall_match_rate": 0.8})
    )
    report = await run_mutation(suite, MutationConfig(operators="change_case"))
    assert status_of(report, "change_case", "person.name") == "equivalent"
    assert status_of(report, "change_case", "person.city") == "equivalent"
    assert report.survivors == ()
    equivalent = next(r for r in report.equivalents if "person.name" in r.mutant.description)
    assert equivalent.changed_cases  # the output did change
    assert equivalent.severity is None
    assert equivalent.suggestion is not None
    assert "policies['*'] normalises letter case" in equivalent.suggestion
    # counted in the mutation score, left out of the effective score (as inert ones are)
    n = len(report.results)
    assert (report.score.killed, report.score.evaluated) == (0, n)
    assert report.effective_score.evaluated == 0
    assert report.to_dict()["counts"]["equivalent"] == len(report.equivalents) >= 2
    strict = {"person.name": {}, **loose}
    suite = load_suite(
        write_suite(tmp_path, policies=strict, thresholds={"overall_match_rate": 0.8})
    )
    report = await run_mutation(suite, MutationConfig(operators="change_case"))
    assert status_of(report, "change_case", "person.name") == "killed"
    assert status_of(report, "change_case", "person.city") == "equivalent"
    assert (report.effective_score.killed, report.effective_score.evaluated) == (1, 1)


async def test_a_changed_field_status_that_moves_no_threshold_is_a_survivor_not_equivalent(
    tmp_path: Path,
) -> None:
    # without a policy, a case change makes person.name mismatched: the suite sees it (its
    # field score drops) although no threshold fails, so the mutant survives
    suite = load_suite(write_suite(tmp_path, thresholds={"overall_match_rate": 0.1}))
    report = await run_mutation(suite, MutationConfig(operators="change_case"))
    assert status_of(report, "change_case", "person.name") == "survived"
    survivor = next(r for r in report.survivors if "person.name" in r.mutant.description)
    assert survivor.moved
    assert survivor.severity is not None


async def test_an_eval_whose_outcome_changes_makes_an_otherwise_equivalent_mutant_a_survivor(
    tmp_path: Path,
) -> None:
    loose = {"*": {"normalize": ["case"]}}
    suite = load_suite(write_suite(tmp_path, policies=loose))

    def capitalised(output: InterpretiveState, case: Any) -> EvalOutcome:
        best = output.best("person.city")
        ok = best is None or str(best.value)[:1].isupper()
        return EvalOutcome(ok, "capitalised")

    def scored(output: InterpretiveState, case: Any) -> EvalOutcome:
        # passes either way: the outcome (pass/fail) is what counts, not the score
        best = output.best("person.city")
        return EvalOutcome(True, "scored", score=0.9 if best and best.value.islower() else 1.0)

    killed = await run_mutation(suite, MutationConfig(operators="change_case", evals=[capitalised]))
    assert status_of(killed, "change_case", "person.city") == "killed"
    same = await run_mutation(suite, MutationConfig(operators="change_case", evals=[scored]))
    assert status_of(same, "change_case", "person.city") == "equivalent"


async def test_hallucinated_fields_need_overall_match_rate_since_accuracy_ignores_extras(
    tmp_path: Path,
) -> None:
    suite = load_suite(write_suite(tmp_path, thresholds={"accuracy": 0.8}))
    report = await run_mutation(suite, MutationConfig(operators="hallucinate_field"))
    age = next(r for r in report.results if "person.age" in r.mutant.description)
    assert age.status == "survived"
    assert age.suggestion is not None
    assert age.suggestion.startswith("add thresholds.overall_match_rate: 0.8")
    assert "accuracy does not count" in age.suggestion
    suite = load_suite(
        write_suite(tmp_path, thresholds={"accuracy": 0.8, "overall_match_rate": 0.8})
    )
    report = await run_mutation(suite, MutationConfig(operators="hallucinate_field"))
    assert next(r for r in report.results if "person.age" in r.mutant.description).killed


async def test_only_an_eval_that_reads_message_ids_kills_stripped_provenance(
    tmp_path: Path,
) -> None:
    suite = load_suite(write_suite(tmp_path, thresholds={"overall_match_rate": 0.8}))
    report = await run_mutation(suite, MutationConfig(operators="strip_provenance"))
    (result,) = report.results
    assert result.status == "equivalent"  # no comparison reads provenance
    assert result.suggestion is not None
    assert "--eval provenance" in result.suggestion
    report = await run_mutation(
        suite, MutationConfig(operators="strip_provenance", evals=[provenance_eval])
    )
    (result,) = report.results
    assert result.killed
    assert result.killed_by == ("eval:provenance",)


async def test_checks_kill_when_they_fail_on_a_case_where_the_baseline_passes(
    tmp_path: Path,
) -> None:
    checks = {"person.age": [{"type": "regex", "pattern": "^[0-9]+$"}]}
    suite = load_suite(write_suite(tmp_path, checks=checks))
    report = await run_mutation(suite, MutationConfig(operators="perturb_value,rename_path"))
    assert status_of(report, "rename_path", "person.age") == "killed"
    renamed = next(
        r
        for r in report.results
        if r.mutant.operator == "rename_path" and "age" in r.mutant.description
    )
    assert renamed.killed_by == ("check:person.age",)
    # an integer off by one is still digits: the regex cannot see it
    assert status_of(report, "perturb_value", "person.age") == "survived"


async def test_llm_evals_run_after_cheap_ones_and_count_against_max_calls(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path))
    judged: list[str] = []

    def has_name(output: InterpretiveState, case: Any) -> bool:
        return "person.name" in output

    async def judge(output: InterpretiveState, case: Any) -> EvalOutcome:
        judged.append(case.id)
        right = output.to_flat() == case.expected_post_state.to_flat()
        return EvalOutcome(right, "judge", 1.0 if right else 0.0, 0.5)

    judge.is_llm = True  # type: ignore[attr-defined]
    config = MutationConfig(operators="drop_field,stale", evals=[has_name, judge])
    report = await run_mutation(suite, config)
    name = next(r for r in report.results if "person.name" in r.mutant.description)
    assert name.killed_by == ("eval:has_name",)
    assert name.calls == 0  # killed by the cheap eval: the judge never ran on it
    city = next(r for r in report.results if "person.city" in r.mutant.description)
    assert city.killed_by == ("eval:judge",)
    assert city.calls == len(city.changed_cases)
    assert report.calls == len(judged) == 5 + sum(r.calls for r in report.results)

    budget = MutationConfig(operators="drop_field", evals=[judge], max_calls=6)
    report = await run_mutation(suite, budget)
    assert report.calls == 6
    assert [r.complete for r in report.results if r.status != "inert"].count(False) >= 1
    with pytest.raises(MutationError, match="cannot cover the baseline"):
        await run_mutation(suite, MutationConfig(evals=[judge], max_calls=4))


def _responder(prompt: str) -> str:
    """A scripted model that follows the prompt's 'Never invent fields.' instruction."""
    message = re.search(r"Input message \(id: [^)]*\):\n(.*)\n", prompt)
    assert message is not None
    updates = []
    for part in message.group(1).split(";"):
        key, sep, value = part.partition("=")
        if sep:
            updates.append({"path": key.strip(), "value": value.strip(), "confidence": 1.0})
    if "Never invent fields." not in prompt:
        updates.append({"path": "person.nickname", "value": "Ace", "confidence": 1.0})
    return json.dumps(updates)


async def test_prompt_mutants_call_the_llm_and_stop_at_max_calls(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, thresholds={"overall_match_rate": 0.6}))
    client = ScriptedClient(_responder)
    mutator = LLMMutator(client, "Read key=value pairs.\nNever invent fields.")
    config = MutationConfig(operators="flip_negation,drop_instruction")
    report = await run_mutation(suite, config, mutator=mutator)
    statuses = by_description(report)
    assert statuses["drops prompt line 3: 'Never invent fields.'"] == "killed"
    flipped = [r for r in report.results if r.mutant.operator == "flip_negation"]
    assert any(
        "'Never invent fields.' -> 'Always invent fields.'" in r.mutant.description for r in flipped
    )
    assert all(r.killed for r in flipped if "invent" in r.mutant.description)
    assert statuses["drops prompt line 2: 'Read key=value pairs.'"] == "inert"
    assert report.calls == client.calls == 5 * (1 + len(report.results))

    client = ScriptedClient(_responder)
    mutator = LLMMutator(client, "Read key=value pairs.\nNever invent fields.")
    config = MutationConfig(operators="drop_instruction", max_calls=5 + 2 * 5)
    report = await run_mutation(suite, config, mutator=mutator)
    assert report.calls == client.calls == 15
    assert [r.status for r in report.results][2:] == ["skipped"] * (len(report.results) - 2)
    assert report.results[2].error == "needs 5 LLM calls; --max-calls leaves 0"


async def test_placeholder_lines_of_the_prompt_are_never_dropped() -> None:
    mutator = LLMMutator(ScriptedClient(["[]"]), "Be brief.")
    system = as_system(mutator)
    assert system.prompt is not None
    assert "Be brief." in system.prompt
    from stateval.mutation import generate_mutants

    mutants = generate_mutants(system, ["drop_instruction", "truncate"])
    assert mutants
    for mutant in mutants:
        text = mutant.system.prompt
        assert text is not None
        for placeholder in ("$state", "$prompt", "$message_id", "$metadata"):
            assert placeholder in text
        assert isinstance(mutant.system.mutator, LLMMutator)


async def test_the_same_seed_gives_the_same_report_and_another_seed_another_sample(
    tmp_path: Path,
) -> None:
    suite = load_suite(write_suite(tmp_path, thresholds={"overall_match_rate": 0.8}))
    first = await run_mutation(suite, MutationConfig(seed=7, max_mutants=6))
    again = await run_mutation(suite, MutationConfig(seed=7, max_mutants=6))
    assert first.to_dict() == again.to_dict()
    other = await run_mutation(suite, MutationConfig(seed=8, max_mutants=6))
    assert [r["description"] for r in other.to_dict()["mutants"]] != [
        r["description"] for r in first.to_dict()["mutants"]
    ]


async def test_unknown_operators_and_duplicate_eval_names_are_errors(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path))
    with pytest.raises(PluginError, match="unknown operator 'nope'"):
        await run_mutation(suite, MutationConfig(operators="drop_field,nope"))

    def twin(output: Any, case: Any) -> bool:
        return True

    with pytest.raises(PluginError, match="share the name"):
        await run_mutation(suite, MutationConfig(evals=[twin, twin]))


async def test_a_failing_eval_or_mutator_is_data_not_a_crash(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, thresholds={"max_error_rate": 0.0}))

    def broken(output: Any, case: Any) -> bool:
        raise ValueError("boom")

    report = await run_mutation(suite, MutationConfig(operators="stale", evals=[broken]))
    assert any("eval broken fails on case c1" in f for f in report.baseline_failures)

    def explode(state: InterpretiveState, input: Any) -> InterpretiveState:
        raise RuntimeError("mutator down")

    report = await run_mutation(suite, MutationConfig(operators="stale"), mutator=explode)
    assert report.baseline.n_errors == 5
    assert [r.status for r in report.results] == ["inert"]


async def test_a_mutant_keeps_counts_and_figures_not_the_scores_of_its_cases(
    tmp_path: Path,
) -> None:
    many = [
        {
            "id": f"n{i:02d}",
            "input": {"prompt": f"person.name=P{i}"},
            "expected_post_state": {"person.name": f"P{i}"},
        }
        for i in range(30)
    ]
    (tmp_path / "formfill_mod.py").write_text(MODULE, encoding="utf-8")
    data = {
        "name": "many",
        "mutator": {"type": "python", "callable": "formfill_mod:fill", "path": "."},
        "cases": {"inline": many},
    }
    (tmp_path / "suite.json").write_text(json.dumps(data), encoding="utf-8")
    suite = load_suite(tmp_path / "suite.json")
    counted = await run_mutation(suite, MutationConfig(operators=["drop_field"]))
    (mutant,) = counted.results
    assert mutant.n_changed == 30
    assert mutant.changed_cases == tuple(f"n{i:02d}" for i in range(20))  # the first 20
    assert mutant.to_dict()["n_changed_cases"] == 30
    assert mutant.summary is not None
    assert mutant.summary.cases == ()
    assert mutant.summary.calibration is None
    assert mutant.summary.accuracy == 0.0  # its figures stay
    with pytest.raises(MutationError, match="keep_cases"):
        await log_mutation(suite, counted, PhoenixTarget("http://127.0.0.1:9"))

    kept = await run_mutation(suite, MutationConfig(operators=["drop_field"], keep_cases=True))
    (whole,) = kept.results
    assert whole.status == mutant.status
    assert whole.n_changed == 30
    assert len(whole.changed_cases) == 30
    assert whole.summary is not None
    assert [s.case_id for s in whole.summary.cases] == list(whole.changed_cases)
