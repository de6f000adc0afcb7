"""`Mutant`: one degraded copy of the system under test, and the `Operator` shape (seed 002)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from stateval.mutation._system import System

__all__ = ["Mutant", "Operator", "RatedOperator", "Severity"]

Severity: TypeAlias = Literal["low", "medium", "high"]
"""How bad a surviving mutant is."""


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


@dataclass(frozen=True, slots=True)
class RatedOperator:
    """An operator with its severity: how bad a surviving mutant of it is (`severity`).

    Register one as any operator (``register_operator(name, RatedOperator(fn, "high"))``); an
    operator registered bare has its survivors rated by their ``target``.

    Attributes:
        fn: The operator.
        severity: How bad a surviving mutant of it is, before its impact is counted.

    Example:
        >>> from stateval.mutation import as_system
        >>> def shout(target):
        ...     system = as_system(target)
        ...     return [Mutant("shout", "UPPERCASED", system.with_prompt(system.prompt.upper()))]
        >>> rated = RatedOperator(shout, "low")
        >>> rated.severity, [m.description for m in rated("Answer.")]
        ('low', ['UPPERCASED'])
    """

    fn: Operator
    severity: Severity

    def __call__(self, target: Any) -> list[Mutant]:
        """The operator's mutants."""
        return self.fn(target)
