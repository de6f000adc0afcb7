"""stateval.testing.ScriptedClient: the fake LLM client users put in their own unit tests."""

from __future__ import annotations

import pytest

from stateval.errors import ScriptExhaustedError, StatevalError
from stateval.mutators import BaseLLMClient
from stateval.testing import ScriptedClient


async def test_replies_come_in_order_and_prompts_are_recorded() -> None:
    client = ScriptedClient(["one", "two"])
    assert isinstance(client, BaseLLMClient)
    assert await client.generate("p1") == "one"
    assert client.remaining == 1
    assert await client.generate("p2") == "two"
    assert client.prompts == ["p1", "p2"]
    assert client.calls == 2
    assert client.remaining == 0


async def test_running_out_of_replies_is_a_clear_error() -> None:
    client = ScriptedClient(["only"])
    await client.generate("p1")
    with pytest.raises(ScriptExhaustedError, match=r"no reply left for call 2 \(scripted 1\)"):
        await client.generate("p2")
    assert client.prompts == ["p1", "p2"]


async def test_an_exception_in_the_script_is_raised_for_that_call() -> None:
    client = ScriptedClient([TimeoutError("slow"), "[]"])
    with pytest.raises(TimeoutError, match="slow"):
        await client.generate("p1")
    assert await client.generate("p2") == "[]"


async def test_a_function_answers_every_prompt() -> None:
    sync_client = ScriptedClient(lambda prompt: prompt.upper())
    assert await sync_client.generate("abc") == "ABC"
    assert sync_client.remaining is None

    async def reply(prompt: str) -> str:
        return f"<{prompt}>"

    async_client = ScriptedClient(reply)
    assert await async_client.generate("x") == "<x>"
    assert async_client.prompts == ["x"]


def test_script_items_must_be_text_or_exceptions() -> None:
    with pytest.raises(StatevalError, match="must be str or Exception, got int"):
        ScriptedClient(["[]", 3])  # type: ignore[list-item]


def test_scripted_judge_llm_is_reachable_from_stateval_testing() -> None:
    import stateval.testing
    from stateval.phoenix import ScriptedJudgeLLM

    assert stateval.testing.ScriptedJudgeLLM is ScriptedJudgeLLM
    assert "ScriptedJudgeLLM" in stateval.testing.__all__
