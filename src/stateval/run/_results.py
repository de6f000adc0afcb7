"""What a run records per case: the mutator's result (journaled) and its scores (recomputable)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from stateval.compare import (
    CaseMetrics,
    CaseScores,
    FieldComparison,
    FieldEdit,
    FieldPolicies,
    StateComparison,
    StrictCase,
    field_edits,
)
from stateval.errors import JournalError, StatevalError
from stateval.state import InterpretiveState

if TYPE_CHECKING:
    from stateval.suite import Case

__all__ = ["CaseResult", "CaseScore", "Evaluation", "Judgement"]


class _MetricScoring(Protocol):
    """What `CaseScore.metrics_under` needs of a `stateval.run.Scoring`."""

    def case_metrics(self, comparison: StateComparison, case: Case) -> CaseMetrics:
        """The case's metric outcomes from its comparison."""
        ...

    @property
    def policies(self) -> FieldPolicies:
        """How each field is compared."""
        ...


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Judgement:
    """The LLM judge's verdict on one field of one case, journaled with the case's result so
    that resuming or rescoring a run does not ask the judge again.

    Attributes:
        path: The field.
        rubric: The policy's rubric when the judge was asked.
        expected: The expected value judged.
        actual: The mutator's value judged.
        label: ``equivalent``, ``different`` or ``judge_error``.
        explanation: The judge's reason, or what went wrong.
    """

    path: str
    rubric: str | None
    expected: Any
    actual: Any
    label: Literal["equivalent", "different", "judge_error"]
    explanation: str

    @property
    def ok(self) -> bool:
        """False for a ``judge_error``."""
        return self.label != "judge_error"

    def answers(self, request: FieldComparison) -> bool:
        """Whether this verdict rules on ``request`` (same field, rubric and values)."""
        if request.expected is None or request.actual is None or request.path != self.path:
            return False
        rubric = request.policy.rubric if request.policy is not None else None
        return (
            rubric == self.rubric
            and _canonical(request.expected.value) == _canonical(self.expected)
            and _canonical(request.actual.value) == _canonical(self.actual)
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in the journal."""
        return {
            "path": self.path,
            "rubric": self.rubric,
            "expected": self.expected,
            "actual": self.actual,
            "label": self.label,
            "explanation": self.explanation,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Judgement:
        """Inverse of `to_dict` (raises KeyError or ValueError when malformed)."""
        label = data["label"]
        if label not in ("equivalent", "different", "judge_error"):
            raise ValueError(f"unknown judge label {label!r}")
        return cls(
            path=str(data["path"]),
            rubric=data.get("rubric"),
            expected=data.get("expected"),
            actual=data.get("actual"),
            label=label,
            explanation=str(data.get("explanation") or ""),
        )


@dataclass(frozen=True, slots=True, init=False)
class CaseResult:
    """What the mutator did on one case; this is what the journal keeps, so a run can be
    resumed or rescored without calling the mutator again.

    Attributes:
        case_id: The case.
        post_state: The state the mutator returned, or None when it failed.
        error: One line saying why the mutator failed, or None.
        error_type: The exception's class name, or None.
        time_used: Seconds the mutator call took (monotonic clock).
        trace_id: The trace of the mutator call's span, when traced.
        span_id: The mutator call's span, when traced (field annotations go on it).
        raw_output: An LLM's raw reply when the mutator rejected it.
        started_at: When the call started (ISO 8601, UTC).
        judgements: The LLM judge's verdicts on this case's judged fields.
        repetition: Which repetition of the case this is (``stateval run --repeat``), from 1.
        pre_state: The pre-state the mutator was given when it was not the case's own (a
            free-running turn gets the mutator's post-state of the turn before); None: the
            case's ``pre_state``. Delta scores are taken against it.
    """

    case_id: str
    post_state: InterpretiveState | None
    error: str | None
    error_type: str | None
    time_used: float
    trace_id: str | None = None
    raw_output: str | None = None
    started_at: str | None = None
    judgements: tuple[Judgement, ...] = ()
    span_id: str | None = None
    repetition: int = 1
    pre_state: InterpretiveState | None = None

    # Each field set through its slot (a run makes one per case, rescoring reads one per case
    # back: the frozen dataclass ``__init__``, ``object.__setattr__`` per field, cost 1.6 times
    # as much).
    def __init__(
        self,
        case_id: str,
        post_state: InterpretiveState | None,
        error: str | None,
        error_type: str | None,
        time_used: float,
        trace_id: str | None = None,
        raw_output: str | None = None,
        started_at: str | None = None,
        judgements: tuple[Judgement, ...] = (),
        span_id: str | None = None,
        repetition: int = 1,
        pre_state: InterpretiveState | None = None,
    ) -> None:
        s = _RESULT_SLOTS
        s[0](self, case_id), s[1](self, post_state), s[2](self, error), s[3](self, error_type)
        s[4](self, time_used), s[5](self, trace_id), s[6](self, raw_output)
        s[7](self, started_at), s[8](self, judgements), s[9](self, span_id)
        s[10](self, repetition), s[11](self, pre_state)

    @property
    def ok(self) -> bool:
        """True when the mutator returned a state."""
        return self.error is None and self.post_state is not None

    def failed(self, stage: str, exc: BaseException) -> CaseResult:
        """This result made the case's error: ``stage`` (``judging``, ``scoring``) failed
        with ``exc``. The error is one line of at most 500 characters; the post-state is
        dropped, so the case is scored as a failed call."""
        text = " ".join(f"{stage} failed: {type(exc).__name__}: {exc}".split())
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")[:500]
        return replace(self, post_state=None, error=text, error_type=type(exc).__name__)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in the journal (``repetition`` only after the first,
        ``pre_state`` only when set)."""
        record = {
            "case_id": self.case_id,
            "post_state": None if self.post_state is None else self.post_state.to_dict(),
            "error": self.error,
            "error_type": self.error_type,
            "time_used": self.time_used,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "raw_output": self.raw_output,
            "started_at": self.started_at,
            "judgements": [j.to_dict() for j in self.judgements] if self.judgements else [],
        }
        if self.repetition == 1 and self.pre_state is None:
            return record
        extra: dict[str, Any] = {"repetition": self.repetition} if self.repetition > 1 else {}
        if self.pre_state is not None:
            extra["pre_state"] = self.pre_state.to_dict()
        return {**extra, **record}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseResult:
        """Inverse of `to_dict`.

        Raises:
            JournalError: The record is malformed.
        """
        try:
            post = data["post_state"]
            pre = data.get("pre_state")
            judged = data.get("judgements")
            get = data.get
            return cls(  # positional, in field order (once a case when rescoring)
                str(data["case_id"]),
                None if post is None else InterpretiveState.from_dict(post),
                get("error"),
                get("error_type"),
                float(get("time_used") or 0.0),
                get("trace_id"),
                get("raw_output"),
                get("started_at"),
                tuple(map(Judgement.from_dict, judged)) if judged else (),
                get("span_id"),
                int(get("repetition") or 1),
                None if pre is None else InterpretiveState.from_dict(pre),
            )
        except (KeyError, TypeError, ValueError, StatevalError) as exc:
            raise JournalError(f"malformed case result record: {exc}") from exc


_RESULT_SLOTS: tuple[Callable[[CaseResult, Any], None], ...] = tuple(
    vars(CaseResult)[f.name].__set__ for f in fields(CaseResult)
)
"""Each field's slot setter, in field order (`CaseResult.__init__`)."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One score of one case, as reported and uploaded (``field:<path>``, ``state_accuracy``...).

    Attributes:
        name: ``state_accuracy``, ``overall_match``, ``changed_fields_accuracy``,
            ``preserved_fields_accuracy``, ``slot_accuracy``, ``field:<path>`` or
            ``check:<path>``.
        score: A number in [0, 1].
        label: A short category (``matching``, ``missing``, ``pass``...), or None.
        explanation: One human-readable line.
        annotator_kind: ``LLM`` when an LLM judge decided it, else ``CODE``.
    """

    name: str
    score: float
    label: str | None
    explanation: str
    annotator_kind: Literal["CODE", "LLM"] = "CODE"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "name": self.name,
            "score": self.score,
            "label": self.label,
            "explanation": self.explanation,
            "annotator_kind": self.annotator_kind,
        }


class CaseScore:
    """The scores of one case under a suite's policies, slots and checks.

    Its evaluations may be given as a function that makes them: they are then made when first
    read, so a run that only counts its cases (no Phoenix, no per-case report) never builds a
    per-field explanation. Wherever that first read happens (a sink, a report), a function that
    raises does not: given ``recover``, the score becomes its case's error instead (its
    `result` says ``scoring failed: <exception>`` in one line, and every score is that of a
    failed call), and whoever reads it goes on with the next case.

    Args:
        case_id: The case.
        result: What the mutator did.
        comparison: Every field's comparison (against an empty state when the mutator failed).
        evaluations: Case-level evaluations, then one per field, then check results; or a
            function making them from the scoring core's scores (`case_scores`; None without
            ``scores``).
        checks: The check evaluations (so `failed_checks` needs no other evaluation); taken
            from ``evaluations`` when omitted.
        accuracy: The ``state_accuracy`` score (so `accuracy` needs no other evaluation);
            taken from ``evaluations`` when omitted.
        recover: Scores the case again from a failed result: what this score becomes when
            making its evaluations or metric outcomes raises (without it, the error is raised).
        source_span_id: The production span the case came from (its metadata's
            ``source_span_id``), shown in the JSON report.
        scores: Makes the scoring core's scores of this score (passed in, so that nothing
            refers back to it) that its evaluations are made from (see `case_scores`).
        strict: The case decided as columns (`stateval.compare.strict_case`) under
            ``policies``, when it could be: what the run's tallies and compact scores read
            (`strict_under`).
        policies: The policies the score was made under (with ``strict``).
    """

    __slots__ = (
        "_accuracy",
        "_checks",
        "_core",
        "_edits",
        "_evaluations",
        "_make",
        "_metrics",
        "_recover",
        "_scores",
        "_strict",
        "case_id",
        "comparison",
        "result",
        "source_span_id",
    )

    def __init__(
        self,
        case_id: str,
        result: CaseResult,
        comparison: StateComparison,
        evaluations: Sequence[Evaluation] | Callable[[CaseScores | None], Sequence[Evaluation]],
        checks: Sequence[Evaluation] | None = None,
        accuracy: float | None = None,
        recover: Callable[[CaseResult], CaseScore] | None = None,
        source_span_id: str | None = None,
        scores: Callable[[CaseScore], CaseScores] | None = None,
        strict: StrictCase | None = None,
        policies: FieldPolicies | None = None,
    ) -> None:
        self.case_id = case_id
        self._strict = None if strict is None else (policies, strict)
        self._scores = scores
        self._core: CaseScores | None = None
        self.source_span_id = source_span_id
        self.result = result
        self.comparison = comparison
        self._evaluations: tuple[Evaluation, ...] | None = None
        self._make: Callable[[CaseScores | None], Sequence[Evaluation]] | None = None
        if callable(evaluations):
            self._make = evaluations
        else:
            self._evaluations = tuple(evaluations)
        self._checks = None if checks is None else tuple(checks)
        self._accuracy = accuracy
        self._metrics: tuple[object, CaseMetrics] | None = None
        self._edits: tuple[object, tuple[FieldEdit, ...] | None] | None = None
        self._recover = recover

    def metrics_under(self, scoring: _MetricScoring, case: Case) -> CaseMetrics:
        """The case's metric outcomes under ``scoring`` (made once per scoring: a mutation test
        summarises the same baseline scores once per mutant)."""
        known = self._metrics
        if known is None or known[0] is not scoring:
            try:
                made = scoring.case_metrics(self.comparison, case)
            except Exception as exc:
                self._fail(exc)
                made = scoring.case_metrics(self.comparison, case)
            known = self._metrics = (scoring, made)
        return known[1]

    def strict_under(self, scoring: _MetricScoring) -> StrictCase | None:
        """The case decided as columns under ``scoring``'s policies, or None (not made under
        them, or not three flat states of strings under one strict policy)."""
        known = self._strict
        return None if known is None or known[0] is not scoring.policies else known[1]

    def edits_under(self, scoring: _MetricScoring, case: Case) -> tuple[FieldEdit, ...] | None:
        """Each field's expected and actual edit operation (`stateval.compare.field_edits`)
        from the pre-state the mutator was given, under ``scoring``'s policies; None when the
        mutator returned no state (made once per scoring)."""
        known = self._edits
        if known is None or known[0] is not scoring:
            post = self.result.post_state
            made = None
            strict = self.strict_under(scoring)
            if strict is not None:  # its edits are read off its columns
                made = strict.edits()
            elif self.result.ok and post is not None:
                given = self.result.pre_state
                pre = case.pre_state if given is None else given  # an empty state is given too
                made = field_edits(
                    pre, case.expected_post_state, post, scoring.policies, self.comparison
                )
            known = self._edits = (scoring, made)
        return known[1]

    def case_scores(self) -> CaseScores | None:
        """The scoring core's scores of this case (`stateval.compare.CaseScores`: its
        evaluations without their explanations made), made once and shared by the
        evaluations, the compact scores and a diff's observation; None when this score was
        given its evaluations, or making them raises (`evaluations` then recovers)."""
        if self._scores is None:
            return None
        try:
            return self._made_scores()
        except Exception:
            return None

    def _made_scores(self) -> CaseScores:
        """`case_scores`, made once (raises what making them raises)."""
        core = self._core
        if core is None:
            assert self._scores is not None
            core = self._core = self._scores(self)
        return core

    @property
    def evaluations(self) -> tuple[Evaluation, ...]:
        """Case-level evaluations, then one per field, then check results."""
        if self._evaluations is None:
            assert self._make is not None
            try:
                made = tuple(self._make(None if self._scores is None else self._made_scores()))
            except Exception as exc:
                made = self._fail(exc).evaluations
            self._evaluations = made
            self._make = None
        return self._evaluations

    def _fail(self, exc: Exception) -> CaseScore:
        """Become the score of this case's error: making its scores raised ``exc``."""
        recover = self._recover
        if recover is None:
            raise exc
        again = recover(self.result.failed("scoring", exc))
        self._recover = None
        self.result, self.comparison = again.result, again.comparison
        self._checks, self._accuracy, self._metrics = again._checks, again._accuracy, None
        self._evaluations, self._make = again._evaluations, again._make
        self._scores, self._core = again._scores, again._core
        self._strict = again._strict
        return again

    def __repr__(self) -> str:
        return f"CaseScore({self.case_id!r}, ok={self.ok}, accuracy={self.accuracy})"

    @property
    def ok(self) -> bool:
        """True when the mutator returned a state."""
        return self.result.ok

    @property
    def overall_match(self) -> bool:
        """True when the mutator returned a state whose every field matches."""
        return self.ok and self.comparison.overall_match

    @property
    def accuracy(self) -> float:
        """The case's ``state_accuracy`` evaluation (0.0 when the mutator failed; 1.0 on the
        empty turn, see `stateval.compare.view_accuracy`)."""
        if self._accuracy is not None:
            return self._accuracy
        found = self.evaluation("state_accuracy")
        return found.score if found is not None else 0.0

    @property
    def checks(self) -> tuple[Evaluation, ...]:
        """The check evaluations (``check:<path>``)."""
        checks = self._checks
        if checks is None:
            checks = tuple(e for e in self.evaluations if e.name.startswith("check:"))
        return checks

    @property
    def failed_checks(self) -> tuple[Evaluation, ...]:
        """Check evaluations that did not pass."""
        return tuple(e for e in self.checks if e.score < 1)

    def evaluation(self, name: str) -> Evaluation | None:
        """The evaluation called ``name``, or None."""
        return next((e for e in self.evaluations if e.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON form for reports."""
        evaluations = [e.to_dict() for e in self.evaluations]  # first: they may fail the case
        source = {} if self.source_span_id is None else {"source_span_id": self.source_span_id}
        return {
            "case_id": self.case_id,
            "ok": self.ok,
            "error": self.result.error,
            "error_type": self.result.error_type,
            "overall_match": self.overall_match,
            "accuracy": self.accuracy,
            "time_used": self.result.time_used,
            "trace_id": self.result.trace_id,
            **source,
            "counts": self.comparison.counts,
            "fields": [f.to_dict() for f in self.comparison.fields],
            "evaluations": evaluations,
        }
