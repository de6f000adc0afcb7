"""What would kill a survivor: the threshold, field policy, check or eval to add or tighten.

The suggestion is read off the difference between the baseline's and the mutant's runs:

1. a field's accuracy dropped: a minimum for that field (``thresholds.fields``), between the
   mutant's accuracy and the baseline's, so the baseline still passes;
2. many fields dropped: a minimum ``accuracy``;
3. only extra fields appeared: a minimum ``overall_match_rate`` (accuracy does not count extras);
4. a field went wrong in some cases and right in others, so its accuracy did not move: the
   errors cancel, and only a per-case verdict (an eval) can see it;
5. the output changed but no score moved: the field policy that hides the change (ignored field,
   ignored confidence, case normalisation, fuzzy or numeric tolerance), or, when only
   inference / message_id changed, the ``provenance`` eval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from stateval.compare import FieldPolicies, MatchPolicy
from stateval.episodes import EPISODE_METRICS
from stateval.mutation._evals import EvalOutcome
from stateval.run import CaseScore, FieldRow, RunSummary, Scoring
from stateval.state import InterpretiveState, ValueConfidence

__all__ = [
    "ChangedCase",
    "FieldChanges",
    "closest_call",
    "equivalence",
    "field_changes",
    "suggest",
    "what_it_wrote",
]

_GLOB = frozenset("*?[")
_MANY_FIELDS = 3


@dataclass(slots=True)
class FieldChanges:
    """How the mutant's outputs differ from the baseline's, per path.

    Attributes:
        kinds: path -> what changed: ``presence``, ``value``, ``case`` (letter case only),
            ``confidence``, ``provenance`` (inference / message_id only).
        right_before: Paths the baseline got right in at least one case where they changed.
        went_wrong: path -> cases where the baseline got it right and the mutant wrong.
        went_right: path -> cases where the baseline got it wrong and the mutant right.
    """

    kinds: dict[str, set[str]] = field(default_factory=dict)
    right_before: set[str] = field(default_factory=set)
    went_wrong: dict[str, list[str]] = field(default_factory=dict)
    went_right: dict[str, list[str]] = field(default_factory=dict)

    @property
    def cancelling(self) -> list[str]:
        """Paths that went wrong in some cases and right in others (their errors cancel)."""
        return [p for p in self.went_wrong if p in self.went_right]

    def add(self, path: str, kind: str) -> None:
        """Record a change of ``kind`` at ``path``."""
        self.kinds.setdefault(path, set()).add(kind)


def _kind(a: ValueConfidence | None, b: ValueConfidence | None) -> set[str]:
    if a is None or b is None:
        return {"presence"}
    kinds = set()
    if a.value != b.value:
        same_case = (
            isinstance(a.value, str)
            and isinstance(b.value, str)
            and a.value.casefold() == b.value.casefold()
        )
        kinds.add("case" if same_case else "value")
    if a.confidence != b.confidence:
        kinds.add("confidence")
    return kinds or {"provenance"}


@dataclass(frozen=True, slots=True)
class ChangedCase:
    """One case whose output the mutant changed: both outputs and both scores."""

    case_id: str
    base: InterpretiveState | None
    mutant: InterpretiveState | None
    base_score: CaseScore
    mutant_score: CaseScore


def _right(score: CaseScore, path: str) -> bool:
    compared = score.comparison.field(path)
    return compared is None or compared.matched


def field_changes(cases: Iterable[ChangedCase]) -> FieldChanges:
    """How the mutant's outputs differ from the baseline's over the changed cases."""
    out = FieldChanges()
    for case in cases:
        base, mutant = case.base, case.mutant
        if base is None or mutant is None:
            continue
        for path in dict.fromkeys([*base.paths(), *mutant.paths()]):
            if base.candidates(path) == mutant.candidates(path):
                continue
            for kind in _kind(base.best(path), mutant.best(path)):
                out.add(path, kind)
            before, after = _right(case.base_score, path), _right(case.mutant_score, path)
            if before:
                out.right_before.add(path)
            if before and not after:
                out.went_wrong.setdefault(path, []).append(case.case_id)
            elif after and not before:
                out.went_right.setdefault(path, []).append(case.case_id)
    return out


def _value(vc: ValueConfidence | None) -> str:
    return "nothing" if vc is None else repr(vc.value)


def what_it_wrote(cases: Iterable[ChangedCase]) -> str | None:
    """One example of what the mutant wrote, from the first changed case: the path, the value
    the mutant's output holds and the baseline's (``case c1: hotel.area 'nort' (baseline
    'north')``)."""
    for case in cases:
        base, mutant = case.base, case.mutant
        if mutant is None:
            error = case.mutant_score.result.error
            return f"case {case.case_id}: the call failed ({error})"
        if base is None:
            return f"case {case.case_id}: an output where the baseline's call failed"
        for path in dict.fromkeys([*base.paths(), *mutant.paths()]):
            before, after = base.best(path), mutant.best(path)
            if before == after:
                continue
            if before is not None and after is not None and before.value == after.value:
                if before.confidence != after.confidence:
                    return (
                        f"case {case.case_id}: {path} confidence {after.confidence:g} "
                        f"(baseline {before.confidence:g})"
                    )
                return f"case {case.case_id}: {path} with other inference / message_id"
            return f"case {case.case_id}: {path} {_value(after)} (baseline {_value(before)})"
    return None


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:2])
    return shown + (f" +{len(ids) - 2}" if len(ids) > 2 else "")


def _cancel_line(path: str, changes: FieldChanges) -> str:
    wrong, right = changes.went_wrong[path], changes.went_right[path]
    return (
        f"the errors cancel: {path} turns wrong in {len(wrong)} case(s) ({_ids(wrong)}) and "
        f"right in {len(right)} ({_ids(right)}), so its accuracy does not move and no "
        f"aggregate threshold can notice; an eval fn(output, case) that fails when {path} is "
        "wrong (`--eval module:fn`) sees it case by case"
    )


def _pattern(policies: FieldPolicies, path: str) -> str | None:
    if path in policies:
        return path
    return next((p for p in policies if _GLOB.intersection(p) and fnmatchcase(path, p)), None)


def _limit(base: float, mutant: float) -> float:
    """A round threshold in (mutant, base]: the baseline meets it, the mutant does not."""
    for places in (2, 3, 4):
        factor = 10**places
        candidate = math.floor(base * factor) / factor
        if mutant < candidate <= base:
            return candidate
    return base


def _fmt(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.1f}"


def _field_suggestion(path: str, base: FieldRow, mutant: FieldRow, scoring: Scoring) -> str:
    limit = _limit(base.accuracy, mutant.accuracy)
    text = (
        f"add thresholds.fields[{path!r}]: {_fmt(limit)} (baseline {base.accuracy:.3f}, "
        f"this mutant {mutant.accuracy:.3f})"
    )
    minimum = next(
        (
            (p, m)
            for p, m in scoring.thresholds.fields.items()
            if p == path or (_GLOB.intersection(p) and fnmatchcase(path, p))
        ),
        None,
    )
    if minimum is not None:
        text += f"; the existing minimum {minimum[1]} for {minimum[0]!r} lets it through"
    return text


def _aggregate(name: str, base: float, mutant: float, current: float | None) -> str:
    limit = _limit(base, mutant)
    verb = f"raise thresholds.{name} from {current}" if current is not None else "add thresholds."
    head = f"{verb} to {_fmt(limit)}" if current is not None else f"{verb}{name}: {_fmt(limit)}"
    return f"{head} (baseline {base:.3f}, this mutant {mutant:.3f})"


def _policy_hides(path: str, kinds: set[str], policies: FieldPolicies) -> str | None:
    policy: MatchPolicy = policies.for_path(path)
    pattern = _pattern(policies, path)
    where = f"policies[{pattern!r}]" if pattern is not None else "the default policy"
    if policy.ignore:
        return f"{where} has ignore: true, so {path} is never compared; give {path} its own policy"
    if "confidence" in kinds and policy.confidence == "ignore":
        return (
            f"{where} ignores confidence; give {path} a policy with confidence: exact "
            "(and a confidence_tolerance) if its confidence matters"
        )
    if "confidence" in kinds and policy.confidence_tolerance:
        return f"lower confidence_tolerance ({policy.confidence_tolerance}) of {where} for {path}"
    if "case" in kinds and "case" in policy.normalize:
        return (
            f"{where} normalises letter case, so this mutant is equivalent unless case matters "
            f"for {path}; if it does, give {path} a policy without 'case'"
        )
    if "value" in kinds or "case" in kinds:
        if policy.fuzzy is not None:
            return f"{where} accepts fuzzy matches >= {policy.fuzzy}; raise fuzzy for {path}"
        if policy.numeric_tolerance:
            return f"lower numeric_tolerance ({policy.numeric_tolerance}) of {where} for {path}"
        loose = {k: v for k, v in policy.to_dict().items() if k not in ("confidence",)}
        if loose:
            return f"{where} treats the changed values of {path} as equal ({loose})"
    return None


def suggest(
    base: RunSummary,
    mutant: RunSummary,
    scoring: Scoring,
    changes: FieldChanges,
) -> str:
    """One line: what to add to the suite so that this surviving mutant is killed (and, when
    it breaks episodes the baseline gets right, the minimum of an episode metric with a
    threshold (`stateval.episodes.EPISODE_METRICS`: ``episode_success``...) that would)."""
    line = _suggestion(base, mutant, scoring, changes)
    if base.episodes is None or mutant.episodes is None:
        return line
    for metric in EPISODE_METRICS.values():
        if not metric.threshold:
            continue
        before, after = metric.run_value(base.episodes), metric.run_value(mutant.episodes)
        if before is not None and after is not None and after < before:
            current = getattr(scoring.thresholds, metric.name, None)
            line += f"; or, over whole episodes, {_aggregate(metric.name, before, after, current)}"
            break
    return line


def _suggestion(
    base: RunSummary,
    mutant: RunSummary,
    scoring: Scoring,
    changes: FieldChanges,
) -> str:
    base_rows = {r.path: r for r in base.fields}
    dropped = sorted(
        (
            (base_rows[r.path].accuracy - r.accuracy, r.path, r)
            for r in mutant.fields
            if r.path in base_rows
            and r.n_expected
            and base_rows[r.path].n_expected
            and r.accuracy < base_rows[r.path].accuracy
        ),
        key=lambda t: (-t[0], t[1]),
    )
    thresholds = scoring.thresholds
    if len(dropped) >= _MANY_FIELDS and mutant.accuracy < base.accuracy:
        return _aggregate("accuracy", base.accuracy, mutant.accuracy, thresholds.accuracy)
    if dropped:
        _, path, row = dropped[0]
        return _field_suggestion(path, base_rows[path], row, scoring)
    if mutant.overall_match_rate < base.overall_match_rate:
        extras = [
            r.path
            for r in mutant.fields
            if r.extra > base_rows.get(r.path, r).extra or (r.path not in base_rows and r.extra)
        ]
        text = _aggregate(
            "overall_match_rate",
            base.overall_match_rate,
            mutant.overall_match_rate,
            thresholds.overall_match_rate,
        )
        if extras:
            text += f"; it adds {', '.join(extras[:3])}, which accuracy does not count"
        return text
    for name in ("joint_goal_accuracy", "slot_accuracy"):
        b, m = getattr(base, name), getattr(mutant, name)
        if b is not None and m is not None and m < b:
            return _aggregate(name, b, m, getattr(thresholds, name))
    cancelling = changes.cancelling
    if cancelling:
        return _cancel_line(cancelling[0], changes)
    hidden = [
        line
        for path, kinds in changes.kinds.items()
        if (line := _policy_hides(path, kinds, scoring.policies)) is not None
    ]
    if hidden:
        return hidden[0]
    if changes.kinds and all(k == {"provenance"} for k in changes.kinds.values()):
        return (
            "no comparison reads inference or message_id; add an eval that does, e.g. "
            "`--eval provenance` (stateval.mutation.provenance_eval)"
        )
    wrong = [p for p in changes.kinds if p not in changes.right_before]
    if wrong and len(wrong) == len(changes.kinds):
        return (
            f"the baseline already gets {', '.join(wrong[:3])} wrong wherever this mutant changes "
            "it, so no score can drop; add cases where the mutator gets it right"
        )
    paths = ", ".join(list(changes.kinds)[:3]) or "the changed outputs"
    return f"no threshold, check or eval reads what changed ({paths}); add a check on it"


def equivalence(changes: FieldChanges, scoring: Scoring) -> str:
    """One line: why an equivalent mutant's changes are invisible to the suite (the field
    policy that hides them, or a field the baseline already gets wrong), and what would make
    the suite see them if they matter."""
    wrong = [p for p in changes.kinds if p not in changes.right_before]
    hidden = [
        line
        for path, kinds in changes.kinds.items()
        if path in changes.right_before
        and (line := _policy_hides(path, kinds, scoring.policies)) is not None
    ]
    if hidden:
        return hidden[0]
    if changes.kinds and all(k == {"provenance"} for k in changes.kinds.values()):
        return (
            "only inference or message_id changed and no comparison reads them; if they "
            "matter, add an eval that does, e.g. `--eval provenance`"
        )
    if wrong:
        return (
            f"the baseline already gets {', '.join(wrong[:3])} wrong wherever this mutant "
            "changes it, and it stays wrong; add cases where the mutator gets it right"
        )
    paths = ", ".join(list(changes.kinds)[:3]) or "the changed outputs"
    return f"no field status, check or eval outcome changed ({paths})"


def closest_call(
    base: RunSummary,
    summary: RunSummary,
    base_outcomes: Mapping[tuple[str, str], EvalOutcome],
    outcomes: Mapping[tuple[str, str], EvalOutcome],
) -> str | None:
    """Of the thresholds the mutant moved towards failing and its passing eval outcomes with a
    score and threshold, the one with the smallest margin, as one line."""
    best: tuple[float, str] | None = None
    before = {t.name: t.value for t in base.thresholds}
    for t in summary.thresholds:
        old = before.get(t.name)
        if t.value is None or old is None or not t.passed:
            continue
        margin = t.value - t.limit if t.kind == "min" else t.limit - t.value
        moved = t.value < old if t.kind == "min" else t.value > old
        if moved and (best is None or margin < best[0]):
            best = (margin, f"threshold {t.describe()} (baseline {old:.3f})")
    for (case_id, name), outcome in outcomes.items():
        eval_margin = outcome.margin
        old_score = getattr(base_outcomes.get((case_id, name)), "score", None)
        if not outcome.passed or eval_margin is None or outcome.score is None:
            continue
        if old_score is None or outcome.score >= old_score:
            continue
        if best is None or eval_margin < best[0]:
            best = (
                eval_margin,
                f"eval {name} on case {case_id}: {outcome.score} vs threshold "
                f"{outcome.threshold} (baseline {old_score})",
            )
    return None if best is None else best[1]
