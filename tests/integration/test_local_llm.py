"""The real LLM path through a real OpenAI-compatible HTTP endpoint (llama.cpp + SmolLM2-135M)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any, Protocol

import pytest

from stateval.errors import LLMUnavailableError
from stateval.evaluation import EvaluationContext, LLMEvaluator
from stateval.local_model import LocalModelServer
from stateval.mutators import UPDATES_JSON_SCHEMA, LLMMutator, StructuredInput
from stateval.mutators._openai import LLMCall, OpenAICompatibleClient
from stateval.phoenix import JUDGE_CHOICES, FieldJudge
from stateval.phoenix._llm import OpenAICompatibleLLM
from stateval.run import start_journal
from stateval.state import InterpretiveState, validate_path
from stateval.suite import load_suite
from stateval.upload import run_suite

pytestmark = pytest.mark.llm

REGISTRATION = Path(__file__).parents[2] / "examples" / "registration" / "suite.yaml"
JUDGE_CHECK = REGISTRATION.with_name("judge.yaml")


class Endpoint(Protocol):
    """What the ``local_llm`` fixture (tests/integration/conftest.py) provides."""

    @property
    def url(self) -> str: ...

    @property
    def model(self) -> str: ...


MESSAGE = StructuredInput(
    prompt="Hi, I'm Ada Lovelace. Please register me; my email is ada@analytical.org.",
    message_id="m-1",
)


def constrained_client(llm: Endpoint, **kwargs: Any) -> OpenAICompatibleClient:
    options: dict[str, Any] = {
        "base_url": llm.url,
        "api_key_env": None,
        "response_schema": UPDATES_JSON_SCHEMA,
        "max_tokens": 256,
        "timeout": 120.0,
        "temperature": 0.0,
    }
    options.update(kwargs)
    return OpenAICompatibleClient(llm.model, **options)


async def test_constrained_output_is_a_valid_update_list(local_llm: Endpoint) -> None:
    async with constrained_client(local_llm) as client:
        state = await LLMMutator(client).mutate(InterpretiveState(), MESSAGE)
        call = client.last_call
    assert call is not None
    # llama.cpp rejects OpenAI's json_schema form; the client switched dialects and remembered.
    assert call.response_format == "json_object"
    assert client.schema_dialect == "json_object"
    assert (call.completion_tokens or 0) > 0
    assert (call.prompt_tokens or 0) > 0
    assert state.paths(), "the model applied no update at all"
    for path in state.paths():
        validate_path(path)
        best = state.best(path)
        assert best is not None
        assert 0.0 <= best.confidence <= 1.0
        assert best.message_id == "m-1"


async def test_truncated_output_is_a_recorded_per_case_error(local_llm: Endpoint) -> None:
    calls: list[LLMCall] = []
    client = constrained_client(local_llm, max_tokens=3, on_call=calls.append)
    async with client:
        result = await LLMEvaluator().evaluate(
            EvaluationContext(
                mutator=LLMMutator(client),
                pre_state=InterpretiveState(),
                expected_post_state=InterpretiveState.from_flat({"registrant.name": "Ada"}),
                mutation_input=MESSAGE,
            )
        )
    assert calls[0].finish_reason == "length"
    assert result.error is not None
    assert result.error_type == "MutatorOutputError"
    assert result.raw_output == calls[0].output
    assert result.actual_post_state is None
    assert result.accuracy_score == 0.0


def test_the_judge_returns_one_of_its_labels(local_llm: Endpoint) -> None:
    # Through a real phoenix ClassificationEvaluator, whose LLM calls go through the client:
    # llama.cpp refuses OpenAI's json_schema form (HTTP 500), the client switches dialects.
    client = OpenAICompatibleClient(
        local_llm.model, base_url=local_llm.url, api_key_env=None, max_tokens=96, timeout=120.0
    )
    judge = FieldJudge(OpenAICompatibleLLM(client))
    verdict = judge.judge("preferences.diet", "Same dietary requirement.", "vegetarian", "veggie")
    assert verdict.label in JUDGE_CHOICES, verdict.explanation
    assert client.schema_dialect == "json_object"


async def test_a_server_stopped_mid_run_is_retried_then_recorded(
    disposable_llm_server: LocalModelServer,
) -> None:
    server = disposable_llm_server

    def stop_after_first(call: LLMCall) -> None:
        os.kill(server.pid, signal.SIGKILL)  # the server dies once the first case has its answer

    client = constrained_client(
        server, max_retries=2, backoff_base=0.05, max_concurrency=1, on_call=stop_after_first
    )
    mutator = LLMMutator(client)
    expected = InterpretiveState.from_flat({"registrant.name": "Ada Lovelace"})
    evaluator = LLMEvaluator()
    async with client:
        results = await asyncio.gather(
            *(
                evaluator.evaluate(
                    EvaluationContext(mutator, InterpretiveState(), expected, MESSAGE)
                )
                for _ in range(3)
            )
        )
    server.process.wait()
    assert [r.error is None for r in results].count(True) == 1
    failed = [r for r in results if r.error is not None]
    assert len(failed) == 2
    for result in failed:
        assert result.error_type == "LLMUnavailableError"
        assert result.error is not None
        assert "gave up after 3 attempt(s)" in result.error
        assert server.url in result.error


async def test_a_timeout_against_the_real_server_is_a_clear_error(
    disposable_llm_server: LocalModelServer,
) -> None:
    server = disposable_llm_server
    async with constrained_client(
        server, timeout=0.001, max_retries=1, backoff_base=0.01
    ) as client:
        with pytest.raises(LLMUnavailableError, match=r"timed out after 0\.001s; gave up after 2"):
            await client.generate("Write a long story about a registration desk.")


async def test_the_registration_demo_suite_runs_against_the_server(
    local_llm: Endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The suite file as users run it (its base_url comes from STATEVAL_LOCAL_LLM_URL), three
    # cases to keep CI short; `stateval run examples/registration/suite.yaml` runs all twelve.
    monkeypatch.setenv("STATEVAL_LOCAL_LLM_URL", local_llm.url)
    suite = load_suite(REGISTRATION)
    assert len(suite.cases) == 12
    assert suite.judge is not None
    journal = start_journal(tmp_path, suite, limit=3)
    outcome = await run_suite(suite, journal, concurrency=2)
    summary = outcome.summary
    print(  # figures for the report (pytest -s)
        f"\nregistration: accuracy {summary.accuracy:.3f}, "
        f"{summary.n_errors} case error(s), {summary.mean_time:.2f}s per case"
    )
    assert summary.n_cases == 3
    for case in summary.cases:
        # The endpoint itself never fails; only the small model's output may be rejected.
        assert case.result.error_type in (None, "MutatorOutputError"), case.result.error
        if case.ok:
            post = case.result.post_state
            assert post is not None
            original = suite.case(case.case_id)
            assert original is not None
            assert set(original.pre_state.paths()) <= set(post.paths())
        for judgement in case.result.judgements:
            assert judgement.label in ("equivalent", "different"), judgement.explanation
    # the model's own confidences: every value it returned (kept or new) is one sample
    calibration = summary.calibration
    assert calibration is not None
    produced = sum(len(c.result.post_state.paths()) for c in summary.cases if c.result.post_state)
    assert calibration.overall.n == produced
    print(f"registration calibration: {calibration.overall.to_dict()}")


async def test_the_judge_check_measures_the_local_judge_against_people(
    local_llm: Endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STATEVAL_LOCAL_LLM_URL", local_llm.url)
    suite = load_suite(JUDGE_CHECK)
    journal = start_journal(tmp_path, suite)
    summary = (await run_suite(suite, journal, concurrency=2)).summary
    agreement = summary.agreement
    assert agreement is not None
    print(f"\njudge check: {agreement.overall.to_dict()}")
    # every human verdict is compared with the judge's or said to be not judged, and the one
    # that differs only in case never reaches the judge
    assert agreement.overall.n + len(agreement.not_judged) == 10
    why = {case_id: reason for case_id, _, reason in agreement.not_judged}
    assert why["diet-10"] == "the rule matched the values; the judge was not asked"
    assert all(r == "the judge failed" for c, r in why.items() if c != "diet-10")
    (kappa,) = [t for t in summary.thresholds if t.name == "judge_kappa"]
    assert kappa.value == agreement.overall.kappa
    assert kappa.passed is (kappa.value is not None and kappa.value >= 0.4)
