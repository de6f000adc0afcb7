"""Running a mutation test: the baseline, then every mutant through the same suite and evals.

State mutants (output transforms of the suite's own mutator) are applied to the baseline's
outputs, so they cost no mutator call and differ from the baseline only by what the operator
changed; other mutants (prompt mutants) call their mutator on every case, which counts against
``max_calls`` when it is an LLM. Only cases whose output changed are scored again. A
free-running suite's episodes run turn by turn from the state the turn before left
(`stateval.mutation._free_running`): a state mutant calls the mutator again only for the turns
after its first change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stateval.errors import MutationError, PluginError
from stateval.evaluation import EvaluationContext, LLMEvaluator
from stateval.mutation._config import MutationConfig
from stateval.mutation._evals import Eval, EvalOutcome, eval_name, is_llm_eval, run_eval
from stateval.mutation._free_running import run_episodes
from stateval.mutation._mutant import Mutant
from stateval.mutation._plugins import (
    PROBES,
    generate_mutants,
    operator_severity,
    resolve_operators,
)
from stateval.mutation._probes import Probe, ProbeContext, ProbeResult
from stateval.mutation._report import MutationReport
from stateval.mutation._score import SHOWN_CASES, MutantResult, severity
from stateval.mutation._settings import suite_config
from stateval.mutation._suggest import (
    ChangedCase,
    closest_call,
    equivalence,
    field_changes,
    suggest,
    what_it_wrote,
)
from stateval.mutation._system import System, is_llm_mutator, split_transforms
from stateval.mutation._verdict import (
    Outcomes,
    Run,
    eval_kills,
    eval_scores,
    headline,
    kills_of,
    same,
    transformed,
    unobserved,
)
from stateval.mutators import Mutator, MutatorLike, as_mutator, bind_case
from stateval.run import CaseResult, CaseScore, RunSummary, Scoring, score_case, summarize
from stateval.state import InterpretiveState
from stateval.suite import Case, Suite

if TYPE_CHECKING:
    pass

__all__ = ["MutationConfig", "MutationReport", "run_mutation", "run_probes"]

_KILL_LINES = 10


class _OutOfCalls(Exception):
    """The budget of paid calls ran out in the middle of a mutant's run."""


class _Budget:
    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.used = 0

    def allows(self, n: int) -> bool:
        return self.limit is None or self.used + n <= self.limit


class _Mutation:
    """The state of one mutation test: suite, scoring, baseline, budget."""

    def __init__(
        self, suite: Suite, mutator: Mutator, config: MutationConfig, cases: tuple[Case, ...]
    ) -> None:
        self.suite = suite
        self.mutator = mutator
        self.config = config
        self.cases = cases
        self.scoring = Scoring.from_suite(suite)
        self.evals = tuple(config.evals)
        names = [eval_name(e) for e in self.evals]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise PluginError(f"two evals share the name(s) {dupes}; give each its own name")
        self.cheap = tuple(e for e in self.evals if not is_llm_eval(e))
        self.paid = tuple(e for e in self.evals if is_llm_eval(e))
        self.budget = _Budget(config.max_calls)
        episodes = suite.episodes
        self.mode = config.mode or ("teacher_forced" if episodes is None else episodes.mode)
        if self.mode == "free_running" and episodes is None:
            raise MutationError(f"{suite.path}: free-running mode needs episodes ('episodes:')")
        self.plan = {} if episodes is None else episodes.plan({c.id for c in cases})
        self.on_error = "skip" if episodes is None else episodes.on_error

    async def run_cases(
        self,
        mutator: Mutator,
        *,
        transforms: Sequence[Any] = (),
        base: dict[str, CaseResult] | None = None,
        counted: bool = False,
    ) -> dict[str, CaseResult]:
        """Every case's result from ``mutator`` (its episodes turn by turn when free-running,
        ``transforms`` applied and ``base`` reused there; ``counted``: each call is an LLM
        call against the budget)."""
        evaluator = LLMEvaluator(self.scoring.policies)
        gate = asyncio.Semaphore(max(1, self.config.concurrency))

        async def call(case: Case, pre: InterpretiveState) -> CaseResult:
            if counted:
                if not self.budget.allows(1):
                    raise _OutOfCalls
                self.budget.used += 1
            async with gate:
                context = EvaluationContext(
                    bind_case(mutator, case.id, case.actual_post_state),
                    pre,
                    case.expected_post_state,
                    case.input,
                )
                r = await evaluator.call(context)
            return CaseResult(
                case.id,
                r.actual_post_state,
                r.error,
                r.error_type,
                r.time_used,
                raw_output=r.raw_output,
            )

        if self.mode == "free_running":
            return await run_episodes(
                self.cases,
                self.plan,
                call,
                on_error=self.on_error,
                concurrency=self.config.concurrency,
                transforms=transforms,
                base=base,
            )
        done = await asyncio.gather(*(call(c, c.pre_state) for c in self.cases))
        return {r.case_id: r for r in done}

    def summarize(self, scores: dict[str, CaseScore], run_id: str) -> RunSummary:
        # With episodes, the summary carries their trajectory metrics (in the run's mode), so
        # the episode thresholds take part in the verdict.
        return summarize(
            scores.values(),
            self.scoring,
            cases=self.cases,
            suite_name=self.suite.name,
            run_id=run_id,
            episodes=self.suite.episodes,
            mode=self.mode,
        )

    async def grade(
        self, evals: Iterable[Eval], results: dict[str, CaseResult], case_ids: Iterable[str]
    ) -> tuple[Outcomes, bool]:
        """Eval outcomes on ``case_ids``; False second when the budget stopped paid evals."""
        out: Outcomes = {}
        by_id = {c.id: c for c in self.cases}
        for fn in evals:
            paid = is_llm_eval(fn)
            name = eval_name(fn)
            for case_id in case_ids:
                post = results[case_id].post_state
                if post is None:
                    out[(case_id, name)] = EvalOutcome(False, name)
                    continue
                if paid:
                    if not self.budget.allows(1):
                        return out, False
                    self.budget.used += 1
                outcome, _ = await run_eval(fn, post, by_id[case_id])
                out[(case_id, name)] = outcome
        return out, True


async def _mutant_result(job: _Mutation, base: Run, index: int, mutant: Mutant) -> MutantResult:
    """One mutant's verdict, holding its counts and figures only (see `_kept`): what it ran
    on (outputs, scores of every case) is dropped once it is decided."""
    return _kept(job, await _decide(job, base, index, mutant))


def _kept(job: _Mutation, result: MutantResult) -> MutantResult:
    """``result`` as a mutation test keeps it, unless the test keeps its cases (for Phoenix):
    its first changed case ids and its summary's figures (headline rates, per-field rows,
    thresholds, edit matrix), without what grows with the cases (their scores, the failing
    ones, per-slice metrics, calibration curves, episode metrics)."""
    summary = result.summary
    if summary is None or job.config.keep_cases:
        return result
    figures = replace(summary, cases=(), failing=(), metrics=None, calibration=None, episodes=None)
    return replace(
        result,
        summary=figures,
        changed_cases=result.changed_cases[:SHOWN_CASES],
        n_changed=result.n_changed,
    )


async def _decide(job: _Mutation, base: Run, index: int, mutant: Mutant) -> MutantResult:
    rid = f"M{index + 1:03d}"
    mutator = mutant.system.mutator
    if mutator is None:
        return MutantResult(rid, mutant, "error", error="the mutant has no mutator to run")
    root, transforms = split_transforms(mutator)
    calls_before = job.budget.used
    if root is job.mutator and job.mode == "free_running":
        try:
            results = await job.run_cases(
                root, transforms=transforms, base=base.results, counted=is_llm_mutator(root)
            )
        except _OutOfCalls:
            return MutantResult(
                rid, mutant, "skipped", error="--max-calls ran out replaying its episodes"
            )
    elif root is job.mutator:
        results = transformed(base.results, job.cases, transforms)
    else:
        cost = len(job.cases) if is_llm_mutator(mutator) else 0
        if not job.budget.allows(cost):
            left = (job.budget.limit or 0) - job.budget.used
            return MutantResult(
                rid, mutant, "skipped", error=f"needs {cost} LLM calls; --max-calls leaves {left}"
            )
        job.budget.used += cost
        results = await job.run_cases(mutator)
    changed = tuple(c.id for c in job.cases if not same(results[c.id], base.results[c.id]))
    calls = job.budget.used - calls_before
    if not changed:
        return MutantResult(rid, mutant, "inert", calls=calls)
    scores = dict(base.scores)
    by_id = {c.id: c for c in job.cases}
    for case_id in changed:
        scores[case_id] = score_case(by_id[case_id], results[case_id], job.scoring)
    summary = job.summarize(scores, rid)
    # the summary's cases: the changed ones (what Phoenix shows of a mutant), not every case
    summary = replace(summary, cases=tuple(scores[c] for c in changed))
    pairs = [
        ChangedCase(c, base.results[c].post_state, results[c].post_state, base.scores[c], scores[c])
        for c in changed
    ]
    wrote = what_it_wrote(pairs)
    kills, keys = kills_of(base, summary, scores, changed)
    outcomes, complete = await job.grade(job.cheap, results, changed)
    eval_kills(base.outcomes, outcomes, kills, keys)
    if not keys and job.paid:
        paid, complete = await job.grade(job.paid, results, changed)
        eval_kills(base.outcomes, paid, kills, keys)
        outcomes.update(paid)
    calls = job.budget.used - calls_before
    moved = (
        headline(summary) != headline(base.summary)
        or any(eval_scores(scores[c]) != eval_scores(base.scores[c]) for c in changed)
        or any(o != base.outcomes.get(k) for k, o in outcomes.items())
    )
    if keys:
        shown = kills[:_KILL_LINES]
        if len(kills) > _KILL_LINES:
            shown.append(f"... and {len(kills) - _KILL_LINES} more")
        return MutantResult(
            rid,
            mutant,
            "killed",
            kills=tuple(shown),
            killed_by=tuple(keys),
            changed_cases=changed,
            moved=moved,
            calls=calls,
            summary=summary,
            complete=complete,
            wrote=wrote,
        )
    diffs = field_changes(pairs)
    if complete and unobserved(base, scores, outcomes, changed):
        return MutantResult(
            rid,
            mutant,
            "equivalent",
            changed_cases=changed,
            moved=moved,
            suggestion=equivalence(diffs, job.scoring),
            calls=calls,
            summary=summary,
            wrote=wrote,
        )
    return MutantResult(
        rid,
        mutant,
        "survived",
        changed_cases=changed,
        moved=moved,
        severity=severity(
            mutant, len(changed), len(job.cases), rated=operator_severity(mutant.operator)
        ),
        suggestion=suggest(base.summary, summary, job.scoring, diffs),
        closest=closest_call(base.summary, summary, base.outcomes, outcomes),
        calls=calls,
        summary=summary,
        complete=complete,
        wrote=wrote,
    )


def run_probes(
    context: ProbeContext, probes: Sequence[str | Probe] | None = None
) -> tuple[ProbeResult, ...]:
    """Run the probes (default: every registered one); a probe that raises is a failed result.

    Raises:
        PluginError: A probe name is not registered.
    """
    chosen: list[tuple[str, Probe]] = []
    for item in PROBES if probes is None else probes:
        if isinstance(item, str):
            if item not in PROBES:
                raise PluginError(f"unknown probe {item!r} (known: {', '.join(sorted(PROBES))})")
            chosen.append((item, PROBES[item]))
        else:
            chosen.append((getattr(item, "__name__", type(item).__name__), item))
    out = []
    for name, probe in chosen:
        try:
            result = probe(context)
            if not isinstance(result, ProbeResult):
                raise PluginError(f"returned {type(result).__name__}, not ProbeResult")
        except Exception as exc:
            result = ProbeResult(name, False, f"probe raised {type(exc).__name__}: {exc}")
        out.append(result)
    return tuple(out)


async def run_mutation(
    suite: Suite,
    config: MutationConfig | None = None,
    *,
    mutator: MutatorLike | None = None,
    on_plan: Callable[[int], None] | None = None,
    on_mutant: Callable[[MutantResult], None] | None = None,
) -> MutationReport:
    """Mutation-test ``suite``: baseline, mutants, verdicts, probes.

    Args:
        suite: A loaded suite (with its mutator, unless ``mutator`` is given).
        config: Operators, seed, evals, probes, budget (default: the suite's ``mutation:``
            section, see `suite_config`; without one, everything registered).
        mutator: Test this mutator instead of the suite's.
        on_plan: Called with the number of mutants once they are generated.
        on_mutant: Called with each mutant's result as it is decided (progress bars).

    Raises:
        MutationError: No mutator, or ``max_calls`` cannot cover the baseline.
        PluginError: An operator, eval or probe is unknown or broken.
        SuiteProblemsError: Without ``config``, the suite's ``mutation:`` section names an
            operator or eval that is not registered.
    """
    if config is None:
        config = suite_config(suite)
    chosen = mutator if mutator is not None else suite.mutator
    if chosen is None:
        raise MutationError(f"{suite.path}: no mutator to test (the suite was loaded without it)")
    real = as_mutator(chosen)
    cases = suite.cases if config.limit is None else suite.cases[: config.limit]
    job = _Mutation(suite, real, config, tuple(cases))
    base_cost = len(cases) * (int(is_llm_mutator(real)) + len(job.paid))
    if not job.budget.allows(base_cost):
        raise MutationError(
            f"--max-calls {config.max_calls} cannot cover the baseline, which needs {base_cost} "
            "paid calls (LLM mutator calls and is_llm evals on every case)"
        )
    job.budget.used += len(cases) * int(is_llm_mutator(real))
    results = await job.run_cases(real)
    scores = {c.id: score_case(c, results[c.id], job.scoring) for c in cases}
    summary = job.summarize(scores, "baseline")
    outcomes, _ = await job.grade(job.cheap + job.paid, results, [c.id for c in cases])
    base = Run(results, scores, summary, outcomes)
    failures = [f"threshold {t.describe()}" for t in summary.thresholds if not t.passed]
    failures += [
        f"{e.name} fails on case {s.case_id}" for s in scores.values() for e in s.failed_checks
    ]
    failures += [f"eval {n} fails on case {c}" for (c, n), o in outcomes.items() if not o.passed]
    system = System.from_cases(
        real,
        [(c.pre_state, c.expected_post_state) for c in cases],
        seed=config.seed,
        episodes=any(c.episode_id is not None for c in cases),
    )
    names = [name for name, _ in resolve_operators(config.operators)]
    mutants = generate_mutants(
        system, config.operators, seed=config.seed, max_mutants=config.max_mutants
    )
    if on_plan is not None:
        on_plan(len(mutants))
    out: list[MutantResult] = []
    for index, mutant in enumerate(mutants):
        result = await _mutant_result(job, base, index, mutant)
        out.append(result)
        if on_mutant is not None:
            on_mutant(result)
    context = ProbeContext(suite, job.scoring, tuple(cases), job.evals, summary, tuple(out))
    return MutationReport(
        suite_name=suite.name,
        seed=config.seed,
        operators=tuple(names),
        baseline=summary,
        baseline_failures=tuple(failures),
        results=tuple(out),
        probes=run_probes(context, config.probes),
        calls=job.budget.used,
        max_calls=config.max_calls,
        unwritten=_unwritten(system, cases, results),
        mode=job.mode,
    )


def _unwritten(
    system: System, cases: Sequence[Case], results: dict[str, CaseResult]
) -> tuple[str, ...]:
    """The fields the cases expect changed that no baseline output changes."""
    written: set[str] = set()
    for case in cases:
        post = results[case.id].post_state
        if post is None:
            continue
        pre = case.pre_state
        written.update(p for p in post.paths() if pre.candidates(p) != post.candidates(p))
        written.update(p for p in pre.paths() if p not in post)
    return tuple(p for p in system.changed_fields if p not in written)
