"""`Mutant`: one degraded copy of the system under test, and the `Operator` shape (seed 002)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from stateval.mutation._system import System

__all__ = ["Mutant", "Operator"]


@dataclass(frozen=True, slots=True)
class Mutant:
    """A degraded system produced by an operator.

    Args:
        operator: The operator's name.
        description: What was changed, exactly (which field, which line); users read it in the
            survivor report.
        system: The degraded `System`.
        target: What was mutated: ``"prompt"``, ``"state"`` (the mutator's output),
            ``"context"``, ``"tools"`` or ``"model"``; it affects the severity of a survivor.

    Example:
        >>> from stateval.mutation import as_system
        >>> system = as_system("Answer in English.")
        >>> shouted = system.with_prompt("ANSWER IN ENGLISH.")
        >>> mutant = Mutant("shout", "UPPERCASED the prompt", shouted)
        >>> mutant.target, mutant.system.prompt
        ('prompt', 'ANSWER IN ENGLISH.')
    """

    operator: str
    description: str
    system: System
    target: str = "prompt"

    def __repr__(self) -> str:
        return (
            f"Mutant(operator={self.operator!r}, description={self.description!r}, "
            f"system=System(...), target={self.target!r})"
        )


Operator: TypeAlias = Callable[[Any], "list[Mutant]"]
"""``fn(target) -> list[Mutant]``; ``target`` is a `System` or a bare prompt (see `as_system`)."""
