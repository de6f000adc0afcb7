"""The LLM client seam: what an `LLMMutator` calls to turn a prompt into text."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["BaseLLMClient", "LLMClient"]


@runtime_checkable
class LLMClient(Protocol):
    """Anything with ``async generate(prompt) -> str``; `BaseLLMClient` is the class to subclass."""

    async def generate(self, prompt: str) -> str:
        """Return the model's reply to ``prompt``."""
        ...


class BaseLLMClient:
    """Base class for LLM clients: subclass it and implement `generate`.

    Example:
        >>> class Echo(BaseLLMClient):
        ...     async def generate(self, prompt: str) -> str:
        ...         return "[]"
    """

    async def generate(self, prompt: str) -> str:
        """Return the model's reply to ``prompt``; subclasses must override this."""
        raise NotImplementedError(f"{type(self).__name__} does not implement generate(prompt)")
