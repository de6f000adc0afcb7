"""The seed evaluation API: run one mutator on one case and compare its post-state (seed 000).

`LLMEvaluator` copies the pre-state, runs the mutator on the copy (timed with the monotonic
`time.perf_counter`), and compares the best value of every field with `compare_states`. The name
describes the typical mutator under test; the comparison itself is deterministic.

A mutator that raises (any `Exception`, including `MutatorOutputError`) is *data*: the result has
``error`` set, ``actual_post_state=None``, and a comparison against an empty state (every
expected field missing, accuracy 0.0). The evaluator also checks that the ``pre_state`` in the
context is unchanged afterwards: the mutator only ever sees a copy, so a change means it reached
the original some other way (a closure or global), which is reported as an error.

Example:
    >>> from stateval.mutators import PythonMutator, StructuredInput
    >>> from stateval.state import InterpretiveState
    >>> def fill(state, input):
    ...     return InterpretiveState.from_flat({"name": input.prompt})
    >>> result = LLMEvaluator().evaluate_sync(
    ...     EvaluationContext(
    ...         mutator=PythonMutator(fill),
    ...         pre_state=InterpretiveState(),
    ...         expected_post_state=InterpretiveState.from_flat({"name": "Ada"}),
    ...         mutation_input=StructuredInput(prompt="Ada", message_id="m-1"),
    ...     )
    ... )
    >>> result.ok, result.accuracy_score
    (True, 1.0)
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from stateval.compare import FieldPolicies, MatchPolicy, StateComparison, compare_states
from stateval.errors import EvaluationError, MutatorError, MutatorOutputError
from stateval.mutators import MutatorLike, PythonMutator, StructuredInput, as_mutator
from stateval.state import InterpretiveState

__all__ = [
    "EvaluationContext",
    "LLMEvaluator",
    "MutatorCall",
    "MutatorEvaluationResult",
    "MutatorEvaluator",
    "MutatorOutcome",
    "call_mutator",
]

_ERROR_LIMIT = 500


@dataclass(frozen=True, slots=True)
class EvaluationContext:
    """One case to evaluate: a mutator, the state before, the input, and the expected state after.

    Args:
        mutator: A `Mutator`, or a plain callable ``(state, input) -> InterpretiveState``.
        pre_state: The state the mutator starts from; it is copied, never changed.
        expected_post_state: The state the mutator should produce.
        mutation_input: The input the mutator reads.
        policies: How fields are compared for this case; overrides the evaluator's policies.
    """

    mutator: MutatorLike
    pre_state: InterpretiveState
    expected_post_state: InterpretiveState
    mutation_input: StructuredInput
    policies: FieldPolicies | MatchPolicy | None = None


@dataclass(frozen=True, slots=True)
class MutatorCall:
    """One mutator call, not compared (`LLMEvaluator.call`).

    Attributes:
        time_used: Seconds the call took, from a monotonic clock.
        actual_post_state: The state the mutator returned, or None when it failed.
        error: One line saying why the mutator failed, or None.
        error_type: The exception's class name, or None.
        raw_output: The LLM's raw reply when the failure was a `MutatorOutputError`.
    """

    time_used: float
    actual_post_state: InterpretiveState | None
    error: str | None = None
    error_type: str | None = None
    raw_output: str | None = None


@dataclass(frozen=True, slots=True)
class MutatorEvaluationResult:
    """What one evaluation observed.

    Attributes:
        comparison: Every field's comparison (against an empty state when the mutator failed).
        time_used: Seconds the mutator call took, from a monotonic clock; one observation from
            one run, not a normalized performance score.
        actual_post_state: The state the mutator returned, or None when it failed.
        error: One line saying why the mutator failed, or None.
        error_type: The exception's class name, or None.
        raw_output: The LLM's raw reply when the failure was a `MutatorOutputError`.
    """

    comparison: StateComparison
    time_used: float
    actual_post_state: InterpretiveState | None
    error: str | None = None
    error_type: str | None = None
    raw_output: str | None = None

    @property
    def ok(self) -> bool:
        """True when the mutator ran without error (its output may still be wrong)."""
        return self.error is None

    @property
    def accuracy_score(self) -> float:
        """matching / (matching + mismatched + missing); 0.0 with no expected fields or on error."""
        return self.comparison.accuracy_score if self.ok else 0.0

    @property
    def overall_match(self) -> bool:
        """True when the mutator ran without error and every field matches."""
        return self.ok and self.comparison.overall_match

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form for reports."""
        return {
            "ok": self.ok,
            "overall_match": self.overall_match,
            "accuracy_score": self.accuracy_score,
            "time_used": self.time_used,
            "error": self.error,
            "error_type": self.error_type,
            "raw_output": self.raw_output,
            "comparison": self.comparison.to_dict(),
            "actual_post_state": (
                None if self.actual_post_state is None else self.actual_post_state.to_dict()
            ),
        }


class LLMEvaluator:
    """Evaluates a mutator on an `EvaluationContext` (seed 000).

    The name is seed 000's: it evaluates any mutator (LLM-driven or not) and calls no LLM
    itself. `MutatorEvaluator` is the same class under a name that says so.

    Args:
        policies: How fields are compared (the seed rule, value and confidence equal, when None).
            A context's own ``policies`` take precedence.
    """

    def __init__(self, policies: FieldPolicies | MatchPolicy | None = None) -> None:
        self.policies = policies

    async def call(self, context: EvaluationContext) -> MutatorCall:
        """Run the mutator on a copy of the pre-state, without comparing (a runner that scores
        the result itself compares it once, there); never raises for the mutator's failures."""
        return MutatorCall(
            *await call_mutator(context.mutator, context.pre_state, context.mutation_input)
        )

    async def evaluate(self, context: EvaluationContext) -> MutatorEvaluationResult:
        """Run the mutator on a copy of the pre-state and compare; never raises for its failures."""
        policies = context.policies if context.policies is not None else self.policies
        done = await self.call(context)
        actual = done.actual_post_state
        expected = context.expected_post_state
        try:
            comparison = compare_states(
                expected, actual if actual is not None else InterpretiveState(), policies
            )
        except Exception as exc:  # a value no rule could compare: this case's error, not a crash
            failed = EvaluationError(
                f"comparing the post-state failed: {type(exc).__name__}: {exc}"
            )
            return MutatorEvaluationResult(
                compare_states(expected, InterpretiveState(), policies),
                done.time_used,
                None,
                _one_line(failed),
                type(failed).__name__,
            )
        return MutatorEvaluationResult(
            comparison, done.time_used, actual, done.error, done.error_type, done.raw_output
        )

    def evaluate_sync(self, context: EvaluationContext) -> MutatorEvaluationResult:
        """`evaluate` for code without an event loop.

        Raises:
            EvaluationError: Called from inside a running event loop (await `evaluate` there).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.evaluate(context))
        raise EvaluationError(
            "evaluate_sync() cannot run inside a running event loop; await evaluate() instead"
        )


MutatorOutcome = tuple[float, InterpretiveState | None, str | None, str | None, str | None]
"""``(time_used, actual_post_state, error, error_type, raw_output)``: `MutatorCall`'s fields, in
order (`call_mutator`)."""


async def call_mutator(
    mutator: MutatorLike, pre_state: InterpretiveState, mutation_input: StructuredInput
) -> MutatorOutcome:
    """`LLMEvaluator.call` as a plain tuple of `MutatorCall`'s fields, for a runner that makes
    its own record of each call (no context object and no `MutatorCall` made per case).

    The mutator runs on a copy of ``pre_state``; a failure, a wrong return type or a change to
    ``pre_state`` itself is reported in ``error``, never raised.

    Example:
        >>> from stateval.mutators import PythonMutator, StructuredInput
        >>> def fill(state, input):
        ...     return InterpretiveState.from_flat({"name": input.prompt})
        >>> start = InterpretiveState()
        >>> outcome = asyncio.run(
        ...     call_mutator(PythonMutator(fill), start, StructuredInput("Ada", "m-1"))
        ... )
        >>> outcome[1:]
        (InterpretiveState({'name': 'Ada'}), None, None, None)
    """
    snapshot = pre_state.copy()
    clock = time.perf_counter
    start = clock()
    try:
        called = as_mutator(mutator)
        # a PythonMutator hands its callable a copy of its own
        working = pre_state if type(called) is PythonMutator else snapshot.copy()
        actual: object = await called.mutate(working, mutation_input)
    except Exception as exc:
        return _failure(clock() - start, exc)
    elapsed = clock() - start
    if not isinstance(actual, InterpretiveState):
        problem = MutatorError(
            f"mutator returned {type(actual).__name__}, not an InterpretiveState"
        )
        return _failure(elapsed, problem)
    if pre_state != snapshot:
        problem = MutatorError(
            "the mutator changed the pre_state of the context (it is given a copy; "
            "it must not reach the original through a closure or global)"
        )
        return elapsed, actual, _one_line(problem), type(problem).__name__, None
    return elapsed, actual, None, None, None


def _failure(elapsed: float, exc: Exception) -> MutatorOutcome:
    return (
        elapsed,
        None,
        _one_line(exc),
        type(exc).__name__,
        exc.raw if isinstance(exc, MutatorOutputError) else None,
    )


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    # An exception's text may hold unpaired surrogates (from a mutator's own data); keep it text.
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) > _ERROR_LIMIT:
        text = text[: _ERROR_LIMIT - 3] + "..."
    return text


MutatorEvaluator = LLMEvaluator
"""`LLMEvaluator` under a name that says what it does: it runs and scores a mutator (it calls no
LLM itself; the seed 000 name stays)."""
