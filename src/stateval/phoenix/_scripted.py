"""A scripted `phoenix.evals.LLM` for unit tests of LLM-judged fields (no network).

`ScriptedJudgeLLM` is a real `phoenix.evals.LLM`: it goes through Phoenix's provider registry, its
adapter interface and its rate limiters; only the model is replaced by a script. The provider
``stateval-scripted`` is registered with Phoenix the first time one is built (never at import).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeAlias

from phoenix.evals import LLM
from phoenix.evals.llm.registries import PROVIDER_REGISTRY
from phoenix.evals.llm.types import BaseLLMAdapter, ObjectGenerationMethod

from stateval.errors import ScriptExhaustedError

__all__ = ["SCRIPTED_PROVIDER", "JudgeReply", "ScriptedJudgeLLM"]

#: The Phoenix provider name `ScriptedJudgeLLM` registers.
SCRIPTED_PROVIDER = "stateval-scripted"

JudgeReply: TypeAlias = "str | Mapping[str, Any] | BaseException"
"""One scripted reply: a label (``"equivalent"``), the whole object the model would return
(``{"label": ..., "explanation": ...}``), or an exception to raise."""

_register_lock = threading.Lock()


class _Script:
    def __init__(self, replies: Iterable[JudgeReply] | Callable[[str], JudgeReply]) -> None:
        self._responder = replies if callable(replies) else None
        self._replies = [] if callable(replies) else list(replies)
        self._lock = threading.Lock()
        self.prompts: list[str] = []

    def next(self, prompt: Any) -> dict[str, Any]:
        text = _prompt_text(prompt)
        with self._lock:
            self.prompts.append(text)
            if self._responder is not None:
                reply = self._responder(text)
            elif self._replies:
                reply = self._replies.pop(0)
            else:
                raise ScriptExhaustedError(
                    f"scripted judge LLM has no reply left for call {len(self.prompts)}"
                )
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            return {"label": reply, "explanation": f"scripted reply {reply!r}"}
        return dict(reply)

    @property
    def remaining(self) -> int:
        return len(self._replies)


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        return "\n".join(
            str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in prompt
        )
    return str(prompt)


class _ScriptedAdapter(BaseLLMAdapter):
    @classmethod
    def client_name(cls) -> str:
        return "scripted"

    def generate_text(self, prompt: Any, **kwargs: Any) -> str:
        return str(self.client.next(prompt).get("label", ""))

    async def async_generate_text(self, prompt: Any, **kwargs: Any) -> str:
        return self.generate_text(prompt, **kwargs)

    def generate_object(
        self,
        prompt: Any,
        schema: dict[str, Any],
        method: ObjectGenerationMethod = ObjectGenerationMethod.AUTO,
        **kwargs: Any,
    ) -> dict[str, Any]:
        result: dict[str, Any] = self.client.next(prompt)
        return result

    async def async_generate_object(
        self,
        prompt: Any,
        schema: dict[str, Any],
        method: ObjectGenerationMethod = ObjectGenerationMethod.AUTO,
        **kwargs: Any,
    ) -> dict[str, Any]:
        return self.generate_object(prompt, schema, method, **kwargs)


def _client_factory(model: str, is_async: bool, script: _Script, **_: Any) -> _Script:
    return script


def _ensure_registered() -> None:
    with _register_lock:
        if not PROVIDER_REGISTRY.get_provider_registrations(SCRIPTED_PROVIDER):
            PROVIDER_REGISTRY.register_provider(
                provider=SCRIPTED_PROVIDER,
                adapter_class=_ScriptedAdapter,
                client_factory=_client_factory,
            )


class ScriptedJudgeLLM(LLM):
    """A `phoenix.evals.LLM` that replays scripted classification replies.

    Args:
        replies: Replies in call order (see `JudgeReply`), or a function ``prompt -> reply``.
        model: The model name reported in Phoenix scores' metadata.

    Attributes:
        prompts: Every rendered prompt received, in order.

    Raises:
        ScriptExhaustedError: (from a call) when the script has no reply left.

    Example:
        >>> llm = ScriptedJudgeLLM(["equivalent", {"label": "different", "explanation": "no"}])
        >>> llm.generate_classification("same?", labels=["equivalent", "different"])["label"]
        'equivalent'
        >>> llm.remaining
        1
    """

    def __init__(
        self,
        replies: Iterable[JudgeReply] | Callable[[str], JudgeReply],
        *,
        model: str = "scripted-judge",
    ) -> None:
        _ensure_registered()
        self._script = _Script(replies)
        super().__init__(provider=SCRIPTED_PROVIDER, model=model, script=self._script)

    @property
    def prompts(self) -> list[str]:
        """Every prompt received so far (message contents joined by newlines)."""
        return list(self._script.prompts)

    @property
    def calls(self) -> int:
        """How many times the model was called."""
        return len(self._script.prompts)

    @property
    def remaining(self) -> int:
        """Scripted replies not yet used (0 for a function script)."""
        return self._script.remaining
