"""Fakes for users' own unit tests: a scripted LLM client, and a scripted judge LLM.

`ScriptedJudgeLLM` (a real ``phoenix.evals.LLM`` replaying judge replies) is loaded on first use,
so importing this module does not import Phoenix.

Example:
    >>> import asyncio
    >>> client = ScriptedClient(["[]", '[{"path": "a", "value": 1, "confidence": 1}]'])
    >>> asyncio.run(client.generate("first prompt"))
    '[]'
    >>> client.prompts
    ['first prompt']
    >>> client.remaining
    1
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

from stateval.errors import ScriptExhaustedError, StatevalError
from stateval.mutators import BaseLLMClient

if TYPE_CHECKING:
    from stateval.phoenix import ScriptedJudgeLLM

__all__ = ["Responder", "ScriptedClient", "ScriptedJudgeLLM"]

Responder: TypeAlias = Callable[[str], "str | Awaitable[str]"]
"""A function from the prompt to the reply (sync or async)."""


class ScriptedClient(BaseLLMClient):
    """An LLM client that replays scripted replies and records every prompt it was sent.

    Args:
        responses: Replies returned in order, one per call; an `Exception` instance in the list
            is raised instead (to script a failing call). Or a function ``prompt -> reply``
            (sync or async), called for every prompt.

    Attributes:
        prompts: Every prompt received, in order.

    Raises:
        ScriptExhaustedError: From `generate` when every scripted reply has been used.
    """

    def __init__(self, responses: Iterable[str | Exception] | Responder) -> None:
        self.prompts: list[str] = []
        self._responder: Responder | None = None
        self._script: list[str | Exception] = []
        if callable(responses):
            self._responder = responses
        else:
            self._script = list(responses)
            for item in self._script:
                if not isinstance(item, str | Exception):
                    raise StatevalError(
                        "ScriptedClient replies must be str or Exception, "
                        f"got {type(item).__name__}"
                    )
        self._used = 0

    @property
    def calls(self) -> int:
        """How many times `generate` was called."""
        return len(self.prompts)

    @property
    def remaining(self) -> int | None:
        """Scripted replies not used yet (None for a function-backed client)."""
        return None if self._responder is not None else len(self._script) - self._used

    async def generate(self, prompt: str) -> str:
        """Record ``prompt`` and return (or raise) the next scripted reply."""
        self.prompts.append(prompt)
        if self._responder is not None:
            reply = self._responder(prompt)
            return await reply if inspect.isawaitable(reply) else reply
        if self._used >= len(self._script):
            raise ScriptExhaustedError(
                f"ScriptedClient has no reply left for call {len(self.prompts)} "
                f"(scripted {len(self._script)})"
            )
        item = self._script[self._used]
        self._used += 1
        if isinstance(item, Exception):
            raise item
        return item


def __getattr__(name: str) -> Any:
    if name == "ScriptedJudgeLLM":
        from stateval.phoenix import ScriptedJudgeLLM

        return ScriptedJudgeLLM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
