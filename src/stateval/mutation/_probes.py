"""Probes: each rates the evaluator suite along one dimension (seed 002). No composite score.

A probe is ``fn(config) -> ProbeResult``; ``config`` is a `ProbeContext` (the suite, its
scoring, the evals, and, after a mutation run, the baseline summary and every mutant's result).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from stateval.compare import compare_delta, path_matches
from stateval.mutation._evals import Eval
from stateval.mutation._score import MutantResult
from stateval.run import RunSummary, Scoring
from stateval.suite import Case, Suite

__all__ = [
    "BUILTIN_PROBES",
    "LOOSE_HEADROOM",
    "Probe",
    "ProbeContext",
    "ProbeResult",
    "delta_cases",
    "discrimination",
    "field_coverage",
    "negative_case",
    "redundant_checks",
    "threshold_calibration",
]

LOOSE_HEADROOM = 0.05
"""A threshold this far below the baseline's value lets real regressions through."""
_GLOB = frozenset("*?[")
_SHOW = 5


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One probe's verdict on the suite.

    Args:
        name: The probe.
        ok: Whether the suite is fine in this respect.
        summary: One line.
        detail: What to do about it, when not ok.
        metrics: Numbers behind the verdict.
    """

    name: str
    ok: bool
    summary: str
    detail: str | None = None
    metrics: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "name": self.name,
            "ok": self.ok,
            "summary": self.summary,
            "detail": self.detail,
            "metrics": dict(self.metrics),
        }


@dataclass(frozen=True, slots=True)
class ProbeContext:
    """What a probe sees (the ``config`` of ``fn(config)``).

    Attributes:
        suite: The suite under review.
        scoring: Its policies, slots, checks and thresholds.
        cases: The cases run (all the suite's unless limited).
        evals: The evals run with it.
        baseline: The baseline run's summary (None before a mutation run).
        results: Every mutant's result (empty before a mutation run).
    """

    suite: Suite
    scoring: Scoring
    cases: tuple[Case, ...]
    evals: tuple[Eval, ...] = ()
    baseline: RunSummary | None = None
    results: tuple[MutantResult, ...] = ()

    @classmethod
    def of(cls, suite: Suite) -> ProbeContext:
        """The context of a suite before any run: its scoring and all its cases."""
        return cls(suite, Scoring.from_suite(suite), tuple(suite.cases))


Probe: TypeAlias = Callable[[ProbeContext], ProbeResult]
"""``fn(config) -> ProbeResult``."""


def _matches(path: str, patterns: Any) -> bool:
    return any(p == path or (_GLOB.intersection(p) and path_matches(path, p)) for p in patterns)


def _own(path: str, fields: Any, checks: Any, critical: list[str]) -> bool:
    """A threshold, a check or a critical-fields entry reads ``path`` itself (a critical
    sub-field of its items, ``line_items[].quantity``, reads ``line_items``)."""
    return (
        _matches(path, fields)
        or _matches(path, checks)
        or _matches(path, critical)
        or any(p.startswith(f"{path}[].") for p in critical)
    )


def _listing(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOW])
    return shown + (f" (+{len(items) - _SHOW} more)" if len(items) > _SHOW else "")


def field_coverage(config: ProbeContext) -> ProbeResult:
    """Every expected field is read by the verdict: its own threshold or check, or an aggregate."""
    fields = list(dict.fromkeys(p for c in config.cases for p in c.expected_post_state.paths()))
    scoring = config.scoring
    t = scoring.thresholds
    aggregate_all = (
        t.accuracy is not None
        or t.overall_match_rate is not None
        or t.mean_weighted_state_accuracy is not None
    )
    slot_aggregate = t.joint_goal_accuracy is not None or t.slot_accuracy is not None
    slots = set(scoring.slots or ())
    own, aggregate, uncovered = [], [], []
    for path in fields:
        if scoring.policies.for_path(path).ignore:
            uncovered.append(path)
        elif _own(path, t.fields, scoring.checks, t.critical_fields):
            own.append(path)
        elif aggregate_all or (slot_aggregate and path in slots):
            aggregate.append(path)
        else:
            uncovered.append(path)
    n = len(fields)
    summary = (
        f"{n - len(uncovered)} of {n} expected fields are read by the verdict "
        f"({len(own)} by their own threshold or check, {len(aggregate)} only by aggregates)"
    )
    detail = None
    if uncovered:
        detail = (
            f"Not read by any threshold or check: {_listing(uncovered)}. Add "
            "thresholds.fields entries or checks for them (or an accuracy threshold)."
        )
    elif aggregate:
        detail = (
            f"Only aggregates read {_listing(aggregate)}: one of them can regress a lot before "
            "an aggregate threshold notices; give the important ones thresholds.fields entries."
        )
    return ProbeResult(
        "field_coverage",
        not uncovered,
        summary,
        detail,
        {
            "n_fields": n,
            "n_own": len(own),
            "n_aggregate_only": len(aggregate),
            "n_uncovered": len(uncovered),
        },
    )


def _changes(config: ProbeContext, case: Case) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The paths ``case`` expects changed and kept, under the suite's own policies (so a
    pre-state ``"drama"`` and an expected ``["drama"]`` are kept when the policy matches them)."""
    pre, expected = case.pre_state, case.expected_post_state
    delta = compare_delta(pre, expected, expected, config.scoring.policies)
    return delta.changed_paths, delta.preserved_paths


def negative_case(config: ProbeContext) -> ProbeResult:
    """A case whose input should change nothing (expected post-state equals the pre-state under
    the suite's policies)."""
    ids = [c.id for c in config.cases if not _changes(config, c)[0]]
    if ids:
        return ProbeResult(
            "negative_case",
            True,
            f"{len(ids)} case(s) expect no change: {_listing(ids)}",
            None,
            {"n_negative": len(ids)},
        )
    return ProbeResult(
        "negative_case",
        False,
        "no case expects the input to change nothing",
        "Add a case whose input carries no update (small talk, an off-topic message) and whose "
        "expected post-state equals its pre-state, to catch a mutator that invents fields.",
        {"n_negative": 0},
    )


def delta_cases(config: ProbeContext) -> ProbeResult:
    """Cases that start from a non-empty state, change some fields and keep others (whether a
    field changed is decided by its policy, as the delta view decides it)."""
    deltas, corrections = [], []
    for case in config.cases:
        pre, expected = case.pre_state, case.expected_post_state
        if not len(pre):
            continue
        changed, kept = _changes(config, case)
        if changed and kept:
            deltas.append(case.id)
        if any(p in pre and p in expected for p in changed):
            corrections.append(case.id)
    metrics = {"n_delta": len(deltas), "n_corrections": len(corrections)}
    if not deltas:
        return ProbeResult(
            "delta_cases",
            False,
            "no case changes some fields of a non-empty pre-state while keeping others",
            "Add cases with a filled pre-state, so dropping kept fields or clobbering them is "
            "caught (preserved_fields_accuracy), and cases that correct an earlier value.",
            metrics,
        )
    summary = f"{len(deltas)} delta case(s), {len(corrections)} correcting a pre-state value"
    detail = None
    if not corrections:
        detail = "No case corrects a value already in the pre-state; add one."
    return ProbeResult("delta_cases", bool(corrections), summary, detail, metrics)


def threshold_calibration(config: ProbeContext) -> ProbeResult:
    """Thresholds the baseline meets, close to its values (a loose one lets regressions pass)."""
    baseline = config.baseline
    if baseline is None:
        return ProbeResult(
            "threshold_calibration", True, "not assessed (needs the baseline run)", None, {}
        )
    rows = baseline.thresholds
    # max_error_rate (on by default) only fails a run whose calls fail, never a wrong state
    if not any(r.name != "error_rate" for r in rows):
        return ProbeResult(
            "threshold_calibration",
            False,
            "the suite has no thresholds on its scores: its verdict passes whatever state "
            "the mutator returns",
            "Add thresholds (overall_match_rate, accuracy, fields[...]) just below the "
            "baseline's values.",
            {"n_thresholds": len(rows)},
        )
    failing = [r.describe() for r in rows if not r.passed]
    loose = []
    headrooms = []
    for r in rows:
        if r.value is None or not r.passed:
            continue
        headroom = r.value - r.limit if r.kind == "min" else r.limit - r.value
        headrooms.append(headroom)
        if headroom > LOOSE_HEADROOM:
            loose.append(f"{r.name} {r.value:.3f} vs {r.limit:.3f}")
    parts = [f"{len(rows)} threshold(s)"]
    if failing:
        parts.append(f"{len(failing)} failing on the baseline ({_listing(failing)})")
    if loose:
        parts.append(f"{len(loose)} loose ({_listing(loose)})")
    detail = None
    if failing:
        detail = "A threshold the baseline already fails cannot kill any mutant."
    elif loose:
        detail = f"Tighten thresholds to within {LOOSE_HEADROOM} of the baseline's values."
    return ProbeResult(
        "threshold_calibration",
        not failing and not loose,
        "; ".join(parts),
        detail,
        {
            "n_thresholds": len(rows),
            "n_failing": len(failing),
            "n_loose": len(loose),
            "max_headroom": max(headrooms, default=0.0),
        },
    )


def redundant_checks(config: ProbeContext) -> ProbeResult:
    """Verdict elements whose kills another element's kills include (they add nothing)."""
    if not config.results:
        return ProbeResult(
            "redundant_checks", True, "not assessed (needs mutant results)", None, {}
        )
    kills: dict[str, set[str]] = {}
    for result in config.results:
        for key in result.killed_by:
            kills.setdefault(key, set()).add(result.id)
    subsumed = []
    for a, ka in sorted(kills.items()):
        for b, kb in sorted(kills.items()):
            if a != b and ka <= kb and (ka != kb or a > b):
                subsumed.append(f"{a} (covered by {b})")
                break
    metrics = {"n_killing": len(kills), "n_subsumed": len(subsumed)}
    if not subsumed:
        return ProbeResult(
            "redundant_checks",
            True,
            f"{len(kills)} verdict element(s) kill; none redundant",
            None,
            metrics,
        )
    return ProbeResult(
        "redundant_checks",
        False,
        f"{len(subsumed)} of {len(kills)} killing verdict element(s) kill nothing the others "
        f"miss: {_listing(subsumed)}",
        "Redundant checks cost time (and calls, for LLM evals) without catching anything more; "
        "drop them or point them at fields nothing else reads. LLM evals only run on mutants "
        "that cheap checks did not kill, so they can look redundant when they are not.",
        metrics,
    )


def discrimination(config: ProbeContext) -> ProbeResult:
    """How often the suite's scores move when the output changes, and how often it fails.

    Equivalent mutants (the output changed, but no field status, check or eval outcome did) are
    left out and counted apart: the suite's own policies declare those changes harmless.
    """
    changed = [r for r in config.results if r.status in ("killed", "survived")]
    equivalent = [r for r in config.results if r.status == "equivalent"]
    aside = (
        f"; {len(equivalent)} equivalent under the suite's policies (not counted)"
        if equivalent
        else ""
    )
    if not changed:
        return ProbeResult(
            "discrimination",
            True,
            f"not assessed (no mutant changed what the suite observes{aside})",
            None,
            {"n_changed": 0, "n_equivalent": len(equivalent)},
        )
    moved = [r for r in changed if r.moved]
    killed = [r for r in changed if r.killed]
    invisible = [f"{r.id} {r.mutant.description}" for r in changed if not r.moved]
    base = config.baseline
    drops = [
        base.accuracy - r.summary.accuracy
        for r in changed
        if base is not None and r.summary is not None
    ]
    metrics = {
        "n_changed": len(changed),
        "n_moved": len(moved),
        "n_killed": len(killed),
        "n_equivalent": len(equivalent),
        "discrimination": len(moved) / len(changed),
        "mean_accuracy_drop": sum(drops) / len(drops) if drops else 0.0,
    }
    summary = (
        f"scores moved for {len(moved)} of {len(changed)} mutants that changed what the suite "
        f"observes; the verdict failed for {len(killed)}{aside}"
    )
    detail = None
    if invisible:
        detail = f"Invisible to every score: {_listing(invisible)}."
    elif len(killed) < len(moved):
        detail = "Scores saw every change, but thresholds tolerated some: tighten them."
    return ProbeResult("discrimination", not invisible, summary, detail, metrics)


BUILTIN_PROBES: dict[str, Probe] = {
    "field_coverage": field_coverage,
    "negative_case": negative_case,
    "delta_cases": delta_cases,
    "threshold_calibration": threshold_calibration,
    "redundant_checks": redundant_checks,
    "discrimination": discrimination,
}
"""The built-in probes, by name."""
