"""The mutation score: Wilson 95% intervals against hand-computed values, severity, thresholds."""

from __future__ import annotations

import math

import pytest

from stateval.mutation import Mutant, MutationScore, as_system, severity, wilson_interval
from stateval.mutation._suggest import _limit

Z2 = 1.959963984540054**2


def test_wilson_interval_matches_hand_computed_values() -> None:
    # 8 of 10: p = 0.8, centre = (0.8 + z²/20) / (1 + z²/10),
    # half = z * sqrt(0.8 * 0.2 / 10 + z²/400) / (1 + z²/10)
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.490162, abs=1e-6)
    assert high == pytest.approx(0.943318, abs=1e-6)
    # all or nothing: the closed forms n / (n + z²) and z² / (n + z²)
    assert wilson_interval(10, 10) == (pytest.approx(10 / (10 + Z2)), 1.0)
    assert wilson_interval(0, 10) == (0.0, pytest.approx(Z2 / (10 + Z2)))
    assert wilson_interval(0, 0) == (0.0, 1.0)
    # 1 of 2: centre is exactly 1/2, half = z * sqrt(1/8 + z²/16) / (1 + z²/2)
    half = math.sqrt(Z2) * math.sqrt(1 / 8 + Z2 / 16) / (1 + Z2 / 2)
    assert wilson_interval(1, 2) == (pytest.approx(0.5 - half), pytest.approx(0.5 + half))
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(3, 2)


def test_mutation_score_describes_itself() -> None:
    score = MutationScore.of(8, 10)
    assert score.value == 0.8
    assert score.describe() == "80.0% (8/10, 95% CI 49.0%-94.3%)"
    assert score.to_dict() == {
        "killed": 8,
        "evaluated": 10,
        "value": 0.8,
        "ci95": [score.low, score.high],
    }
    assert MutationScore.of(0, 0).describe() == "n/a (no mutant evaluated)"


def test_severity_starts_from_the_operator_and_rises_with_impact() -> None:
    system = as_system("x")
    confidence = Mutant("perturb_confidence", "d", system, "state")
    assert severity(confidence, changed_cases=1, n_cases=100, rated="low") == "low"
    assert severity(confidence, changed_cases=20, n_cases=100, rated="low") == "medium"
    assert severity(Mutant("drop_field", "d", system, "state"), 50, 100, rated="high") == "high"
    assert severity(Mutant("custom", "d", system, "tools"), 1, 100) == "high"
    assert severity(Mutant("custom", "d", system, "prompt"), 1, 100) == "medium"


def test_suggested_thresholds_let_the_baseline_pass_and_fail_the_mutant() -> None:
    assert _limit(0.774, 0.755) == 0.77
    assert _limit(1.0, 0.737) == 1.0
    assert _limit(0.9861, 0.9858) == 0.986
    for base, mutant in ((0.774, 0.755), (0.9861, 0.9858), (0.51, 0.5099999)):
        limit = _limit(base, mutant)
        assert mutant < limit <= base


def test_every_built_in_operator_carries_its_severity() -> None:
    from stateval.mutation import OPERATORS, PROMPT_OPERATORS, STATE_OPERATORS, RatedOperator

    for name, op in {**STATE_OPERATORS, **PROMPT_OPERATORS}.items():
        assert isinstance(op, RatedOperator), name
        assert op.severity in ("low", "medium", "high"), name
        assert OPERATORS[name] is op


def test_a_registered_operator_carries_its_severity() -> None:
    from stateval.mutation import Mutant, RatedOperator, as_system, register_operator, severity
    from stateval.mutation._plugins import OPERATORS, operator_severity

    def shout(target: object) -> list[Mutant]:
        system = as_system(target)
        return [Mutant("shout_test", "UPPERCASED", system.with_prompt(system.prompt.upper()))]

    register_operator("shout_test", RatedOperator(shout, "high"))
    register_operator("shout_bare", shout)
    try:
        (mutant,) = OPERATORS["shout_test"]("Answer.")
        assert operator_severity("shout_test") == "high"
        assert operator_severity("shout_bare") is None
    finally:
        del OPERATORS["shout_test"], OPERATORS["shout_bare"]
    assert severity(mutant, 0, 10, rated="high") == "high"
    assert severity(mutant, 0, 10) == "medium"  # a bare operator's survivors: by their target
