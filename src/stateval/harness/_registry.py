"""`EvaluatorRegistry`: evaluators by name, built by factories ``(**options) -> evaluator``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeAlias

from stateval.config import EvaluationConfig
from stateval.errors import EvaluationConfigError, EvaluatorNotFoundError
from stateval.harness._evaluators import (
    CriteriaEvaluator,
    EmbeddingDistanceEvaluator,
    QAEvaluator,
    StringDistanceEvaluator,
    TrajectoryEvaluator,
)
from stateval.harness._state_evaluators import STATE_METRICS, StateEvaluator
from stateval.harness._types import EvaluatorProtocol

__all__ = ["BUILTIN_EVALUATORS", "EvaluatorFactory", "EvaluatorRegistry"]

#: Builds an evaluator from keyword options.
EvaluatorFactory: TypeAlias = Callable[..., EvaluatorProtocol]


def _embedding_distance(
    *, client: Any = None, model: str | None = None, **options: Any
) -> EvaluatorProtocol:
    if client is None:
        from stateval.checks.e5 import E5EmbeddingClient  # optional extra: import on demand

        client = E5EmbeddingClient(model or EvaluationConfig().embedding_model)
    return EmbeddingDistanceEvaluator(client, **options)


#: The built-in evaluators by name: the five of seed 004, then stateval's state evaluators
#: (`StateEvaluator`: ``state_accuracy``, ``overall_match``, ``changed_fields_accuracy``,
#: ``preserved_fields_accuracy``, ``slot_accuracy``; options ``policies`` and ``schema``).
BUILTIN_EVALUATORS: Mapping[str, EvaluatorFactory] = {
    "criteria": CriteriaEvaluator,
    "qa": QAEvaluator,
    "string_distance": StringDistanceEvaluator,
    "embedding_distance": _embedding_distance,
    "trajectory": TrajectoryEvaluator,
    **{metric: partial(StateEvaluator, metric) for metric in STATE_METRICS},
}


class EvaluatorRegistry:
    """Evaluator factories by name: the built-ins plus what the user passes or registers.

    ``embedding_distance`` without a ``client`` option uses the offline
    `stateval.checks.e5.E5EmbeddingClient` (option ``model``, default
    ``EvaluationConfig().embedding_model``, i.e. ``STATEVAL_EMBEDDING_MODEL``), which needs
    ``stateval[embeddings]``.

    Args:
        factories: Extra factories by name.
        builtins: Start from `BUILTIN_EVALUATORS` (default) or from nothing.

    Raises:
        EvaluationConfigError: A name is registered twice.

    Example:
        >>> registry = EvaluatorRegistry()
        >>> registry.resolve("string_distance", metric="jaccard").name
        'string_distance'
    """

    def __init__(
        self,
        factories: Mapping[str, EvaluatorFactory] | None = None,
        *,
        builtins: bool = True,
    ) -> None:
        self._factories: dict[str, EvaluatorFactory] = dict(BUILTIN_EVALUATORS) if builtins else {}
        for name, factory in (factories or {}).items():
            self.register(name, factory)

    def register(self, name: str, factory: EvaluatorFactory) -> None:
        """Add a factory under ``name`` (a name already taken is an error)."""
        if not isinstance(name, str) or not name:
            raise EvaluationConfigError(f"an evaluator name is a non-empty string, not {name!r}")
        if not callable(factory):
            raise EvaluationConfigError(f"evaluator factory for {name!r} is not callable")
        if name in self._factories:
            raise EvaluationConfigError(f"an evaluator named {name!r} is already registered")
        self._factories[name] = factory

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def resolve(self, name: str, **options: Any) -> EvaluatorProtocol:
        """Build the evaluator registered as ``name`` with ``options``.

        Raises:
            EvaluatorNotFoundError: No such name (the message lists the known names).
            EvaluationConfigError: The options are wrong, or the factory built no evaluator.
        """
        factory = self._factories.get(name)
        if factory is None:
            known = ", ".join(self.names()) or "none"
            raise EvaluatorNotFoundError(f"no evaluator named {name!r}; known: {known}")
        try:
            evaluator = factory(**options)
        except TypeError as exc:
            raise EvaluationConfigError(f"cannot build evaluator {name!r}: {exc}") from exc
        if not isinstance(evaluator, EvaluatorProtocol):
            raise EvaluationConfigError(
                f"factory for {name!r} returned a {type(evaluator).__name__}, not an evaluator"
            )
        return evaluator
