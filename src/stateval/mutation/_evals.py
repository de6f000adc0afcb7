"""Evals: functions ``fn(output, case) -> bool | EvalOutcome`` grading one output (seed 002).

In stateval the ``output`` is the post-state the mutator returned (an `InterpretiveState`) and
the ``case`` is the suite's `Case` (``id``, ``pre_state``, ``input``, ``expected_post_state``,
``metadata``). An eval may be async. Tag it ``fn.is_llm = True`` when it makes a paid model call:
the runner then runs it after the cheap checks, only while a mutant is not killed yet, and counts
each call against ``--max-calls``. An eval that raises fails, with the error as its reason.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from stateval.state import InterpretiveState

__all__ = [
    "Eval",
    "EvalOutcome",
    "eval_name",
    "is_llm_eval",
    "provenance_eval",
    "run_eval",
]

Eval: TypeAlias = Callable[[Any, Any], "bool | EvalOutcome | Awaitable[bool | EvalOutcome]"]
"""``fn(output, case) -> bool | EvalOutcome`` (or an awaitable of one)."""


@dataclass(frozen=True, slots=True)
class EvalOutcome:
    """What an eval says about one output.

    Args:
        passed: Whether the output passes.
        name: The eval's name (defaults to the function's name).
        score: The measured score, when there is one.
        threshold: The score needed to pass; with ``score`` it enables near-miss reporting.

    Example:
        >>> EvalOutcome(passed=False, name="faithfulness", score=0.68, threshold=0.7).margin
        -0.02
    """

    passed: bool
    name: str | None = None
    score: float | None = None
    threshold: float | None = None

    @property
    def margin(self) -> float | None:
        """``score - threshold`` (rounded to 6 places), when both are set."""
        if self.score is None or self.threshold is None:
            return None
        return round(self.score - self.threshold, 6)


def eval_name(fn: object) -> str:
    """The name an eval reports under: its ``name`` attribute, else ``__name__``, else its type."""
    name = getattr(fn, "name", None)
    if isinstance(name, str) and name:
        return name
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def is_llm_eval(fn: object) -> bool:
    """True when ``fn`` (or, for a bound method, its object) is tagged ``is_llm = True``."""
    owner = getattr(fn, "__self__", None)
    return getattr(fn, "is_llm", False) is True or getattr(owner, "is_llm", False) is True


async def run_eval(fn: Eval, output: Any, case: Any) -> tuple[EvalOutcome, str | None]:
    """Call ``fn(output, case)``; return its answer as a named `EvalOutcome`, and an error.

    Never raises for the eval's own failures: an exception, or an answer that is neither a bool
    nor an `EvalOutcome`, is a failed outcome, and the second item says why (else None).
    """
    name = eval_name(fn)
    try:
        result: Any = fn(output, case)
        if inspect.isawaitable(result):
            result = await result
    except Exception as exc:
        return EvalOutcome(False, name), f"raised {type(exc).__name__}: {exc}"
    if isinstance(result, EvalOutcome):
        if result.name is None:
            return EvalOutcome(result.passed, name, result.score, result.threshold), None
        return result, None
    if isinstance(result, bool):
        return EvalOutcome(result, name), None
    return EvalOutcome(False, name), f"returned {type(result).__name__}, not bool or EvalOutcome"


def provenance_eval(output: Any, case: Any) -> EvalOutcome:
    """Every field the mutator changed carries the input's ``message_id``.

    Score: the fraction of changed fields that do (1.0 when none changed); threshold 1.0.
    """
    if not isinstance(output, InterpretiveState):
        return EvalOutcome(False, "provenance", 0.0, 1.0)
    pre = getattr(case, "pre_state", None)
    message_id = getattr(getattr(case, "input", None), "message_id", None)
    changed = [
        best
        for path in output.paths()
        if (best := output.best(path)) is not None
        and (not isinstance(pre, InterpretiveState) or pre.best(path) != best)
    ]
    if not changed:
        return EvalOutcome(True, "provenance", 1.0, 1.0)
    good = sum(1 for vc in changed if vc.message_id is not None and vc.message_id == message_id)
    return EvalOutcome(good == len(changed), "provenance", good / len(changed), 1.0)


setattr(provenance_eval, "name", "provenance")  # noqa: B010 - the name it reports under
