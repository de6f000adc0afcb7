"""The pydantic models of a suite file (YAML or JSON); `stateval schema` publishes their schema."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import ConfigDict, Field, field_validator, model_validator

from stateval.checks import Criterion
from stateval.compare import MatchPolicyModel
from stateval.suite._case import UNREVIEWED, review_status
from stateval.suite._metrics import MetricsSpec
from stateval.suite._mutator_specs import (
    JudgeSpec,
    MutatorSpec,
)
from stateval.suite._spec_base import _Fraction, _Strict

__all__ = [
    "CaseInputSpec",
    "CaseSpec",
    "CasesSpec",
    "EpisodeMode",
    "EpisodesSpec",
    "MetricsSpec",
    "MutationSpec",
    "PerTurnSpec",
    "PhoenixSpec",
    "RegressionsSpec",
    "SlotsFileSpec",
    "SuiteModel",
    "ThresholdsSpec",
]

CRITERION_TYPES: tuple[str, ...] = tuple(
    get_args(member.model_fields["type"].annotation)[0]
    for member in get_args(get_args(Criterion)[0])
)
"""The ``type`` of each criterion a check may use (see `stateval.checks.parse_criteria`)."""


class CaseInputSpec(_Strict):
    """The input a case gives the mutator."""

    prompt: str
    message_id: str | None = Field(default=None, description="Defaults to the case id.")
    metadata: dict[str, Any] = Field(default_factory=dict)


HumanLabel = Literal["same", "equivalent", "different"]


class HumanVerdictSpec(_Strict):
    """A human verdict on one value the mutator gave (kept valid when the mutator changes)."""

    verdict: HumanLabel
    actual: Any = Field(
        description="The mutator's value the verdict is on; with another value the verdict "
        "is not compared."
    )


class CaseSpec(_Strict):
    """One case: a pre-state, an input, the expected post-state.

    States are flat ``{path: value}`` maps (or nested objects with ``format: nested``), or the
    full candidate form ``{"fields": {path: [{"value", "confidence"}, ...]}}``.
    """

    id: str = Field(min_length=1)
    pre_state: dict[str, Any] = Field(default_factory=dict)
    input: CaseInputSpec
    expected_post_state: dict[str, Any] | None = Field(
        description="May be left out only in an unreviewed draft (metadata.review.status: "
        "unreviewed, as stateval traces export writes them), which a suite leaves out.",
    )
    actual_post_state: Any = Field(
        default=None,
        description="The post-state the system already produced, for a replay mutator (same "
        "format as expected_post_state; checked when the case runs).",
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    human: dict[str, HumanLabel | HumanVerdictSpec] = Field(
        default_factory=dict,
        description="Human verdicts on LLM-judged fields (path -> same or different, or "
        "{verdict, actual} for a verdict on one value of the mutator); the run reports the "
        "judge's agreement with them.",
    )

    @field_validator("id", mode="before")
    @classmethod
    def _int_id(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @model_validator(mode="before")
    @classmethod
    def _draft_without_gold(cls, data: object) -> object:
        """An unreviewed draft may leave out ``expected_post_state`` (any other case may not)."""
        if isinstance(data, dict) and "expected_post_state" not in data:
            metadata = data.get("metadata")
            if isinstance(metadata, dict) and review_status(metadata) == UNREVIEWED:
                return {**data, "expected_post_state": None}
        return data


class CasesSpec(_Strict):
    """Where the cases are: a file (JSONL, JSON or CSV) or inline, and how states are written."""

    file: str | None = Field(default=None, description="Relative to the suite file.")
    inline: list[CaseSpec] | None = None
    format: Literal["flat", "nested"] = Field(
        default="flat",
        description="How states are written (the candidate form is always recognised).",
    )
    confidence: _Fraction = Field(
        default=1.0, description="Confidence of values given as plain flat or nested values."
    )

    @model_validator(mode="after")
    def _one_source(self) -> CasesSpec:
        if (self.file is None) == (self.inline is None):
            raise ValueError("give exactly one of 'file' or 'inline'")
        return self


class SlotsFileSpec(_Strict):
    """A slot schema kept elsewhere: a file (.txt one per line, .json/.yaml list of paths or an
    SGD-like list of services) or a ``module:attr`` holding either."""

    file: str | None = None
    ref: str | None = Field(default=None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
    path: str | None = Field(default=None, description="Folder searched first for `ref`.")
    services_key: str | None = Field(
        default=None,
        min_length=1,
        description="Case metadata key listing the services in play in a case (e.g. "
        "'metadata.services'); only their slots count as both-absent. Default: every service.",
    )
    fuzzy: float | None = Field(
        default=0.9,
        ge=0,
        le=1,
        description="Fuzzy threshold of the policies derived for free-form slots (null: none).",
    )

    @model_validator(mode="after")
    def _one_source(self) -> SlotsFileSpec:
        if (self.file is None) == (self.ref is None):
            raise ValueError("give exactly one of 'file' or 'ref'")
        return self


class RegressionsSpec(_Strict):
    """The regression gate: how many fields may regress against the baseline, at what alpha.

    Checked when a run has a baseline (``stateval run --baseline``, or ``baseline`` here); a
    field regresses when the exact McNemar test on its paired cases, Holm-corrected across
    fields, is below ``alpha`` and more cases got worse than better.
    """

    max_regressed_fields: int = Field(
        default=0, ge=0, description="Most fields that may regress (default 0)."
    )
    alpha: float = Field(
        default=0.05, gt=0, lt=1, description="Significance level after Holm's correction."
    )
    baseline: str | None = Field(
        default=None,
        min_length=1,
        description="The baseline when none is given on the command line: a run id of this "
        "suite ('latest' is the newest run before this one), or a Phoenix experiment id or URL.",
    )


EpisodeMode = Literal["teacher_forced", "free_running"]
"""How a run feeds an episode's turns: each from its gold pre-state (``teacher_forced``), or each
from the mutator's own post-state of the turn before (``free_running``)."""


class EpisodesSpec(_Strict):
    """Cases grouped into episodes (conversations) and ordered into turns (docs/episodes.md)."""

    by: str = Field(
        min_length=1,
        description="Case metadata key naming a case's episode, e.g. 'metadata.dialogue_id'.",
    )
    order: str = Field(
        min_length=1,
        description="Case metadata key holding the case's turn index (an integer), e.g. "
        "'metadata.turn_index'. An episode's turns are consecutive integers; its first "
        "turn's pre_state is the episode's start state.",
    )
    mode: EpisodeMode = Field(
        default="teacher_forced",
        description="teacher_forced: every turn from its gold pre_state; free_running: turn "
        "t from the mutator's own post-state of turn t-1 (`stateval run --mode` overrides).",
    )
    on_error: Literal["skip", "carry"] = Field(
        default="skip",
        description="Free-running: after a failed mutator call, skip the episode's remaining "
        "turns (each recorded as an error) or carry the last good state into the next turn.",
    )
    start: Literal["first_turn", "empty"] = Field(
        default="first_turn",
        description="first_turn: an episode starts from its first turn's pre_state, whatever "
        "it holds; empty: every episode must start from an empty state (checked on load).",
    )


class PerTurnSpec(_Strict):
    """Minimums every turn index must reach (over the episodes that reach that turn)."""

    joint_goal_accuracy: _Fraction | None = Field(
        default=None,
        description="Fraction of turns at the index that are right: every slot right (every "
        "compared field, without a slot schema).",
    )
    accuracy: _Fraction | None = Field(
        default=None, description="Matching expected fields over expected fields at the index."
    )
    min_episodes: int = Field(
        default=1,
        ge=1,
        description="Turn indices fewer episodes reach are not checked (a long tail of "
        "a few long episodes is noise).",
    )


_EPISODE_METRIC: dict[str, Any] = {"x-episode-metric": True}
"""Marks a threshold on a metric of `stateval.episodes.EPISODE_METRICS` (it needs episodes)."""


class ThresholdsSpec(_Strict):
    """Minimums a run must reach to pass (exit code 0); unset ones are not checked."""

    overall_match_rate: _Fraction | None = None
    accuracy: _Fraction | None = None
    joint_goal_accuracy: _Fraction | None = None
    slot_accuracy: _Fraction | None = None
    value_precision: _Fraction | None = None
    value_recall: _Fraction | None = None
    value_f1: _Fraction | None = None
    max_error_rate: _Fraction | None = Field(
        default=0.0,
        description="Most cases whose mutator call may fail, as a fraction (default 0: any "
        "failed call fails the run; null: not checked).",
    )
    fields: dict[str, _Fraction] = Field(
        default_factory=dict, description="Path or glob -> minimum accuracy of each such field."
    )
    mean_weighted_state_accuracy: _Fraction | None = Field(
        default=None,
        description="Minimum mean of the cases' weighted_state_accuracy (field weights).",
    )
    critical_fields: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list,
        description="Paths or globs (sub-fields of lists of records too: "
        "'line_items[].quantity') that must never be wrong, missing or extra: any error in "
        "one fails the run.",
    )
    judge_kappa: float | None = Field(
        default=None,
        ge=-1,
        le=1,
        description="Minimum Cohen's kappa of the LLM judge against the cases' human verdicts "
        "(fails when it cannot be measured).",
    )
    regressions: RegressionsSpec | None = Field(
        default=None,
        description="The regression gate against a baseline run (`stateval run --baseline`).",
    )
    episode_success: _Fraction | None = Field(
        default=None,
        description="Minimum fraction of episodes with every turn right (needs 'episodes').",
        json_schema_extra=_EPISODE_METRIC,
    )
    retention_at_5: _Fraction | None = Field(
        default=None,
        description="Minimum accuracy of expected fields whose gold value was set 5 or more "
        "turns earlier (memory age >= 5; needs 'episodes').",
        json_schema_extra=_EPISODE_METRIC,
    )
    per_turn: PerTurnSpec | None = Field(
        default=None,
        description="Minimums every turn index must reach, e.g. {joint_goal_accuracy: 0.5} "
        "(needs 'episodes').",
    )


FieldsAs = Literal["evaluations", "annotations", "both", "failing"]
"""Where a run puts its ``field:<path>`` scores in Phoenix (``phoenix.fields_as``): the upload
modes' names, typed once here (the suite's schema) and read by `stateval.upload.UPLOAD_MODES`,
which says what each mode posts."""


class PhoenixSpec(_Strict):
    """Names used in Phoenix (each defaults to the suite name), and how fields are logged."""

    dataset: str | None = Field(default=None, min_length=1)
    experiment_prefix: str | None = Field(default=None, min_length=1)
    project: str | None = Field(default=None, min_length=1)
    fields_as: FieldsAs = Field(
        default="evaluations",
        description="Where field:<path> scores go: 'evaluations' (experiment evaluations, one "
        "request each), 'annotations' (span annotations on each case's mutator-call span, in bulk; "
        "per-field means in the experiment's metadata), or 'both'.",
    )


_OperatorName = Annotated[str, Field(min_length=1, json_schema_extra={"pattern": r"^[^,\s]+$"})]


class MutationSpec(_Strict):
    """Defaults of ``stateval mutate`` for this suite; its command-line options override them.

    Operator and eval names are checked against the registries when ``stateval mutate`` runs
    (plugins may register more), with one problem line naming this file, the line and the field.
    """

    operators: list[_OperatorName] | None = Field(
        default=None,
        min_length=1,
        description="Operators to run (default: every registered operator).",
    )
    seed: int | None = Field(default=None, description="Seeds every random choice (default 0).")
    fail_under: float | None = Field(
        default=None, ge=0, le=100, description="Fail when the mutation score (%) is below this."
    )
    evals: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list,
        description="Extra evals: registered names (provenance) or module:attr (searched next "
        "to this file first).",
    )
    max_calls: int | None = Field(
        default=None, ge=0, description="Most paid calls (LLM mutator calls, is_llm evals)."
    )
    max_mutants: int | None = Field(
        default=None, ge=1, description="Evaluate a seeded random sample of this many mutants."
    )

    @field_validator("operators")
    @classmethod
    def _one_name_per_item(cls, value: list[str] | None) -> list[str] | None:
        for name in value or ():
            if "," in name or any(c.isspace() for c in name):
                raise ValueError(f"one operator name per list item, got {name!r}")
        return value


class SuiteModel(_Strict):
    """A stateval suite file.

    String values may use environment variables, ``${VAR}`` or ``${VAR:-default}`` (``$${``
    for a literal ``${``), except in case data and prompt texts.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        title="stateval suite",
        json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    name: str | None = Field(default=None, min_length=1, description="Defaults to the file stem.")
    description: str | None = None
    mutator: MutatorSpec
    judge: JudgeSpec | None = Field(
        default=None, description="The LLM judge of fields whose policy says judge: llm."
    )
    cases: CasesSpec
    episodes: EpisodesSpec | None = Field(
        default=None,
        description="Group the cases into episodes of ordered turns (docs/episodes.md).",
    )
    policies: dict[str, MatchPolicyModel] = Field(
        default_factory=dict, description="Path or glob -> how that field is compared."
    )
    slots: list[str] | SlotsFileSpec | None = Field(
        default=None, description="The slot schema (enables joint goal and slot accuracy)."
    )
    checks: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description="Path or glob -> criteria that field's value must pass, e.g. "
        "{'type': 'regex', 'pattern': '...'} (see stateval.checks).",
        json_schema_extra={
            "additionalProperties": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"enum": list(CRITERION_TYPES)}},
                },
            }
        },
    )
    thresholds: ThresholdsSpec = Field(default_factory=ThresholdsSpec)
    metrics: MetricsSpec = Field(default_factory=MetricsSpec)
    slices: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list,
        description="Case metadata keys to break every metric down by, e.g. "
        "'metadata.domain' (a list value puts a case in several slices).",
    )
    phoenix: PhoenixSpec = Field(default_factory=PhoenixSpec)
    mutation: MutationSpec | None = Field(
        default=None, description="Defaults of `stateval mutate` (its options override them)."
    )
    concurrency: int = Field(default=8, ge=1, le=1024)
