"""`StructuredInput`: the one input a mutator reads (seed 000)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from stateval.errors import InvalidValueError
from stateval.state import check_json_value

__all__ = ["StructuredInput"]

_new = object.__new__
_set = object.__setattr__


@dataclass(frozen=True, slots=True)
class StructuredInput:
    """One input to a mutator: the message text, its id, and free-form metadata.

    The metadata is copied and frozen (a read-only mapping); its values must be JSON, because they
    are shown to LLM mutators and logged with the case.

    Args:
        prompt: The message, turn or document text.
        message_id: Identifies the message; an `LLMMutator` records it on every value it adds.
        metadata: Extra JSON context (speaker, channel, timestamp, ...).

    Example:
        >>> StructuredInput(prompt="My name is Ada", message_id="m-1", metadata={"turn": 1})
        StructuredInput(prompt='My name is Ada', message_id='m-1', metadata={'turn': 1})
    """

    prompt: str
    message_id: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.prompt, str):
            raise InvalidValueError(self.prompt, "StructuredInput.prompt must be a string")
        if not isinstance(self.message_id, str):
            raise InvalidValueError(self.message_id, "StructuredInput.message_id must be a string")
        if self.metadata.__class__ is not dict and not isinstance(self.metadata, Mapping):
            raise InvalidValueError(self.metadata, "StructuredInput.metadata must be a mapping")
        copied = dict(self.metadata)
        if copied:
            check_json_value(copied, "metadata")
        object.__setattr__(self, "metadata", MappingProxyType(copied))

    @classmethod
    def of_checked(cls, prompt: str, message_id: str, metadata: dict[str, Any]) -> StructuredInput:
        """The input of parts an earlier input was made of (read again from a case line
        unchanged since, say): nothing is checked again, and ``metadata``, a fresh dict the
        caller gives up, is frozen as it is, not copied."""
        made: StructuredInput = _new(cls)
        _set(made, "prompt", prompt)
        _set(made, "message_id", message_id)
        _set(made, "metadata", MappingProxyType(metadata))
        return made

    def __repr__(self) -> str:
        return (
            f"StructuredInput(prompt={self.prompt!r}, message_id={self.message_id!r}, "
            f"metadata={dict(self.metadata)!r})"
        )

    def __reduce__(self) -> tuple[type[StructuredInput], tuple[str, str, dict[str, Any]]]:
        # A read-only mapping cannot be pickled or deep-copied; rebuild from a plain dict.
        return (StructuredInput, (self.prompt, self.message_id, dict(self.metadata)))

    def to_dict(self) -> dict[str, Any]:
        """The input as a JSON object: ``{"prompt", "message_id", "metadata"}``."""
        return {
            "prompt": self.prompt,
            "message_id": self.message_id,
            "metadata": dict(self.metadata),
        }
