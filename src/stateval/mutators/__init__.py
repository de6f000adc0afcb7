"""Mutators: the systems under test, and the pieces to build them (seed 000).

Not to be confused with `stateval.mutation`, which *degrades* a mutator into mutants to test
an evaluation suite (seed 002).

A mutator is anything with ``async mutate(state, input) -> InterpretiveState`` (`Mutator`).
`LLMMutator` asks an LLM client (subclass `BaseLLMClient`) for JSON updates; `PythonMutator`
wraps a plain function; `ReplayMutator` returns outputs recorded before; `as_mutator` accepts
a mutator or a function; `load_callable` resolves ``module:attr``.
"""

from __future__ import annotations

from stateval.mutators._client import BaseLLMClient, LLMClient
from stateval.mutators._input import StructuredInput
from stateval.mutators._llm import (
    DEFAULT_INSTRUCTIONS,
    DEFAULT_PROMPT_TEMPLATE,
    PROMPT_PLACEHOLDERS,
    LLMMutator,
)
from stateval.mutators._mutator import Mutator, MutatorFunction, MutatorLike, describe_mutator
from stateval.mutators._openai import LLMCall, OpenAICompatibleClient
from stateval.mutators._python import PythonMutator, as_mutator, load_callable
from stateval.mutators._replay import RECORDED_KEY, Predictions, ReplayMutator, bind_case
from stateval.mutators._updates import UPDATES_JSON_SCHEMA, Update, apply_updates, parse_updates

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "DEFAULT_PROMPT_TEMPLATE",
    "PROMPT_PLACEHOLDERS",
    "RECORDED_KEY",
    "UPDATES_JSON_SCHEMA",
    "BaseLLMClient",
    "LLMCall",
    "LLMClient",
    "LLMMutator",
    "Mutator",
    "MutatorFunction",
    "MutatorLike",
    "OpenAICompatibleClient",
    "Predictions",
    "PythonMutator",
    "ReplayMutator",
    "StructuredInput",
    "Update",
    "apply_updates",
    "as_mutator",
    "bind_case",
    "describe_mutator",
    "load_callable",
    "parse_updates",
]
