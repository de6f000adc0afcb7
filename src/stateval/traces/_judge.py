"""The reference-free LLM judge: "is this value supported by the message?", per field.

For every value a call wrote on a field named in ``judged:``, the judge's client (the monitor's
``judge:`` block: the same OpenAI-compatible settings as a suite's judge) is asked one question
and answers ``supported`` or ``unsupported`` with a reason (JSON). ``max_judge_calls`` bounds the
calls of one run and ``judge_sample`` picks a seeded share of the values; values past the budget
or outside the sample are not judged (the field may still be checked by the other checks). A
reply that is not a verdict, or a failed call, is counted and flags nothing.

Example:
    >>> import asyncio
    >>> from stateval.testing import ScriptedClient
    >>> judge = SupportJudge(ScriptedClient(['{"verdict": "unsupported", "reason": "no date"}']))
    >>> asyncio.run(judge.judge("renew me", "renewal_date", "2027-01-31"))
    FieldFlag(path='renewal_date', check='judge', explanation='judge: no date')
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from stateval.errors import StatevalError
from stateval.mutators import BaseLLMClient
from stateval.traces._checks import CallVerdict, FieldFlag
from stateval.traces._mapping import MappedCall
from stateval.traces._reader import in_sample

__all__ = ["JUDGE_PROMPT", "SupportJudge", "judge_calls"]

JUDGE_PROMPT = """\
You check one field that a system wrote into a record after reading a message.

Message:
<<<
{message}
>>>

Field: {path}
Value written: {value}

Is the value supported by the message (stated in it, or directly implied by it)?
Answer with JSON only: {{"verdict": "supported" | "unsupported", "reason": "<one sentence>"}}"""
"""The judge's question ({message}, {path}, {value} filled in)."""

_VERDICT = re.compile(r'"verdict"\s*:\s*"(supported|unsupported)"', re.IGNORECASE)


class SupportJudge:
    """Asks an LLM whether written values are supported by the input.

    Args:
        client: Any `BaseLLMClient` (an `OpenAICompatibleClient` from the monitor's ``judge:``,
            or a `stateval.testing.ScriptedClient` in tests).
        fields: Paths or globs judged (default: every field given to `judge`).
        max_calls: Most calls over the judge's life (None: no limit).
        sample: Share of values judged, chosen by a seeded hash of span id and path.
        seed: The sample's seed.

    Attributes:
        calls: Calls made.
        failures: Calls that failed or gave no verdict.
    """

    def __init__(
        self,
        client: BaseLLMClient,
        fields: Sequence[str] = ("*",),
        *,
        max_calls: int | None = None,
        sample: float = 1.0,
        seed: int = 0,
    ) -> None:
        self.client = client
        self.fields = tuple(fields)
        self.max_calls = max_calls
        self.sample = sample
        self.seed = seed
        self.calls = 0
        self.failures = 0
        self._lock = asyncio.Lock()

    def wants(self, span_id: str, path: str) -> bool:
        """Whether the value of ``path`` in span ``span_id`` is to be judged (field, sample)."""
        if not any(fnmatchcase(path, pattern) or path == pattern for pattern in self.fields):
            return False
        return in_sample(f"{span_id}/{path}", self.sample, self.seed)

    async def _take_call(self) -> bool:
        async with self._lock:
            if self.max_calls is not None and self.calls >= self.max_calls:
                return False
            self.calls += 1
            return True

    async def judge(self, message: str, path: str, value: Any) -> FieldFlag | bool | None:
        """The verdict on one value: a flag when unsupported, True when supported, None when
        not judged (budget spent, failed call, no verdict in the reply)."""
        if not await self._take_call():
            return None
        prompt = JUDGE_PROMPT.format(
            message=message[:8000], path=path, value=json.dumps(value, ensure_ascii=False)
        )
        try:
            reply = await self.client.generate(prompt)
        except (StatevalError, OSError, TimeoutError):
            self.failures += 1
            return None
        found = _VERDICT.search(reply)
        if found is None:
            self.failures += 1
            return None
        if found.group(1).lower() == "supported":
            return True
        return FieldFlag(path, "judge", f"judge: {_reason(reply)}")


def _reason(reply: str) -> str:
    try:
        data = json.loads(reply[reply.index("{") : reply.rindex("}") + 1])
    except ValueError:
        return "the value is not supported by the message"
    reason = data.get("reason") if isinstance(data, dict) else None
    return str(reason)[:300] if reason else "the value is not supported by the message"


async def judge_calls(
    judge: SupportJudge, calls: Sequence[tuple[str, MappedCall, CallVerdict]]
) -> list[CallVerdict]:
    """The verdicts of ``(span id, call, verdict)`` with the judge's answers added: every value
    a call wrote (changed from its pre-state, or any without one) on a field the judge
    `SupportJudge.wants` is asked about, all at once (the client bounds its concurrency)."""
    asks: list[tuple[int, str, Any]] = []
    for index, (span_id, call, _) in enumerate(calls):
        pre = {} if call.pre_state is None else call.pre_state.to_flat()
        for path, value in call.post_state.to_flat().items():
            written = call.pre_state is None or path not in pre or pre[path] != value
            if written and judge.wants(span_id, path):
                asks.append((index, path, value))
    answers = await asyncio.gather(
        *(judge.judge(calls[i][1].input_text, path, value) for i, path, value in asks)
    )
    checked: dict[int, list[str]] = {}
    flags: dict[int, list[FieldFlag]] = {}
    for (index, path, _), answer in zip(asks, answers, strict=True):
        if answer is None:
            continue
        checked.setdefault(index, []).append(path)
        if isinstance(answer, FieldFlag):
            flags.setdefault(index, []).append(answer)
    return [
        verdict.with_flags(tuple(checked.get(i, ())), tuple(flags.get(i, ())))
        for i, (_, _, verdict) in enumerate(calls)
    ]
