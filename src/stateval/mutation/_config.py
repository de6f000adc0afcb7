"""How to mutation-test a suite: the settings `run_mutation` takes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stateval.mutation._evals import Eval
from stateval.mutation._mutant import Operator
from stateval.mutation._probes import Probe
from stateval.suite import EpisodeMode

__all__ = ["MutationConfig"]


@dataclass(frozen=True, slots=True)
class MutationConfig:
    """How to mutation-test a suite.

    Args:
        operators: Operator names or callables, or a comma-separated string (default: every
            registered operator).
        seed: Seeds the operators' random choices and the mutant sample.
        evals: Extra evals ``fn(output, case) -> bool | EvalOutcome`` run on every case.
        probes: Probe names or callables (default: every registered probe).
        concurrency: Mutator calls at once.
        max_calls: Paid calls allowed (LLM mutator calls and ``is_llm`` evals); mutants that
            would exceed it are skipped.
        max_mutants: Evaluate a seeded random sample of this many mutants.
        limit: Use only the suite's first ``limit`` cases.
        mode: How the turns of a suite's episodes run, for the baseline and every mutant:
            ``teacher_forced`` or ``free_running`` (default: the suite's ``episodes.mode``).
        keep_cases: Keep, for each mutant that ran, the ids and scores of every case whose
            output it changed (what `log_mutation` uploads). Without it a mutant keeps its
            counts, its summary's figures and the first ids only, so the memory of a
            mutation test stays flat in the number of mutants.
    """

    operators: Sequence[str | Operator] | str | None = None
    seed: int = 0
    evals: Sequence[Eval] = ()
    probes: Sequence[str | Probe] | None = None
    concurrency: int = 8
    max_calls: int | None = None
    max_mutants: int | None = None
    limit: int | None = None
    mode: EpisodeMode | None = None
    keep_cases: bool = False
