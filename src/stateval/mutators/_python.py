"""Plain Python callables as mutators, and loading them from ``module:attr`` references."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from stateval.errors import MutatorError, MutatorLoadError, StateError
from stateval.mutators._input import StructuredInput
from stateval.mutators._mutator import Mutator, MutatorFunction, MutatorLike
from stateval.mutators._thread_calls import ThreadCalls
from stateval.state import InterpretiveState

__all__ = ["PythonMutator", "as_mutator", "load_callable"]


class PythonMutator:
    """Wraps a sync or async callable ``(state, input) -> InterpretiveState`` as a `Mutator`.

    The callable receives a copy of the state, so changing its argument in place is harmless and
    the caller's state never changes. A sync callable runs in a worker thread, so a blocking one
    does not stall other cases; while its calls are cheap, the calls made in one turn of the
    event loop share one thread hop, and once they are quicker than a hop they run in the
    event loop's thread (`ThreadCalls`).

    Args:
        fn: The callable. It may return the (changed) copy it was given, a new state, or a flat
            ``{path: value}`` dict: the whole post-state, each value with confidence 1.0 (see
            `InterpretiveState.from_flat`).
        inline: Whether a sync callable's calls may run in the event loop's thread once they
            are quick (False: always in a thread, for one whose calls wait for one another;
            a suite names such a mutator as ``module:attr`` of a ``PythonMutator(fn,
            inline=False)``).

    Example:
        >>> def set_name(state, input):
        ...     state.add_value("name", ValueConfidence(input.prompt, 1.0))
        ...     return state
        >>> import asyncio
        >>> from stateval.state import ValueConfidence
        >>> mutator = PythonMutator(set_name)
        >>> asyncio.run(mutator.mutate(InterpretiveState(), StructuredInput("Ada", "m")))
        InterpretiveState({'name': 'Ada'})
    """

    def __init__(self, fn: MutatorFunction, *, inline: bool = True) -> None:
        if not callable(fn):
            raise MutatorError(f"PythonMutator needs a callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = _callable_name(fn)
        self._async = _is_async(fn)
        self._threads = ThreadCalls(fn, inline=inline)

    async def mutate(self, state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        """Call the wrapped callable on a copy of ``state`` and check what it returns."""
        working = state.copy()
        if self._async:
            result: Any = await cast(Any, self.fn)(working, input)
        else:
            result = await self._threads.call(working, input)
            if result.__class__ is InterpretiveState:  # the common answer, checked first
                return result
            if inspect.isawaitable(result):
                result = await result
        if isinstance(result, dict):
            return _from_flat(self.name, result)
        if not isinstance(result, InterpretiveState):
            raise MutatorError(
                f"mutator {self.name} returned {type(result).__name__}, not an "
                "InterpretiveState or a flat {path: value} dict"
            )
        return result

    def describe(self) -> str:
        """``python:<module>:<qualname>`` of the wrapped callable."""
        return f"python:{self.name}"


def as_mutator(obj: MutatorLike) -> Mutator:
    """Return ``obj`` as a `Mutator`.

    An object whose ``mutate`` is async is returned as is; one whose ``mutate`` is sync is wrapped
    (its ``mutate`` runs in a thread); any other callable becomes a `PythonMutator`.

    Raises:
        MutatorError: ``obj`` is a class, or neither a mutator nor callable.
    """
    if type(obj) is PythonMutator:  # the common case, met once per mutator call
        return obj
    if isinstance(obj, type):
        raise MutatorError(
            f"{obj.__qualname__} is a class; pass an instance (or a function) as the mutator"
        )
    mutate = getattr(obj, "mutate", None)
    if callable(mutate):
        if _is_async(mutate):
            return cast(Mutator, obj)
        return PythonMutator(cast(MutatorFunction, mutate))
    if callable(obj):
        return PythonMutator(obj)
    raise MutatorError(
        f"{type(obj).__name__} object is not a mutator: expected an object with "
        "async mutate(state, input) or a callable (state, input) -> InterpretiveState"
    )


def load_callable(spec: str, *, search_path: Sequence[str | Path] = ()) -> Any:
    """Import ``"package.module:attr"`` (``attr`` may be dotted, e.g. ``Class.method``).

    Args:
        spec: The reference, as written in a suite file.
        search_path: Directories tried before ``sys.path`` while importing (e.g. the suite's
            folder); they are removed from ``sys.path`` again afterwards.

    Raises:
        MutatorLoadError: The reference is malformed, or the module or attribute is missing, or
            importing the module raised.
    """
    module_name, sep, attr = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    if not sep or not module_name.strip() or not attr.strip():
        raise MutatorLoadError(str(spec), "expected 'package.module:attribute'")
    module_name, attr = module_name.strip(), attr.strip()
    added = [str(p) for p in search_path if str(p) not in sys.path]
    sys.path[:0] = added
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise MutatorLoadError(spec, f"module {exc.name or module_name!r} not found") from exc
    except Exception as exc:
        raise MutatorLoadError(
            spec, f"importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        for entry in added:
            if entry in sys.path:
                sys.path.remove(entry)
    target: Any = module
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            missing = f" (missing {part!r})" if part != attr else ""
            raise MutatorLoadError(
                spec, f"{module_name!r} has no attribute {attr!r}{missing}"
            ) from None
    return target


def _from_flat(name: str, values: dict[Any, Any]) -> InterpretiveState:
    """A mutator's flat ``{path: value}`` result as a state, or one line on what is wrong."""
    bad = next((key for key in values if not isinstance(key, str)), None)
    if bad is not None:
        raise MutatorError(f"mutator {name} returned a dict with the non-string key {bad!r}")
    try:
        return InterpretiveState.from_flat(values)
    except StateError as exc:
        problem = f"mutator {name} returned a dict that is not a flat state: {exc}"
        raise MutatorError(problem) from exc


def _is_async(fn: object) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with async __call__
    )


def _callable_name(fn: object) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return f"{module}:{name}"
