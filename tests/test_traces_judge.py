"""The reference-free LLM judge, with the scripted client of `stateval.testing` (no server)."""

from __future__ import annotations

import asyncio
import json

from stateval.errors import LLMUnavailableError
from stateval.state import InterpretiveState
from stateval.testing import ScriptedClient
from stateval.traces import FieldFlag, MappedCall, NoGoldChecks, SupportJudge, judge_calls


def _reply(prompt: str) -> str:
    value = json.loads(prompt.split("Value written: ", 1)[1].split("\n", 1)[0])
    message = prompt.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
    verdict = "supported" if str(value) in message else "unsupported"
    return json.dumps({"verdict": verdict, "reason": f"{value!r} vs the message"})


def test_the_judge_flags_unsupported_values_and_passes_supported_ones() -> None:
    judge = SupportJudge(ScriptedClient(_reply))
    flag = asyncio.run(judge.judge("I live in Oslo", "city", "Bergen"))
    assert flag == FieldFlag("city", "judge", "judge: 'Bergen' vs the message")
    assert asyncio.run(judge.judge("I live in Oslo", "city", "Oslo")) is True
    assert judge.calls == 2


def test_the_budget_bounds_the_calls_and_failures_flag_nothing() -> None:
    client = ScriptedClient(
        ['{"verdict": "unsupported"}', LLMUnavailableError("down", model="m", url="u"), "maybe?"]
    )
    judge = SupportJudge(client, max_calls=3)
    answers = [asyncio.run(judge.judge("m", "f", i)) for i in range(5)]
    assert isinstance(answers[0], FieldFlag)
    assert answers[1:] == [None, None, None, None]
    assert (judge.calls, judge.failures, client.calls) == (3, 2, 3)


def test_the_judge_asks_only_about_its_fields_in_its_sample() -> None:
    judge = SupportJudge(ScriptedClient(_reply), ("notes", "address.*"), sample=0.5, seed=1)
    assert not judge.wants("a" * 16, "phone")
    picked = [judge.wants(format(i, "016x"), "notes") for i in range(400)]
    assert 0.4 < sum(picked) / len(picked) < 0.6
    assert all(judge.wants(format(i, "016x"), "address.city") in (True, False) for i in range(3))


def test_the_judges_answers_join_the_checks_verdict() -> None:
    client = ScriptedClient(_reply)
    judge = SupportJudge(client, ("*",), max_calls=10)
    call = MappedCall(
        InterpretiveState.from_flat({"city": "Oslo", "name": "Ada"}),
        "I moved to Bergen",
        InterpretiveState.from_flat({"city": "Bergen", "name": "Ada", "tier": "gold"}),
    )
    checks = NoGoldChecks(unexplained_changes=True)
    [verdict] = asyncio.run(judge_calls(judge, [("a" * 16, call, checks.check(call))]))
    assert verdict.checked == ("city", "tier")  # only written values are judged
    assert [(f.path, f.check) for f in verdict.flags] == [
        ("tier", "unexplained_change"),
        ("tier", "judge"),
    ]
    assert client.calls == 2
