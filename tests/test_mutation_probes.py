"""Probes: each rates one dimension of a suite, before and after a mutation run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stateval.mutation import (
    MutationConfig,
    ProbeContext,
    ProbeResult,
    provenance_eval,
    run_mutation,
    run_probes,
)
from stateval.suite import Suite, load_suite

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

FILL = {
    "id": "fill",
    "input": {"prompt": "a.x=1; a.y=2"},
    "expected_post_state": {"a.x": "1", "a.y": "2"},
}
NOTHING = {
    "id": "nothing",
    "pre_state": {"a.x": "1"},
    "input": {"prompt": "hi"},
    "expected_post_state": {"a.x": "1"},
}
CORRECT = {
    "id": "correct",
    "pre_state": {"a.x": "1", "a.y": "2"},
    "input": {"prompt": "a.y=3"},
    "expected_post_state": {"a.x": "1", "a.y": "3"},
}


def suite(folder: Path, cases: list[dict[str, Any]], **sections: Any) -> Suite:
    (folder / "probefill_mod.py").write_text(MODULE, encoding="utf-8")
    data = {
        "mutator": {"type": "python", "callable": "probefill_mod:fill", "path": "."},
        "cases": {"inline": cases},
        **sections,
    }
    path = folder / "suite.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_suite(path)


def probe(context: ProbeContext, name: str) -> ProbeResult:
    (result,) = run_probes(context, [name])
    return result


def test_field_coverage_counts_fields_no_verdict_element_reads(tmp_path: Path) -> None:
    bare = ProbeContext.of(suite(tmp_path, [FILL]))
    result = probe(bare, "field_coverage")
    assert not result.ok
    assert result.metrics == {"n_fields": 2, "n_own": 0, "n_aggregate_only": 0, "n_uncovered": 2}
    assert result.detail is not None
    assert "a.x, a.y" in result.detail
    one = ProbeContext.of(suite(tmp_path, [FILL], thresholds={"fields": {"a.x": 1.0}}))
    assert probe(one, "field_coverage").metrics["n_uncovered"] == 1
    both = ProbeContext.of(
        suite(
            tmp_path,
            [FILL],
            thresholds={"accuracy": 0.9},
            checks={"a.y": [{"type": "json_parseable"}]},
        )
    )
    result = probe(both, "field_coverage")
    assert result.ok
    assert (result.metrics["n_own"], result.metrics["n_aggregate_only"]) == (1, 1)


def test_negative_and_delta_cases(tmp_path: Path) -> None:
    only_fill = ProbeContext.of(suite(tmp_path, [FILL]))
    assert not probe(only_fill, "negative_case").ok
    assert not probe(only_fill, "delta_cases").ok
    full = ProbeContext.of(suite(tmp_path, [FILL, NOTHING, CORRECT]))
    negative = probe(full, "negative_case")
    assert negative.ok
    assert negative.metrics == {"n_negative": 1}
    delta = probe(full, "delta_cases")
    assert delta.ok
    assert delta.metrics == {"n_delta": 1, "n_corrections": 1}


def test_delta_and_negative_cases_apply_the_suites_policies(tmp_path: Path) -> None:
    # "drama" in the pre-state and ["drama"] expected are the same under list_mode any_of, as
    # are "Paris" and "paris" under case normalisation: those fields are kept, not changed
    cases = [
        {
            "id": "genre-kept",
            "pre_state": {"movie.genre": "drama", "movie.city": "Paris"},
            "input": {"prompt": "movie.title=Heat"},
            "expected_post_state": {
                "movie.genre": ["drama"],
                "movie.city": "paris",
                "movie.title": "Heat",
            },
        },
        {
            "id": "nothing-new",
            "pre_state": {"movie.city": "Paris"},
            "input": {"prompt": "thanks"},
            "expected_post_state": {"movie.city": "PARIS"},
        },
    ]
    policies = {"movie.genre": {"list_mode": "any_of"}, "*": {"normalize": ["case"]}}
    with_policies = ProbeContext.of(suite(tmp_path, cases, policies=policies))
    delta = probe(with_policies, "delta_cases")
    assert delta.metrics == {"n_delta": 1, "n_corrections": 0}
    assert probe(with_policies, "negative_case").metrics == {"n_negative": 1}
    strict = ProbeContext.of(suite(tmp_path, cases))
    assert probe(strict, "delta_cases").metrics["n_delta"] == 0
    assert probe(strict, "negative_case").metrics == {"n_negative": 0}


async def test_threshold_calibration_flags_missing_loose_and_failing_thresholds(
    tmp_path: Path,
) -> None:
    cases = [FILL, NOTHING, CORRECT]
    none = await run_mutation(suite(tmp_path, cases), MutationConfig(operators="stale"))
    calibration = next(p for p in none.probes if p.name == "threshold_calibration")
    assert not calibration.ok
    assert "no thresholds" in calibration.summary
    loose = await run_mutation(
        suite(tmp_path, cases, thresholds={"accuracy": 0.5, "overall_match_rate": 0.98}),
        MutationConfig(operators="stale"),
    )
    calibration = next(p for p in loose.probes if p.name == "threshold_calibration")
    assert not calibration.ok
    assert calibration.metrics["n_loose"] == 1
    assert "accuracy 1.000 vs 0.500" in calibration.summary
    assert calibration.metrics["max_headroom"] == 0.5


async def test_redundant_checks_and_discrimination_read_the_mutant_results(
    tmp_path: Path,
) -> None:
    s = suite(
        tmp_path,
        [FILL, NOTHING, CORRECT],
        thresholds={"accuracy": 1.0, "overall_match_rate": 1.0, "fields": {"a.y": 1.0}},
    )
    report = await run_mutation(s, MutationConfig(operators="drop_field,strip_provenance"))
    redundant = next(p for p in report.probes if p.name == "redundant_checks")
    assert not redundant.ok
    assert "threshold:fields[a.y] (covered by threshold:accuracy)" in redundant.summary
    discrimination = next(p for p in report.probes if p.name == "discrimination")
    # strip_provenance changes the output where no comparison looks: equivalent, counted apart
    assert discrimination.ok
    assert discrimination.metrics["n_equivalent"] == 1
    assert discrimination.metrics["n_changed"] == discrimination.metrics["n_moved"]
    assert "1 equivalent under the suite's policies (not counted)" in discrimination.summary
    with_eval = await run_mutation(
        s, MutationConfig(operators="drop_field,strip_provenance", evals=[provenance_eval])
    )
    probe = next(p for p in with_eval.probes if p.name == "discrimination")
    assert probe.ok
    assert probe.metrics["n_equivalent"] == 0  # the eval sees the stripped provenance


async def test_discrimination_flags_a_change_the_suite_sees_but_no_score_moves(
    tmp_path: Path,
) -> None:
    # the mutator gets a.y wrong on this case; dropping its update turns a mismatched field
    # into a missing one: the suite's comparison sees it, but every score stays at 0
    wrong = {**FILL, "expected_post_state": {"a.x": "1", "a.y": "9"}}
    s = suite(tmp_path, [wrong, NOTHING], thresholds={"accuracy": 0.5})
    report = await run_mutation(s, MutationConfig(operators="drop_field"))
    dropped = next(r for r in report.results if "a.y" in r.mutant.description)
    assert dropped.status == "survived"
    assert not dropped.moved
    discrimination = next(p for p in report.probes if p.name == "discrimination")
    assert not discrimination.ok
    assert discrimination.detail is not None
    assert "drops the update to a.y" in discrimination.detail
    assert discrimination.metrics["n_moved"] == discrimination.metrics["n_changed"] - 1


def test_a_probe_that_raises_is_a_failed_result(tmp_path: Path) -> None:
    def broken(config: ProbeContext) -> ProbeResult:
        raise RuntimeError("no")

    (result,) = run_probes(ProbeContext.of(suite(tmp_path, [FILL])), [broken])
    assert result == ProbeResult("broken", False, "probe raised RuntimeError: no")
