"""Running a mutation test: the baseline, then every mutant through the same suite and evals.

State mutants (output transforms of the suite's own mutator) are applied to the baseline's
outputs, so they cost no mutator call and differ from the baseline only by what the operator
changed; other mutants (prompt mutants) call their mutator on every case, which counts against
``max_calls`` when it is an LLM. Only cases whose output changed are scored again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stateval.errors import MutationError, PluginError
from stateval.evaluation import EvaluationContext, LLMEvaluator
from stateval.mutation._config import MutationConfig
from stateval.mutation._evals import Eval, EvalOutcome, eval_name, is_llm_eval, run_eval
from stateval.mutation._mutant import Mutant
from stateval.mutation._plugins import PROBES, generate_mutants, resolve_operators
from stateval.mutation._probes import Probe, ProbeContext, ProbeResult
from stateval.mutation._score import STATUSES, MutantResult, MutationScore, severity
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
from stateval.suite import Case, Suite

if TYPE_CHECKING:
    from stateval.mutation._experiments import MutationExperiments

__all__ = ["MutationConfig", "MutationReport", "run_mutation", "run_probes"]

_KILL_LINES = 10


@dataclass(frozen=True, slots=True)
class MutationReport:
    """A mutation test of a suite: the baseline, every mutant's result, the probes.

    Attributes:
        suite_name: The suite.
        seed: The seed used.
        operators: The operators that ran, by name.
        baseline: The baseline run's summary.
        baseline_failures: Verdict elements the baseline already fails (they cannot kill).
        results: Every mutant's result, in generation order.
        probes: Every probe's result.
        calls: Paid calls made (baseline included).
        max_calls: The budget, if any.
        phoenix: Where the baseline and mutants were logged in Phoenix, if they were
            (`stateval.mutation.log_mutation`).
        unwritten: Fields some case expects the mutator to change that its baseline output
            never changes (the fields state mutants of them find nothing to degrade in: they
            come out inert).
    """

    suite_name: str
    seed: int
    operators: tuple[str, ...]
    baseline: RunSummary
    baseline_failures: tuple[str, ...]
    results: tuple[MutantResult, ...]
    probes: tuple[ProbeResult, ...]
    calls: int = 0
    max_calls: int | None = None
    phoenix: MutationExperiments | None = None
    unwritten: tuple[str, ...] = ()

    def count(self, status: str) -> int:
        """How many mutants have ``status``."""
        return sum(1 for r in self.results if r.status == status)

    @property
    def score(self) -> MutationScore:
        """Killed over evaluated (killed, survived, equivalent and inert mutants)."""
        killed = self.count("killed")
        unseen = self.count("equivalent") + self.count("inert")
        return MutationScore.of(killed, killed + self.count("survived") + unseen)

    @property
    def effective_score(self) -> MutationScore:
        """Killed over the mutants the suite could observe (equivalent and inert ones left
        out)."""
        killed = self.count("killed")
        return MutationScore.of(killed, killed + self.count("survived"))

    @property
    def equivalents(self) -> tuple[MutantResult, ...]:
        """Mutants whose output changed where the suite cannot see it, in generation order."""
        return tuple(r for r in self.results if r.status == "equivalent")

    @property
    def survivors(self) -> tuple[MutantResult, ...]:
        """Surviving mutants, most severe first."""
        order = {"high": 0, "medium": 1, "low": 2}
        alive = [r for r in self.results if r.status == "survived"]
        return tuple(sorted(alive, key=lambda r: (order.get(r.severity or "low", 3), r.id)))

    def passes(self, fail_under: float | None) -> bool:
        """True unless ``fail_under`` (a percentage) is set and the mutation score is below it."""
        if fail_under is None:
            return True
        value = self.score.value
        return value is not None and value * 100 >= fail_under

    def to_dict(self) -> dict[str, Any]:
        """The JSON report (``--report-json``)."""
        mutants = [r.to_dict() for r in self.results]
        if self.phoenix is not None:
            for item in mutants:
                item["experiment_url"] = self.phoenix.url_of(item["id"])
        return {
            "suite": self.suite_name,
            "seed": self.seed,
            "operators": list(self.operators),
            "baseline": {
                "passed": self.baseline.passed,
                "failures": list(self.baseline_failures),
                "n_cases": self.baseline.n_cases,
                "overall_match_rate": self.baseline.overall_match_rate,
                "accuracy": self.baseline.accuracy,
                "joint_goal_accuracy": self.baseline.joint_goal_accuracy,
                "slot_accuracy": self.baseline.slot_accuracy,
                "thresholds": [t.to_dict() for t in self.baseline.thresholds],
            },
            "counts": {s: self.count(s) for s in STATUSES},
            "score": self.score.to_dict(),
            "effective_score": self.effective_score.to_dict(),
            "calls": self.calls,
            "max_calls": self.max_calls,
            "survivors": [r.id for r in self.survivors],
            "mutants": mutants,
            "probes": [p.to_dict() for p in self.probes],
            "phoenix": None if self.phoenix is None else self.phoenix.to_dict(),
            "unwritten_fields": list(self.unwritten),
        }


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

    async def run_cases(self, mutator: Mutator) -> dict[str, CaseResult]:
        evaluator = LLMEvaluator(self.scoring.policies)
        gate = asyncio.Semaphore(max(1, self.config.concurrency))

        async def one(case: Case) -> CaseResult:
            async with gate:
                context = EvaluationContext(
                    bind_case(mutator, case.id, case.actual_post_state),
                    case.pre_state,
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

        done = await asyncio.gather(*(one(c) for c in self.cases))
        return {r.case_id: r for r in done}

    def summarize(self, scores: dict[str, CaseScore], run_id: str) -> RunSummary:
        # With episodes, the summary carries their trajectory metrics (teacher-forced: every
        # turn ran from its gold pre-state), so episode thresholds take part in the verdict.
        return summarize(
            scores.values(),
            self.scoring,
            cases=self.cases,
            suite_name=self.suite.name,
            run_id=run_id,
            episodes=self.suite.episodes,
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
    rid = f"M{index + 1:03d}"
    mutator = mutant.system.mutator
    if mutator is None:
        return MutantResult(rid, mutant, "error", error="the mutant has no mutator to run")
    root, transforms = split_transforms(mutator)
    calls_before = job.budget.used
    if root is job.mutator:
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
        severity=severity(mutant, len(changed), len(job.cases)),
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
