"""Adapters for third-party metrics: turn a scorer into an eval, read fields of any case (seed 002).

Example:
    >>> from stateval import InterpretiveState
    >>> def filled(output, case):
    ...     return len(output) / max(1, len(case_get(case, "expected_post_state")))
    >>> check = scorer_to_eval(filled, threshold=0.5, name="filled")
    >>> case = {"expected_post_state": InterpretiveState.from_flat({"a": 1, "b": 2})}
    >>> check(InterpretiveState.from_flat({"a": 1}), case)
    EvalOutcome(passed=True, name='filled', score=0.5, threshold=0.5)
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from stateval.errors import PluginError
from stateval.mutation._evals import Eval, EvalOutcome, eval_name, is_llm_eval

__all__ = ["case_get", "scorer_to_eval"]

Scorer = Callable[[Any, Any], "float | Awaitable[float]"]


def case_get(case: Any, key: str) -> Any:
    """``case[key]`` for a mapping, else ``case.key``, else ``case.metadata[key]``; None if absent.

    Works for a suite's `Case`, a dict read from JSON, or any object with attributes.
    """
    if isinstance(case, Mapping):
        if key in case:
            return case[key]
        metadata = case.get("metadata")
    else:
        value = getattr(case, key, _MISSING)
        if value is not _MISSING:
            return value
        metadata = getattr(case, "metadata", None)
    if isinstance(metadata, Mapping):
        return metadata.get(key)
    return None


_MISSING = object()


def _score(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PluginError(f"scorer {name!r} returned {type(value).__name__}, not a number")
    return float(value)


def scorer_to_eval(fn: Scorer, threshold: float, name: str | None = None) -> Eval:
    """An eval that passes when ``fn(output, case) >= threshold``.

    Args:
        fn: Any ``(output, case) -> float`` scorer, sync or async (e.g. a third-party metric's
            ``score`` method). Its ``is_llm`` tag carries over to the eval.
        threshold: The score an output needs to pass.
        name: The eval's name (default: the scorer's name).

    Returns:
        An eval returning `EvalOutcome(passed, name, score, threshold)`.
    """
    label = name or eval_name(fn)
    if inspect.iscoroutinefunction(fn):

        async def async_eval(output: Any, case: Any) -> EvalOutcome:
            score = _score(await fn(output, case), label)
            return EvalOutcome(score >= threshold, label, score, threshold)

        wrapped: Any = async_eval
    else:

        def sync_eval(output: Any, case: Any) -> EvalOutcome:
            result = fn(output, case)
            if inspect.isawaitable(result):
                raise PluginError(f"scorer {label!r} returned an awaitable; make it async def")
            score = _score(result, label)
            return EvalOutcome(score >= threshold, label, score, threshold)

        wrapped = sync_eval
    wrapped.__name__ = label
    wrapped.is_llm = is_llm_eval(fn)
    return wrapped  # type: ignore[no-any-return]
