"""Verdicts: how a mutant's run differs from the baseline's, and which verdict elements it fails.

A verdict element is a threshold (``threshold:<name>``), a check (``check:<path>``) or an eval
(``eval:<name>``). An element kills a mutant when it fails on the mutant's run but passed on the
baseline's: thresholds over the whole run, checks and evals on the same case.

A mutant whose output changed is *unobserved* (equivalent under the suite) when, on every
changed case, each field's comparison status, each case-level score, each check's outcome and
each eval's outcome equal the baseline's: nothing the suite reads can tell the two apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stateval.errors import MutationError
from stateval.mutation._evals import EvalOutcome
from stateval.mutation._system import EpisodeTransform
from stateval.run import CaseResult, CaseScore, RunSummary
from stateval.state import InterpretiveState
from stateval.suite import Case

__all__ = [
    "Outcomes",
    "Run",
    "eval_kills",
    "eval_scores",
    "headline",
    "kills_of",
    "same",
    "transformed",
    "unobserved",
]

Outcomes = dict[tuple[str, str], EvalOutcome]
"""Eval outcomes keyed by ``(case_id, eval_name)``."""


@dataclass(frozen=True, slots=True)
class Run:
    """One run of the suite (baseline or mutant): results, scores, summary, eval outcomes."""

    results: dict[str, CaseResult]
    scores: dict[str, CaseScore]
    summary: RunSummary
    outcomes: Outcomes


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def transformed(
    base: dict[str, CaseResult], cases: Sequence[Case], transforms: Sequence[Any]
) -> dict[str, CaseResult]:
    """The baseline's results with every output passed through ``transforms`` in order.

    An `EpisodeTransform` gets each episode's turns at once, in turn order (the turns whose
    mutator call failed left out); a transform that raises, or returns no state, fails the
    case (or every turn of the episode) it was given.
    """
    posts: dict[str, InterpretiveState] = {
        c.id: post.copy() for c in cases if (post := base[c.id].post_state) is not None
    }
    errors: dict[str, Exception] = {}
    episodes = _episodes(cases)
    for transform in transforms:
        episodic = isinstance(transform, EpisodeTransform)
        for group in episodes if episodic else [[c] for c in cases]:
            live = [c for c in group if c.id in posts and c.id not in errors]
            if not live:
                continue
            try:
                if episodic and live[0].episode_id is not None:
                    turns = [(c.pre_state.copy(), c.input, posts[c.id]) for c in live]
                    new = list(transform.over_episode(turns))
                    if len(new) != len(live):
                        raise MutationError(
                            f"an episode transform returned {len(new)} states for {len(live)} turns"
                        )
                else:
                    new = [transform(c.pre_state.copy(), c.input, posts[c.id]) for c in live]
                for case, post in zip(live, new, strict=True):
                    if not isinstance(post, InterpretiveState):
                        raise MutationError(f"an output transform returned {type(post).__name__}")
                    posts[case.id] = post
            except Exception as exc:
                errors.update((c.id, exc) for c in live)
    out: dict[str, CaseResult] = {}
    for case in cases:
        result = base[case.id]
        if case.id in errors:
            failed = errors[case.id]
            out[case.id] = CaseResult(
                case.id, None, _one_line(failed), type(failed).__name__, result.time_used
            )
        elif case.id in posts:
            out[case.id] = CaseResult(case.id, posts[case.id], None, None, result.time_used)
        else:
            out[case.id] = result
    return out


def _episodes(cases: Sequence[Case]) -> list[list[Case]]:
    """The cases grouped by episode, each episode in turn order; a case outside any episode is
    a group of its own."""
    groups: dict[object, list[Case]] = {}
    for index, case in enumerate(cases):
        key: object = index if case.episode_id is None else ("episode", case.episode_id)
        groups.setdefault(key, []).append(case)
    return [
        sorted(group, key=lambda c: -1 if c.turn_index is None else c.turn_index)
        for group in groups.values()
    ]


def same(a: CaseResult, b: CaseResult) -> bool:
    return a.post_state == b.post_state and a.error == b.error


def headline(s: RunSummary) -> tuple[Any, ...]:
    return (s.overall_match_rate, s.accuracy, s.joint_goal_accuracy, s.slot_accuracy, s.n_errors)


def eval_scores(score: CaseScore) -> list[tuple[str, float]]:
    return [(e.name, e.score) for e in score.evaluations]


def kills_of(
    base: Run, summary: RunSummary, scores: dict[str, CaseScore], changed: Sequence[str]
) -> tuple[list[str], list[str]]:
    kills: list[str] = []
    keys: dict[str, None] = {}
    failing = {t.name for t in base.summary.thresholds if not t.passed}
    for t in summary.thresholds:
        if not t.passed and t.name not in failing:
            kills.append(f"threshold {t.describe()}")
            keys[f"threshold:{t.name}"] = None
    for case_id in changed:
        before = {e.name for e in base.scores[case_id].failed_checks}
        for e in scores[case_id].failed_checks:
            if e.name not in before:
                kills.append(f"{e.name} fails on case {case_id}: {e.explanation}")
                keys[e.name] = None
    return kills, list(keys)


def eval_kills(base: Outcomes, outcomes: Outcomes, kills: list[str], keys: list[str]) -> None:
    for (case_id, name), outcome in outcomes.items():
        before = base.get((case_id, name))
        if outcome.passed or before is None or not before.passed:
            continue
        shown = "" if outcome.score is None else f" (score {outcome.score} vs {outcome.threshold})"
        kills.append(f"eval {name} fails on case {case_id}{shown}")
        if f"eval:{name}" not in keys:
            keys.append(f"eval:{name}")


def _observed(score: CaseScore) -> tuple[object, ...]:
    """What the suite can see of one case: field statuses, case scores, check outcomes."""
    statuses = {f.path: f.status for f in score.comparison.fields}
    case_scores = {
        e.name: e.score for e in score.evaluations if not e.name.startswith(("field:", "check:"))
    }
    checks = {e.name: e.score >= 1 for e in score.evaluations if e.name.startswith("check:")}
    return score.ok, statuses, case_scores, checks


def unobserved(
    base: Run, scores: dict[str, CaseScore], outcomes: Outcomes, changed: Sequence[str]
) -> bool:
    """True when nothing the suite observes differs from the baseline on the ``changed`` cases:
    field statuses, case-level scores, check outcomes and every eval's pass/fail."""
    if any(_observed(scores[c]) != _observed(base.scores[c]) for c in changed):
        return False
    cases = set(changed)
    wanted = [k for k in base.outcomes if k[0] in cases]
    return all(k in outcomes and outcomes[k].passed == base.outcomes[k].passed for k in wanted)
