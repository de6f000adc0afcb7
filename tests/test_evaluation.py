"""LLMEvaluator / EvaluationContext: the seed evaluation API (seed 000)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from stateval import (
    EvaluationContext,
    InterpretiveState,
    LLMEvaluator,
    LLMMutator,
    MutatorEvaluationResult,
    PythonMutator,
    StructuredInput,
    ValueConfidence,
)
from stateval.compare import FieldPolicies, MatchPolicy
from stateval.errors import EvaluationError
from stateval.testing import ScriptedClient

INPUT = StructuredInput(prompt="My name is Ada Lovelace", message_id="message-1")
NAME = {"path": "registrant.name", "value": "Ada Lovelace", "confidence": 0.95}


def _expected(**fields: tuple[object, float]) -> InterpretiveState:
    state = InterpretiveState()
    for path, (value, confidence) in fields.items():
        state.add_value(path.replace("__", "."), ValueConfidence(value, confidence))
    return state


def _context(
    reply: str | Exception, expected: InterpretiveState, **kwargs: object
) -> EvaluationContext:
    return EvaluationContext(
        mutator=LLMMutator(ScriptedClient([reply])),
        pre_state=InterpretiveState(),
        expected_post_state=expected,
        mutation_input=INPUT,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_seed_scenario_matches() -> None:
    expected = _expected(registrant__name=("Ada Lovelace", 0.95))
    result = await LLMEvaluator().evaluate(_context(json.dumps([NAME]), expected))
    assert result.ok
    assert result.comparison.overall_match
    assert result.overall_match
    assert result.accuracy_score == 1.0
    assert result.actual_post_state is not None
    best = result.actual_post_state.best("registrant.name")
    assert best is not None
    assert best.message_id == "message-1"


async def test_mismatch_missing_and_extra_are_counted() -> None:
    expected = _expected(
        registrant__name=("Ada Lovelace", 0.95),
        registrant__email=("ada@example.org", 0.9),
        registrant__city=("London", 0.8),
    )
    reply = json.dumps(
        [
            NAME,
            {"path": "registrant.email", "value": "ada@example.com", "confidence": 0.9},
            {"path": "registrant.phone", "value": "555", "confidence": 0.5},
        ]
    )
    result = await LLMEvaluator().evaluate(_context(reply, expected))
    assert result.ok
    assert result.comparison.counts == {"matching": 1, "mismatched": 1, "missing": 1, "extra": 1}
    assert result.comparison.mismatched == ("registrant.email",)
    assert result.comparison.missing == ("registrant.city",)
    assert result.comparison.extra == ("registrant.phone",)
    assert result.accuracy_score == pytest.approx(1 / 3)
    assert not result.overall_match


async def test_a_confidence_difference_is_a_mismatch_by_default_and_policies_can_relax_it() -> None:
    expected = _expected(registrant__name=("Ada Lovelace", 0.9))
    reply = json.dumps([NAME])
    strict = await LLMEvaluator().evaluate(_context(reply, expected))
    assert strict.comparison.mismatched == ("registrant.name",)
    relaxed = LLMEvaluator(MatchPolicy(confidence="ignore"))
    assert (await relaxed.evaluate(_context(reply, expected))).overall_match
    per_case = _context(reply, expected, policies=FieldPolicies({"registrant.*": MatchPolicy()}))
    assert not (await relaxed.evaluate(per_case)).overall_match


@pytest.mark.parametrize(
    ("reply", "error_type", "message"),
    [
        ("I cannot help with that.", "MutatorOutputError", "no JSON array of updates found"),
        (RuntimeError("connection reset\nby peer"), "RuntimeError", "connection reset by peer"),
    ],
)
async def test_a_failing_mutator_is_data_not_a_crash(
    reply: str | Exception, error_type: str, message: str
) -> None:
    expected = _expected(registrant__name=("Ada Lovelace", 0.95), registrant__age=(36, 1.0))
    result = await LLMEvaluator().evaluate(_context(reply, expected))
    assert not result.ok
    assert result.error_type == error_type
    assert result.error is not None
    assert message in result.error
    assert "\n" not in result.error
    assert result.actual_post_state is None
    assert result.accuracy_score == 0.0
    assert not result.overall_match
    assert result.comparison.missing == ("registrant.name", "registrant.age")
    assert result.time_used > 0.0  # the failed call was still timed


async def test_an_output_error_keeps_the_raw_reply() -> None:
    result = await LLMEvaluator().evaluate(_context("[{oops", _expected(a=(1, 1.0))))
    assert result.raw_output == "[{oops"
    assert result.to_dict()["raw_output"] == "[{oops"


async def test_a_failed_run_does_not_match_even_with_nothing_expected() -> None:
    result = await LLMEvaluator().evaluate(_context("nope", InterpretiveState()))
    assert result.comparison.overall_match
    assert not result.overall_match
    assert result.accuracy_score == 0.0


async def test_a_mutator_returning_the_wrong_type_is_data() -> None:
    class Lazy:
        async def mutate(self, state: InterpretiveState, input: StructuredInput) -> object:
            return state.to_flat()

    context = EvaluationContext(Lazy(), InterpretiveState(), _expected(a=(1, 1.0)), INPUT)  # type: ignore[arg-type]
    result = await LLMEvaluator().evaluate(context)
    assert result.error_type == "MutatorError"
    assert result.error == "mutator returned dict, not an InterpretiveState"


async def test_something_that_is_not_a_mutator_is_data() -> None:
    context = EvaluationContext(42, InterpretiveState(), _expected(a=(1, 1.0)), INPUT)  # type: ignore[arg-type]
    result = await LLMEvaluator().evaluate(context)
    assert result.error_type == "MutatorError"
    assert result.error is not None
    assert "not a mutator" in result.error


async def test_a_plain_function_is_accepted_as_mutator() -> None:
    def fill(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        return InterpretiveState.from_flat({"name": input.prompt})

    context = EvaluationContext(
        fill, InterpretiveState(), InterpretiveState.from_flat({"name": INPUT.prompt}), INPUT
    )
    assert (await LLMEvaluator().evaluate(context)).overall_match


async def test_a_mutator_that_changes_its_argument_leaves_the_context_pre_state_intact() -> None:
    class InPlace:
        async def mutate(
            self, state: InterpretiveState, input: StructuredInput
        ) -> InterpretiveState:
            state.add_value("name", ValueConfidence("Ada", 1.0))
            return state

    pre = InterpretiveState.from_flat({"city": "London"})
    expected = InterpretiveState.from_flat({"city": "London", "name": "Ada"})
    result = await LLMEvaluator().evaluate(EvaluationContext(InPlace(), pre, expected, INPUT))
    assert result.overall_match
    assert pre == InterpretiveState.from_flat({"city": "London"})


@pytest.mark.parametrize("wrap", [PythonMutator, lambda fn: fn], ids=["PythonMutator", "callable"])
async def test_a_python_callable_changing_its_argument_or_the_original_is_told_apart(
    wrap: Callable[[Any], Any],
) -> None:
    # the evaluator hands a PythonMutator the context's own pre-state: it copies it itself
    pre = InterpretiveState.from_flat({"city": "London"})

    def in_place(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        state.set_value("city", ValueConfidence("Paris", 1.0))
        return state

    def sneaky(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        pre.set_value("city", ValueConfidence("Paris", 1.0))
        return state

    expected = InterpretiveState.from_flat({"city": "Paris"})
    result = await LLMEvaluator().evaluate(EvaluationContext(wrap(in_place), pre, expected, INPUT))
    assert result.overall_match
    assert pre == InterpretiveState.from_flat({"city": "London"})
    result = await LLMEvaluator().evaluate(EvaluationContext(wrap(sneaky), pre, expected, INPUT))
    assert result.error is not None
    assert "changed the pre_state" in result.error


async def test_a_mutator_that_reaches_the_original_pre_state_is_reported() -> None:
    pre = InterpretiveState.from_flat({"city": "London"})

    class Sneaky:
        async def mutate(
            self, state: InterpretiveState, input: StructuredInput
        ) -> InterpretiveState:
            pre.add_value("city", ValueConfidence("Paris", 1.0))
            return state

    expected = InterpretiveState.from_flat({"city": "London"})
    result = await LLMEvaluator().evaluate(EvaluationContext(Sneaky(), pre, expected, INPUT))
    assert not result.ok
    assert result.error is not None
    assert "changed the pre_state" in result.error
    assert result.comparison.overall_match
    assert not result.overall_match


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    readings = [100.0, 102.5]
    calls: list[float] = []

    def perf_counter() -> float:
        value = readings[len(calls)] if len(calls) < len(readings) else readings[-1]
        calls.append(value)
        return value

    monkeypatch.setattr(time, "perf_counter", perf_counter)
    return calls


async def test_time_used_is_measured_with_the_monotonic_perf_counter(
    fake_clock: list[float],
) -> None:
    result = await LLMEvaluator().evaluate(_context("[]", InterpretiveState()))
    assert fake_clock == [100.0, 102.5]
    assert result.time_used == 2.5


async def test_time_used_is_positive_for_a_real_run() -> None:
    result = await LLMEvaluator().evaluate(_context(json.dumps([NAME]), InterpretiveState()))
    assert result.time_used > 0.0


def test_evaluate_sync_runs_without_an_event_loop() -> None:
    expected = _expected(registrant__name=("Ada Lovelace", 0.95))
    result = LLMEvaluator().evaluate_sync(_context(json.dumps([NAME]), expected))
    assert isinstance(result, MutatorEvaluationResult)
    assert result.overall_match


async def test_evaluate_sync_inside_a_running_loop_says_to_await() -> None:
    context = _context("[]", InterpretiveState())
    with pytest.raises(EvaluationError, match=r"await evaluate\(\) instead"):
        LLMEvaluator().evaluate_sync(context)


async def test_to_dict_is_json() -> None:
    expected = _expected(registrant__name=("Ada Lovelace", 0.95))
    result = await LLMEvaluator().evaluate(_context(json.dumps([NAME]), expected))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["accuracy_score"] == 1.0
    assert data["ok"] is True
    assert data["comparison"]["counts"]["matching"] == 1
    assert data["actual_post_state"]["fields"]["registrant.name"][0]["message_id"] == "message-1"
