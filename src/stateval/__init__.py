"""stateval: evaluate state mutators per field, and report to Arize Phoenix."""

from __future__ import annotations

from stateval.errors import (
    InvalidConfidenceError,
    InvalidPathError,
    InvalidValueError,
    MutatorError,
    MutatorOutputError,
    StateError,
    StatevalError,
)
from stateval.evaluation import EvaluationContext, LLMEvaluator, MutatorEvaluationResult
from stateval.mutators import (
    BaseLLMClient,
    LLMMutator,
    Mutator,
    PythonMutator,
    StructuredInput,
)
from stateval.state import InterpretiveState, ValueConfidence

__version__ = "0.1.0"

__all__ = [
    "BaseLLMClient",
    "EvaluationContext",
    "InterpretiveState",
    "InvalidConfidenceError",
    "InvalidPathError",
    "InvalidValueError",
    "LLMEvaluator",
    "LLMMutator",
    "Mutator",
    "MutatorError",
    "MutatorEvaluationResult",
    "MutatorOutputError",
    "PythonMutator",
    "StateError",
    "StatevalError",
    "StructuredInput",
    "ValueConfidence",
    "__version__",
]
