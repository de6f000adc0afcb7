"""stateval: evaluate state mutators per field, and report to Arize Phoenix."""

from __future__ import annotations

from stateval.errors import (
    InvalidConfidenceError,
    InvalidPathError,
    InvalidValueError,
    MutatorOutputError,
    StateError,
    StatevalError,
)
from stateval.state import InterpretiveState, ValueConfidence

__version__ = "0.1.0"

__all__ = [
    "InterpretiveState",
    "InvalidConfidenceError",
    "InvalidPathError",
    "InvalidValueError",
    "MutatorOutputError",
    "StateError",
    "StatevalError",
    "ValueConfidence",
    "__version__",
]
