"""The `Mutator` protocol: the system under test (seed 000)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeAlias, runtime_checkable

from stateval.mutators._input import StructuredInput
from stateval.state import InterpretiveState

__all__ = ["Mutator", "MutatorFunction", "MutatorLike", "describe_mutator"]


@runtime_checkable
class Mutator(Protocol):
    """Reads one input and returns an updated state.

    ``mutate`` returns a *new* state and never changes its argument. A mutator may also define
    ``describe() -> str`` (a one-line description recorded with experiments); it is optional.
    """

    async def mutate(self, state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        """Return the state after reading ``input``."""
        ...


MutatorFunction: TypeAlias = Callable[
    [InterpretiveState, StructuredInput], "InterpretiveState | Awaitable[InterpretiveState]"
]
"""A plain sync or async callable ``(state, input) -> InterpretiveState`` (see `PythonMutator`)."""

MutatorLike: TypeAlias = "Mutator | MutatorFunction"
"""What `as_mutator` accepts: a `Mutator` or a `MutatorFunction`."""


def describe_mutator(mutator: object) -> str:
    """The mutator's ``describe()`` if it has one, else its class (or function) name."""
    describe = None if isinstance(mutator, type) else getattr(mutator, "describe", None)
    if callable(describe):
        return str(describe())
    name = getattr(mutator, "__qualname__", None)
    if isinstance(name, str):
        return f"{getattr(mutator, '__module__', '?')}:{name}"
    return type(mutator).__qualname__
