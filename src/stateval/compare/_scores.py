"""The one scoring core: every state-level and per-field score of a case, from one comparison.

The runner, the Phoenix evaluators and the harness all score a case here, so ``stateval run``,
a Phoenix experiment and a harness report give the same numbers. Each builds one
`StateComparison` per case (and lets an LLM judge rule on it, if any), then calls
`score_comparison`; the delta view and the slot view are derived from that comparison, never
compared again.

The scores (``name``: what it measures):

- ``state_accuracy``: matching / expected fields (`view_accuracy`);
- ``weighted_state_accuracy`` (only when some policy sets a ``weight``): the expected fields'
  scores weighted by their policy's ``weight`` over the summed weights (an aligned list of
  records under ``score: similarity`` counts its list score);
- ``overall_match``: 1.0 when no field is mismatched, missing or extra;
- ``changed_fields_accuracy`` / ``preserved_fields_accuracy``: `view_accuracy` of the fields the
  case expects the mutator to change / to keep (needs the pre-state);
- ``slot_accuracy``: the fraction of slot-schema slots that are right (a slot neither state holds
  is right; needs a slot schema);
- ``critical_fields`` (only with critical fields): 1.0 when none of them (fields or sub-fields of
  lists of records) is wrong, missing or extra in the case;
- ``field:<path>``: 1.0 when the field matches, else 0.0 (its similarity under a
  ``score: similarity`` policy); its label is its status;
- ``field:<path>[].<key>``: for a list of records (``list_mode: align``), the share of its
  items whose sub-field ``key`` is correct, with the counts (correct, wrong, missing, extra)
  in its metadata; label ``correct`` or ``wrong``.

**The empty turn.** A case with no field at all (nothing expected, nothing produced) scores
``state_accuracy`` 1.0 with label ``empty``: the mutator did exactly what was asked. (The seed's
``accuracy_score`` alone reads 0.0 there, as seed 000 defines it.) A delta view with no field at
all (nothing to change, or nothing to keep) has no score, label ``empty``: it is vacuous on most
first turns and would only dilute the mean. Producing fields when none was expected scores 0.0
in every view.

Example:
    >>> from stateval.compare import compare_states
    >>> from stateval.state import InterpretiveState
    >>> pre = InterpretiveState.from_flat({"hotel.area": "north"})
    >>> want = InterpretiveState.from_flat({"hotel.area": "north", "hotel.stars": 4})
    >>> got = InterpretiveState.from_flat({"hotel.area": "south", "hotel.stars": 4})
    >>> scores = score_comparison(compare_states(want, got), pre=pre, expected=want)
    >>> [(s.name, s.score) for s in scores.case_level()]  # doctest: +NORMALIZE_WHITESPACE
    [('state_accuracy', 0.5), ('overall_match', 0.0), ('changed_fields_accuracy', 1.0),
     ('preserved_fields_accuracy', 0.0)]
    >>> scores.field("hotel.area").label
    'mismatched'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from stateval.compare._comparison import FieldComparison, FieldStatus, StateComparison
from stateval.compare._delta import DeltaComparison, split_delta
from stateval.compare._edits import SCORED_OPS, EditOp, FieldEdit, op_explanation
from stateval.compare._field_metrics import CaseMetrics, MetricOptions, case_metrics
from stateval.compare._field_policies import FieldPolicies, path_matches
from stateval.compare._policy import MatchPolicy
from stateval.compare._record_scores import item_metadata, sub_scores
from stateval.compare._score_value import FIELD_PREFIX, ScoreValue
from stateval.compare._slots import _SLOT_TEXT
from stateval.state import InterpretiveState

__all__ = [
    "STATE_SCORES",
    "CaseScores",
    "score_comparison",
    "view_accuracy",
]

#: The state-level scores, in the order `CaseScores.case_level` gives them.
STATE_SCORES = (
    "state_accuracy",
    "weighted_state_accuracy",
    "overall_match",
    "changed_fields_accuracy",
    "preserved_fields_accuracy",
    "slot_accuracy",
    "critical_fields",
)

_SHOW = 5


def view_accuracy(comparison: StateComparison) -> float | None:
    """matching / expected fields; 0.0 when only extra fields were produced; None when there is
    no field at all (the empty turn: ``state_accuracy`` reads it as 1.0).

    Example:
        >>> view_accuracy(StateComparison(())) is None
        True
    """
    if comparison.n_expected:
        return comparison.accuracy_score
    return 0.0 if comparison.paths else None


def _listed(label: str, paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:_SHOW])
    if len(paths) > _SHOW:
        shown += f" (+{len(paths) - _SHOW} more)"
    return f"{label}: {shown}"


@dataclass(frozen=True, slots=True)
class CaseScores:
    """Every score of one case, derived from one comparison (build it with `score_comparison`).

    Attributes:
        comparison: The case's comparison (with any LLM verdicts applied).
        policies: The field policies it was made under.
        delta: The delta view, when the pre-state was given (empty when the mutator failed:
            every delta score is then an error).
        slots: The case's metric outcomes over the slot schema, when one was given.
        failure: Why the mutator produced no state (every state-level score is then 0.0 with
            label ``error``), or None.
        judge_errors: Path -> why the LLM judge could not rule on it.
        judged: Paths the LLM judge ruled on.
        slot_paths: The scored schema slots.
        critical: Paths or globs of fields (and sub-fields) that must never be wrong.
        edits: Each field's expected and actual edit operation (`field_edits`), when known.
    """

    comparison: StateComparison
    policies: FieldPolicies
    delta: DeltaComparison | None = None
    slots: CaseMetrics | None = None
    failure: str | None = None
    judge_errors: Mapping[str, str] = field(default_factory=dict)
    judged: frozenset[str] = frozenset()
    slot_paths: frozenset[str] = frozenset()
    critical: tuple[str, ...] = ()
    edits: tuple[FieldEdit, ...] | None = None

    def _failed(self, name: str) -> ScoreValue:
        assert self.failure is not None
        return ScoreValue(name, 0.0, "error", self.failure)

    def _summary(self, comparison: StateComparison) -> str:
        parts = [f"{len(comparison.matching)} of {comparison.n_expected} expected fields match"]
        for status in ("mismatched", "missing", "extra"):
            paths: tuple[str, ...] = getattr(comparison, status)
            if paths:
                parts.append(_listed(status, paths))
        errors = [p for p in self.judge_errors if comparison.field(p) is not None]
        if errors:
            parts.append(_listed("judge_error", errors))
        return "; ".join(parts)

    def _counts(self, comparison: StateComparison) -> dict[str, Any]:
        meta: dict[str, Any] = dict(comparison.counts)
        judged = [p for p in self.judged if comparison.field(p) is not None]
        if judged:
            meta["judged"] = sorted(judged)
        return meta

    def state_accuracy(self) -> ScoreValue:
        """``state_accuracy``: `view_accuracy` of the whole comparison."""
        if self.failure is not None:
            return self._failed("state_accuracy")
        c = self.comparison
        accuracy = view_accuracy(c)
        label = None if accuracy is not None else "empty"
        score = 1.0 if accuracy is None else accuracy
        return ScoreValue("state_accuracy", score, label, self._summary(c), self._counts(c))

    def weighted_state_accuracy(self, *, always: bool = False) -> ScoreValue | None:
        """Expected fields' scores weighted by their policy's ``weight`` (None unless some
        policy sets a weight or ``always``)."""
        if not (always or self.policies.has_weights):
            return None
        if self.failure is not None:
            return self._failed("weighted_state_accuracy")
        c = self.comparison
        total = got = 0.0
        for path, status, made in c.items():
            if status is FieldStatus.EXTRA:
                continue
            weight = self.policies.for_path(path).weight
            total += weight
            # a field not made yet is of a strict policy: binary
            got += weight * (made.score if made is not None else status is FieldStatus.MATCHING)
        if not total:
            empty = not c.paths
            label = "empty" if empty else None
            return ScoreValue("weighted_state_accuracy", 1.0 if empty else 0.0, label, "")
        return ScoreValue(
            "weighted_state_accuracy",
            got / total,
            None,
            f"weighted {got:g} of {total:g}; {self._summary(c)}",
            {"weight_sum": total, **self._counts(c)},
        )

    def overall_match(self) -> ScoreValue:
        """``overall_match``: 1.0 / ``match`` when no field is mismatched, missing or extra."""
        if self.failure is not None:
            return self._failed("overall_match")
        c = self.comparison
        ok = c.overall_match
        label = "match" if ok else "mismatch"
        return ScoreValue("overall_match", float(ok), label, self._summary(c), self._counts(c))

    def _delta(self, name: str, view: StateComparison, what: str) -> ScoreValue:
        if self.failure is not None:
            return self._failed(name)
        if not view.paths:
            return ScoreValue(name, None, "empty", f"the case expects the mutator {what} no field")
        return ScoreValue(
            name, view_accuracy(view), None, f"{what}: {self._summary(view)}", self._counts(view)
        )

    def changed_fields_accuracy(self) -> ScoreValue | None:
        """Accuracy over the fields the case expects to change (None without a pre-state)."""
        if self.delta is None:
            return None
        return self._delta("changed_fields_accuracy", self.delta.changed, "to change")

    def preserved_fields_accuracy(self) -> ScoreValue | None:
        """Accuracy over the fields the case expects to be kept (None without a pre-state)."""
        if self.delta is None:
            return None
        return self._delta("preserved_fields_accuracy", self.delta.preserved, "to keep")

    def slot_accuracy(self) -> ScoreValue | None:
        """The fraction of schema slots that are right (None without a slot schema).

        A failed mutator call is scored against an empty state, as the run's slot metrics are.
        """
        m = self.slots
        if m is None:
            return None
        wrong = [p for p in m.wrong_slots if p in self.slot_paths]
        text = _SLOT_TEXT.format(right=m.right, total=m.total)
        if wrong:
            text += f"; {_listed('wrong', wrong)}"
        label = "error" if self.failure is not None else "some_wrong" if wrong else "all_right"
        meta = {
            "n_slots": m.total,
            "tp": m.tp,
            "fp": m.fp,
            "fn": m.fn,
            "precision": m.precision,
            "recall": m.recall,
            "f1": m.f1,
        }
        accuracy = m.slot_accuracy if m.slot_accuracy is not None else 0.0
        return ScoreValue("slot_accuracy", accuracy, label, text, meta)

    def case_level(self) -> list[ScoreValue]:
        """The state-level scores this case has, in `STATE_SCORES` order."""
        out = [self.state_accuracy()]
        weighted = self.weighted_state_accuracy()
        if weighted is not None:
            out.append(weighted)
        out.append(self.overall_match())
        for optional in (
            self.changed_fields_accuracy(),
            self.preserved_fields_accuracy(),
            self.slot_accuracy(),
            self.critical_fields(),
        ):
            if optional is not None:
                out.append(optional)
        return out

    def critical_fields(self) -> ScoreValue | None:
        """``critical_fields``: 1.0 / ``ok`` when no field or sub-field of `critical` is wrong,
        missing or extra in this case, else 0.0 / ``failed`` naming them (None without any)."""
        if not self.critical:
            return None
        if self.failure is not None:
            return self._failed("critical_fields")
        bad: list[str] = []
        for path, status, made in self.comparison.items():
            if status is not FieldStatus.MATCHING and _critical(path, self.critical):
                bad.append(f"{path} {status.value}")
            if made is not None and made.records is not None:
                subs = made.records.sub_outcomes()
                bad += [
                    f"{o.path} {o.status}"
                    for o in subs
                    if o.status != "correct" and _critical(o.path, self.critical)
                ]
        if not bad:
            return ScoreValue("critical_fields", 1.0, "ok", "no critical field in error")
        text = _listed("critical fields in error", list(dict.fromkeys(bad)))
        return ScoreValue("critical_fields", 0.0, "failed", text, {"errors": bad})

    def metric(self, name: str) -> ScoreValue | None:
        """The state-level score called ``name`` (None when this case does not have it).

        Raises:
            KeyError: ``name`` is not one of `STATE_SCORES`.
        """
        if name not in STATE_SCORES:
            raise KeyError(name)
        score: ScoreValue | None = getattr(self, name)()
        return score

    def field(self, path: str) -> ScoreValue:
        """``field:<path>``: 1.0 when the field matches, else 0.0, labelled with its status.

        A path the policies ignore scores None with label ``ignored``; a path neither state
        holds, None with label ``absent``; a field the judge could not rule on keeps its rule
        status's score with label ``judge_error``.
        """
        name = f"{FIELD_PREFIX}{path}"
        if self.policies.for_path(path).ignore:
            return ScoreValue(name, None, "ignored", f"the policy of {path!r} ignores it")
        fc = self.comparison.field(path)
        if fc is None:
            return ScoreValue(name, None, "absent", f"neither state holds {path!r}")
        return self._field(fc)

    def _field(self, fc: FieldComparison) -> ScoreValue:
        name = f"{FIELD_PREFIX}{fc.path}"
        explanation = fc.explanation
        if self.failure is not None:
            explanation = f"{self.failure}; {explanation}"
        score = fc.score
        meta: dict[str, Any] = {
            "path": fc.path,
            "status": fc.status.value,
            "expected": None if fc.expected is None else fc.expected.to_dict(),
            "actual": None if fc.actual is None else fc.actual.to_dict(),
        }
        if fc.similarity is not None:
            meta["similarity"] = fc.similarity
        if fc.records is not None:
            meta.update(item_metadata(fc.records))
        reason = self.judge_errors.get(fc.path)
        if reason is not None:
            return ScoreValue(
                name, score, "judge_error", f"{explanation}; judge error: {reason}", meta
            )
        judged = fc.path in self.judged
        return ScoreValue(name, score, fc.status.value, explanation, meta, judged)

    def edit_ops(self) -> list[ScoreValue]:
        """``op:keep``, ``op:add``, ``op:update``, ``op:delete``: of the fields the case
        expects that operation of, the fraction right, labelled ``ok`` or with the most frequent
        update error (``stale``...); only the operations the case expects (none without
        `edits`)."""
        if self.edits is None:
            return []
        by_op: dict[EditOp, list[FieldEdit]] = {}
        for edit in self.edits:
            by_op.setdefault(edit.expected, []).append(edit)
        out = []
        for op in SCORED_OPS:
            edits = by_op.get(op)
            if not edits:
                continue
            errors = Counter(e.error.value for e in edits if e.error is not None)
            label = errors.most_common(1)[0][0] if errors else "ok"
            right = sum(e.error is None for e in edits)
            out.append(
                ScoreValue(f"op:{op.value}", right / len(edits), label, op_explanation(op, edits))
            )
        return out

    def field_outcomes(self) -> list[tuple[str, float, str]]:
        """``(name, score, label)`` of each of `fields`' scores, without their explanations
        and metadata, and without making the comparison of a field decided by equality (what
        a diff of 100,000 cases reads)."""
        errors = self.judge_errors
        if not errors and self.comparison.unmade:  # the same few triples for every case
            return list(map(_strict_outcome, self.comparison.paths, self.comparison.statuses))
        out: list[tuple[str, float, str]] = []
        for path, status, made in self.comparison.items():
            label = "judge_error" if path in errors else status.value
            if made is None:  # a field not made yet is of a strict policy: binary
                out.append((f"{FIELD_PREFIX}{path}", float(status is FieldStatus.MATCHING), label))
                continue
            out.append((f"{FIELD_PREFIX}{path}", made.score, label))
            if made.records is not None:
                subs = sub_scores(made.records)
                out.extend((v.name, v.score or 0.0, v.label or "") for v in subs)
        return out

    def fields(self) -> list[ScoreValue]:
        """One ``field:<path>`` score per compared field, in comparison order; a list of
        records is followed by one ``field:<path>[].<key>`` score per sub-field."""
        out = []
        for fc in self.comparison.fields:
            out.append(self._field(fc))
            if fc.records is not None:
                out.extend(sub_scores(fc.records))
        return out


def score_comparison(
    comparison: StateComparison,
    *,
    policies: FieldPolicies | MatchPolicy | None = None,
    pre: InterpretiveState | None = None,
    expected: InterpretiveState | None = None,
    slots: Sequence[str] | None = None,
    in_play: Collection[str] | None = None,
    options: MetricOptions | None = None,
    failure: str | None = None,
    judge_errors: Mapping[str, str] | None = None,
    judged: Collection[str] = (),
    metrics: CaseMetrics | None = None,
    critical: Sequence[str] = (),
    edits: Sequence[FieldEdit] | None = None,
    delta: DeltaComparison | None = None,
) -> CaseScores:
    """Every score of one case from its comparison (compared once, judged if need be).

    Args:
        comparison: ``compare_states(expected, actual, policies)``, with any LLM verdicts
            applied (`StateComparison.with_judgement`).
        policies: The policies ``comparison`` was made under.
        pre: The case's pre-state: gives the delta view (needs ``expected``).
        expected: The expected post-state (for the delta view).
        slots: The slot schema: gives ``slot_accuracy`` (slots a policy ignores are dropped).
        in_play: The schema slots in play in this case (default: all); only they can be right
            by being absent from both states.
        options: Scorer conventions of the value precision / recall / F1 in its metadata.
        failure: Why the mutator produced no state (``comparison`` is then against an empty
            state), or None.
        judge_errors: Path -> why the judge could not rule on that field.
        judged: Paths the judge ruled on.
        metrics: The case's metric outcomes over ``slots`` when the caller already has them
            (``case_metrics(comparison, slots=..., in_play=..., options=...)`` with ignored
            slots dropped), so they are not counted again.
        critical: Paths or globs (``line_items[].quantity``) that must never be wrong: adds
            the ``critical_fields`` score.
        edits: The case's field edits (`field_edits`): give the ``op:<op>`` scores.
        delta: The delta view of ``comparison`` when the caller already split it
            (`StrictCase.delta`), so ``pre`` is not compared with ``expected`` again.

    Raises:
        ValueError: ``pre`` is given without ``expected``.
    """
    resolved = FieldPolicies.of(policies)
    if pre is not None and (delta is None or failure is not None):
        if expected is None:
            raise ValueError("the delta view needs the expected state with the pre-state")
        # a failed call's delta scores are errors whatever the split: its pre-state is not read
        delta = (
            split_delta(comparison, pre, expected, resolved)
            if failure is None
            else DeltaComparison(StateComparison(()), StateComparison(()))
        )
    slot_view = None
    scored: list[str] = []
    if slots is not None:
        if isinstance(slots, str):
            raise TypeError("slots must be a sequence of slot paths, not a string")
        scored = [s for s in dict.fromkeys(slots) if not resolved.for_path(s).ignore]
        slot_view = metrics or case_metrics(
            comparison, slots=scored, in_play=in_play, options=options
        )
    return CaseScores(
        comparison,
        resolved,
        delta,
        slot_view,
        failure,
        dict(judge_errors or {}),
        frozenset(judged),
        frozenset(scored),
        tuple(critical),
        None if edits is None or failure is not None else tuple(edits),
    )


@lru_cache(maxsize=8192)
def _strict_outcome(path: str, status: FieldStatus) -> tuple[str, float, str]:
    """`CaseScores.field_outcomes`' triple of a field a strict policy decided (shared)."""
    return f"{FIELD_PREFIX}{path}", float(status is FieldStatus.MATCHING), status.value


def _critical(path: str, patterns: Sequence[str]) -> bool:
    return any(path == p or path_matches(path, p) for p in patterns)
