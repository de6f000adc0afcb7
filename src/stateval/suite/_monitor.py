"""Monitor files: a suite-like file whose states come from a Phoenix project's spans.

A monitor has a ``traces:`` section (which spans, and where their pre-state, input and
post-state are) instead of a mutator and cases, and the suite's ``policies``, ``slots``,
``checks``, ``thresholds`` and ``judge`` (the same models), plus the checks that need no gold:
``grounded``, ``unexplained_changes`` and the reference-free judge (``judged``). `load_monitor`
reads one and fails before any work with `SuiteProblemsError`, one line per problem naming the
file, the line and the key.

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "crm.yaml").write_text('''
    ... traces:
    ...   project: crm-profile-updater
    ...   span_name: update_profile
    ...   pre_state: input.value#/profile
    ...   input: input.value#/email
    ...   post_state: output.value
    ... grounded: [phone, email]
    ... unexplained_changes: true
    ... ''')
    >>> monitor = load_monitor(folder / "crm.yaml")
    >>> monitor.name, monitor.traces.project, monitor.grounded
    ('crm', 'crm-profile-updater', ('phone', 'email'))
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ConfigDict, Field, ValidationError, model_validator

from stateval.checks import Criterion
from stateval.compare import FieldPolicies, MatchPolicyModel
from stateval.errors import SuiteProblemsError
from stateval.suite._llm import build_judge_client
from stateval.suite._models import SlotsFileSpec, SuiteModel, ThresholdsSpec
from stateval.suite._mutator_specs import JudgeSpec
from stateval.suite._problems import format_problem, line_locator
from stateval.suite._settings import read_suite_document, suite_problems
from stateval.suite._slot_schema import SlotSchema
from stateval.suite._slots_section import load_slots
from stateval.suite._spec_base import _Strict
from stateval.suite._suite import _load_checks

if TYPE_CHECKING:
    from stateval.mutators import OpenAICompatibleClient

__all__ = [
    "NO_GOLD_THRESHOLDS",
    "Monitor",
    "MonitorModel",
    "TracesSpec",
    "load_monitor",
]

NO_GOLD_THRESHOLDS = ("overall_match_rate", "accuracy", "fields", "max_error_rate")
"""The thresholds a monitor can check (what they mean without gold: docs/traces.md); the
others need an expected state."""

_Fraction = Annotated[float, Field(ge=0, le=1)]
_POINTER = r"^[^#\s]+(#(/[^/]*)*)?$"
_Scalar = str | int | float | bool


class TracesSpec(_Strict):
    """Which spans of which project are mutator calls, and where their states are.

    A location is an attribute name, then optionally ``#`` and a JSON pointer into the
    attribute's JSON (``input.value#/profile``). Without ``pre_state``, ``input`` and
    ``post_state`` the spans are those ``stateval run`` writes (``stateval.mutate``).
    """

    project: str = Field(min_length=1, description="The Phoenix project to read.")
    span_name: str | None = Field(
        default=None,
        min_length=1,
        description="Name of the mutator-call spans (default with no mapping: stateval.mutate).",
    )
    span_kind: str | None = Field(
        default=None, min_length=1, description="Only spans of this OpenInference kind (CHAIN...)."
    )
    attributes: dict[str, _Scalar] = Field(
        default_factory=dict, description="Attribute -> value every mutator-call span carries."
    )
    pre_state: str | None = Field(
        default=None, pattern=_POINTER, description="Where the state before the call is."
    )
    input: str | None = Field(
        default=None, pattern=_POINTER, description="Where the message the mutator read is."
    )
    post_state: str | None = Field(
        default=None, pattern=_POINTER, description="Where the state it wrote is."
    )
    episode: str | None = Field(
        default="session.id",
        min_length=1,
        description="Attribute grouping spans into episodes (session annotations); null: none.",
    )
    sample: _Fraction = Field(
        default=1.0, description="Share of spans scored, chosen by a seeded hash of the span id."
    )
    seed: int = Field(default=0, description="Seed of the sample.")
    page_size: int = Field(default=500, ge=1, le=1000, description="Spans read per request.")

    @model_validator(mode="after")
    def _mapping_complete(self) -> TracesSpec:
        given = [k for k in ("pre_state", "input", "post_state") if getattr(self, k) is not None]
        if given and (self.post_state is None or self.input is None):
            raise ValueError("a mapping needs at least 'input' and 'post_state'")
        return self

    @property
    def mapped(self) -> bool:
        """True when the file maps the states (not ``stateval.mutate`` spans)."""
        return self.post_state is not None

    @property
    def names(self) -> tuple[str, ...]:
        """The span names to read."""
        from stateval.tracing import SPAN_MUTATE  # OpenTelemetry only when spans are read

        if self.span_name is not None:
            return (self.span_name,)
        return () if self.mapped else (SPAN_MUTATE,)


class MonitorModel(_Strict):
    """A stateval monitor file: production spans scored without gold."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="stateval monitor")

    name: str | None = Field(default=None, min_length=1, description="Defaults to the file stem.")
    description: str | None = None
    traces: TracesSpec
    policies: dict[str, MatchPolicyModel] = Field(
        default_factory=dict, description=SuiteModel.model_fields["policies"].description
    )
    slots: list[str] | SlotsFileSpec | None = Field(
        default=None, description=SuiteModel.model_fields["slots"].description
    )
    checks: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description=SuiteModel.model_fields["checks"].description,
        json_schema_extra=SuiteModel.model_fields["checks"].json_schema_extra,
    )
    thresholds: ThresholdsSpec = Field(
        default_factory=ThresholdsSpec,
        description="As in suites, read without gold: " + ", ".join(NO_GOLD_THRESHOLDS) + ".",
    )
    grounded: list[Annotated[str, Field(min_length=1)]] | bool = Field(
        default=False,
        description="Paths or globs whose written value must appear in the input (true: every "
        "field the call changed).",
    )
    unexplained_changes: bool = Field(
        default=False,
        description="Flag a field that differs from the pre-state while the input mentions "
        "neither it nor its old or new value.",
    )
    judge: JudgeSpec | None = Field(
        default=None, description="The LLM that judges the fields in 'judged' (needs a model)."
    )
    judged: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list,
        description="Paths or globs the judge asks about: is this value supported by the input?",
    )
    max_judge_calls: int | None = Field(
        default=None, ge=0, description="Most judge calls in one run (null: no limit)."
    )
    judge_sample: _Fraction = Field(
        default=1.0, description="Share of the judged fields' values sent to the judge."
    )
    concurrency: int = Field(default=8, ge=1, le=1024)


@dataclass(frozen=True, slots=True)
class Monitor:
    """A loaded, validated monitor file.

    Attributes:
        path: The file.
        model: Its validated contents.
        name: The monitor's name (the file stem unless set).
        traces: Which spans, and where their states are.
        policies: Field policies by path or glob (how two values compare: a value equal to
            one in the input under the field's normalisers is grounded).
        checks: Path or glob -> the criteria each such field's value must pass.
        thresholds: The pass thresholds (`NO_GOLD_THRESHOLDS`).
        grounded: Paths or globs checked for grounding (``("*",)`` for every field), or ().
        unexplained_changes: Whether changes the input does not explain are flagged.
        slot_schema: The slot schema, when set (its categorical values are checked).
        judged: Paths or globs the reference-free judge asks about.
        judge_client: The judge's LLM client (None without ``judge:``).
        monitor_hash: sha256 of the file's contents (names its watermark and journal).
    """

    path: Path
    model: MonitorModel
    name: str
    traces: TracesSpec
    policies: FieldPolicies
    checks: Mapping[str, tuple[Criterion, ...]]
    thresholds: ThresholdsSpec
    grounded: tuple[str, ...]
    unexplained_changes: bool
    slot_schema: SlotSchema | None
    judged: tuple[str, ...]
    judge_client: OpenAICompatibleClient | None
    monitor_hash: str


def load_monitor(path: str | Path, *, build_judge: bool = True) -> Monitor:
    """Read and validate a monitor file (``.yaml``, ``.yml`` or ``.json``).

    Args:
        path: The file.
        build_judge: Build the judge's client (not needed to validate the file).

    Raises:
        SuiteProblemsError: One line per problem, naming file, line and key.
    """
    path = Path(path)
    document = read_suite_document(path, "monitor")
    label, data, text = document.label, document.data, document.text
    locate = line_locator(text)
    try:
        model = MonitorModel.model_validate(data)
    except ValidationError as exc:
        raise SuiteProblemsError(suite_problems(exc, document)) from exc
    problems: list[str] = []
    _threshold_problems(model, label, locate, problems)
    if model.judged and model.judge is None:
        problems.append(format_problem(label, locate(("judged",)), None, "judged", "needs 'judge'"))
    base = path.resolve().parent
    schema = load_slots(model.slots, base, label, locate, problems)
    checks = _load_checks(model.checks, label, locate, problems)
    for pattern, criteria in checks.items():
        for index, criterion in enumerate(criteria):
            if criterion.type == "exact" and getattr(criterion, "value", None) is None:
                message = (
                    f"criterion {index}: exact needs a value (a monitor has no expected state)"
                )
                where = locate(("checks", pattern))
                problems.append(format_problem(label, where, None, f"checks.{pattern}", message))
    client = None
    if model.judge is not None and build_judge:
        client = build_judge_client(model.judge, label, locate, problems)
    if problems:
        raise SuiteProblemsError(problems)
    policies = FieldPolicies.from_mapping(model.policies)
    grounded = model.grounded
    return Monitor(
        path=path,
        model=model,
        name=model.name or path.stem,
        traces=model.traces,
        policies=policies if schema is None else schema.policies(policies),
        checks=checks,
        thresholds=model.thresholds,
        grounded=("*",) if grounded is True else tuple(grounded or ()),
        unexplained_changes=model.unexplained_changes,
        slot_schema=schema,
        judged=tuple(model.judged),
        judge_client=client,
        monitor_hash=hashlib.sha256(
            json.dumps(model.model_dump(mode="json"), sort_keys=True).encode()
        ).hexdigest(),
    )


def _threshold_problems(model: MonitorModel, label: str, locate: Any, problems: list[str]) -> None:
    for key in model.thresholds.model_fields_set - set(NO_GOLD_THRESHOLDS):
        if getattr(model.thresholds, key) is None:
            continue
        message = f"needs an expected state; a monitor checks {', '.join(NO_GOLD_THRESHOLDS)}"
        problems.append(
            format_problem(label, locate(("thresholds", key)), None, f"thresholds.{key}", message)
        )
