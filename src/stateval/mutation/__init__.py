"""Mutation testing of evaluator suites (seed 002): would the suite notice a worse mutator?

Operators degrade the system under test (a state mutator, or its prompt) into mutants; each
mutant runs through the suite like the baseline did; a mutant is killed when the suite's verdict
fails on it. Probes rate the suite along separate dimensions. The plugin API (`register_operator`,
`Mutant`, `register_probe`, `ProbeResult`, `scorer_to_eval`, `case_get`, evals shaped
``fn(output, case) -> bool | EvalOutcome``) is stable: ``tests/test_plugin_contract.py`` pins it.
The systems under test themselves are in `stateval.mutators`.
"""

from __future__ import annotations

from stateval.mutation._config import MutationConfig
from stateval.mutation._evals import Eval, EvalOutcome, provenance_eval
from stateval.mutation._experiments import MutationExperiments
from stateval.mutation._mutant import Mutant, Operator, RatedOperator, Severity
from stateval.mutation._phoenix import log_mutation
from stateval.mutation._plugins import (
    EVALS,
    OPERATORS,
    PLUGIN_GROUP,
    PROBES,
    generate_mutants,
    load_plugins,
    register_eval,
    register_operator,
    register_probe,
    resolve_operators,
)
from stateval.mutation._probes import BUILTIN_PROBES, Probe, ProbeContext, ProbeResult
from stateval.mutation._prompt_operators import PROMPT_OPERATORS
from stateval.mutation._runner import MutationReport, run_mutation, run_probes
from stateval.mutation._score import (
    STATUSES,
    MutantResult,
    MutationScore,
    severity,
    wilson_interval,
)
from stateval.mutation._settings import resolve_eval, suite_config, suite_fail_under
from stateval.mutation._state_operators import STATE_OPERATORS
from stateval.mutation._system import (
    EpisodeTransform,
    OutputTransform,
    System,
    TransformedMutator,
    Turn,
    as_system,
    is_llm_mutator,
    split_transforms,
)
from stateval.mutation._update_operators import STALE_AFTER_TURNS
from stateval.mutation._value_changes import near_miss
from stateval.mutation.adapters import case_get, scorer_to_eval

__all__ = [
    "BUILTIN_PROBES",
    "EVALS",
    "OPERATORS",
    "PLUGIN_GROUP",
    "PROBES",
    "PROMPT_OPERATORS",
    "STALE_AFTER_TURNS",
    "STATE_OPERATORS",
    "STATUSES",
    "EpisodeTransform",
    "Eval",
    "EvalOutcome",
    "Mutant",
    "MutantResult",
    "MutationConfig",
    "MutationExperiments",
    "MutationReport",
    "MutationScore",
    "Operator",
    "OutputTransform",
    "Probe",
    "ProbeContext",
    "ProbeResult",
    "RatedOperator",
    "Severity",
    "System",
    "TransformedMutator",
    "Turn",
    "as_system",
    "case_get",
    "generate_mutants",
    "is_llm_mutator",
    "load_plugins",
    "log_mutation",
    "near_miss",
    "provenance_eval",
    "register_eval",
    "register_operator",
    "register_probe",
    "resolve_eval",
    "resolve_operators",
    "run_mutation",
    "run_probes",
    "scorer_to_eval",
    "severity",
    "split_transforms",
    "suite_config",
    "suite_fail_under",
    "wilson_interval",
]
