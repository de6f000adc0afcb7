"""Suite files: what to run (mutator, cases), how to score it (policies, slots, checks,
thresholds), where to report it (Phoenix names) and how ``stateval mutate`` tests it
(``mutation:``).

A suite is YAML or JSON validated by `SuiteModel` (unknown keys rejected; `suite_json_schema`
gives the JSON Schema editors use). `load_suite` reads it, its case file and its slot schema,
and fails before any work with `SuiteProblemsError`, one line per problem naming the file, the
line or case id, and the field. String values may name environment variables, ``${VAR}`` or
``${VAR:-default}`` (not in case data or prompt texts; see `stateval.suite._env`); an unset
variable without a default is a problem naming the file, the field and the variable.

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "suite.yaml").write_text('''
    ... mutator: {type: python, callable: "builtins:print"}
    ... cases:
    ...   inline:
    ...     - id: c1
    ...       input: {prompt: "area is north"}
    ...       expected_post_state: {hotel.area: north}
    ... ''')
    >>> suite = load_suite(folder / "suite.yaml", load_mutator=False)
    >>> suite.name, [case.id for case in suite.cases]
    ('suite', ['c1'])
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from stateval.checks import Criterion, parse_criteria
from stateval.compare import FieldPolicies, MetricOptions
from stateval.errors import StatevalError, SuiteProblemsError
from stateval.mutators import (
    Mutator,
    describe_mutator,
)
from stateval.suite._case import Case
from stateval.suite._case_audit import CaseAudit
from stateval.suite._case_file import PartsMap, read_case_file, run_in_turn
from stateval.suite._cases import CaseFileRef, build_cases, inline_records
from stateval.suite._episodes import EpisodeIndexer, Episodes
from stateval.suite._llm import build_judge
from stateval.suite._metric_settings import metric_settings
from stateval.suite._models import (
    CasesSpec,
    EpisodesSpec,
    FieldsAs,
    SlotsFileSpec,
    SuiteModel,
    ThresholdsSpec,
)
from stateval.suite._mutator_build import build_mutator, check_mutator
from stateval.suite._mutator_specs import PythonMutatorSpec, ReplayMutatorSpec
from stateval.suite._problems import Loc, Locate, display_path, format_problem, line_locator
from stateval.suite._settings import read_suite_document, suite_problems
from stateval.suite._slot_schema import SlotSchema
from stateval.suite._slots_section import load_slots
from stateval.suite._source import Cases, MemoryCases

if TYPE_CHECKING:
    from stateval.phoenix import FieldJudge

__all__ = [
    "Cases",
    "PhoenixNames",
    "Suite",
    "SuiteModel",
    "load_suite",
    "suite_json_schema",
    "with_mutator",
]


@dataclass(frozen=True, slots=True)
class PhoenixNames:
    """The names a run uses in Phoenix, and where its field scores go (``fields_as``)."""

    dataset: str
    experiment_prefix: str
    project: str
    fields_as: FieldsAs = "evaluations"


@dataclass(frozen=True, slots=True)
class Suite:
    """A loaded, validated suite.

    Attributes:
        path: The suite file.
        model: The validated file contents.
        name: The suite name (the file stem unless set).
        cases: Every case, in file order (a JSONL case file is read again when they are
            iterated, not held in memory).
        policies: Field policies by path or glob.
        slots: The slot schema, when set (enables joint goal and slot accuracy).
        checks: Path or glob -> the criteria each such field's value must pass.
        thresholds: The pass thresholds.
        phoenix: Phoenix names.
        cases_hash: sha256 of the cases (changes when any case changes).
        suite_hash: sha256 of the suite contents and its cases.
        mutator: The mutator, unless loaded with ``load_mutator=False``.
        mutator_description: One line describing the mutator.
        judge: The LLM judge of the ``judge:`` block (None without one, or when loaded with
            ``load_mutator=False``).
        slot_schema: The slot schema with its services, when set.
        services_key: The case metadata key listing the services in play in a case.
        slices: Case metadata keys every metric is broken down by.
        metric_options: Scorer conventions of value precision / recall / F1 and a published
            scorer's figures (``metrics:``).
        seen_services: Services seen in training (``metrics.seen_services``), or None.
        episodes: The cases' episodes (``episodes:``), each one's case ids in turn order; None
            when the suite does not group its cases.
        drafts: The ids of the unreviewed drafts left out of the cases (exported from
            production traces, not corrected yet: no ``expected_post_state``).
        warnings: What ``stateval validate`` warns about but lets through, one line each
            (list-valued gold under a policy that compares whole lists).
    """

    path: Path
    model: SuiteModel
    name: str
    cases: Cases
    policies: FieldPolicies
    slots: tuple[str, ...] | None
    checks: Mapping[str, tuple[Criterion, ...]]
    thresholds: ThresholdsSpec
    phoenix: PhoenixNames
    cases_hash: str
    suite_hash: str
    mutator: Mutator | None
    mutator_description: str
    judge: FieldJudge | None = None
    slot_schema: SlotSchema | None = None
    services_key: str | None = None
    slices: tuple[str, ...] = ()
    metric_options: MetricOptions = field(default_factory=MetricOptions)
    seen_services: frozenset[str] | None = None
    episodes: Episodes | None = None
    drafts: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # a suite built or replaced with a plain sequence of cases keeps constant-time lookup
        if not isinstance(self.cases, Cases):
            object.__setattr__(self, "cases", MemoryCases(self.cases))

    def case(self, case_id: str) -> Case | None:
        """The case with id ``case_id``, or None (constant time)."""
        return self.cases.get(case_id)

    def problem(self, loc: tuple[str | int, ...], message: str) -> str:
        """One problem line about the setting at ``loc`` in this suite file, as `load_suite`
        words them: ``file:line: field: message`` (used for the ``mutation:`` section, whose
        names are checked when ``stateval mutate`` runs)."""
        where = _locate_in(self.path)(loc)
        return format_problem(display_path(self.path), where, None, loc, message)


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema of suite files (published as ``docs/suite-schema.json``)."""
    return SuiteModel.model_json_schema()


def _hash(data: object) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def load_suite(
    path: str | Path,
    *,
    load_mutator: bool = True,
    check_only: bool = False,
    parts: int = 1,
    run_parts: PartsMap = run_in_turn,
) -> Suite:
    """Read and validate a suite, its cases and its slot schema; build its mutator.

    String values may use ``${VAR}`` and ``${VAR:-default}`` (see `stateval.suite._env`).
    Importing the module of ``mutator.callable`` or ``slots.ref`` runs its top-level code, as
    any Python import does; with ``check_only`` nothing else of the user's runs.

    Args:
        path: The suite file (``.yaml``, ``.yml`` or ``.json``).
        load_mutator: Import and build the mutator and the judge (not needed to rescore a run).
        check_only: Import the mutator's callable to check that it exists, but do not call it
            with ``mutator.args`` and build no mutator or judge (``stateval validate``); the
            suite's ``mutator`` is then None.
        parts: Validate a JSONL case file in this many byte ranges, ``run_parts`` running
            them (side by side in other processes: ``stateval run --workers N``); the suite,
            its cases hash and its problems are those of a whole load.
        run_parts: Runs the parts (one after the other unless given).

    Raises:
        SuiteProblemsError: One line per problem, naming file, line or case, and field.
    """
    path = Path(path)
    document = read_suite_document(path)
    label, data, text = document.label, document.data, document.text
    base = path.resolve().parent
    try:
        model = SuiteModel.model_validate(data)
    except ValidationError as exc:
        problems = suite_problems(exc, document)
        # Report the case file's problems in the same pass when the cases section is valid.
        if not any(e["loc"][:1] == ("cases",) for e in exc.errors()):
            _load_cases(_cases_spec(data), data, text, base, label, problems, _episodes_spec(data))
        raise SuiteProblemsError(problems) from exc
    problems = []
    slot_problems: list[str] = []
    schema = load_slots(model.slots, base, label, line_locator(text), slot_problems)
    slots = None if schema is None else schema.paths
    policies = _policies(model, schema)
    cases_label = label if model.cases.file is None else display_path(base / model.cases.file)
    audit = CaseAudit(model, schema, policies, cases_label)
    drafts: list[str] = []
    cases, episodes = _load_cases(
        model.cases,
        data,
        text,
        base,
        label,
        problems,
        model.episodes,
        audit,
        drafts,
        parts=parts,
        run_parts=run_parts,
    )
    _episode_threshold_problems(model, label, line_locator(text), problems)
    if not cases and not problems:
        why = f"no cases ({len(drafts)} unreviewed drafts only)" if drafts else "no cases"
        problems.append(format_problem(label, line_locator(text)(("cases",)), None, "cases", why))
    problems.extend(slot_problems)
    checks = _load_checks(model.checks, label, line_locator(text), problems)
    services_key = model.slots.services_key if isinstance(model.slots, SlotsFileSpec) else None
    metric_options, seen_services = metric_settings(
        model.metrics, schema, services_key, base, label, line_locator(text), problems
    )
    if not problems:
        problems.extend(audit.pattern_problems(slots or (), label, line_locator(text)))
    if not problems:
        problems.extend([*audit.value_problems(), *audit.frame_problems()])
    for key in ("joint_goal_accuracy", "slot_accuracy"):
        if getattr(model.thresholds, key) is not None and model.slots is None:
            field = f"thresholds.{key}"
            where = line_locator(text)(("thresholds", key))
            problems.append(
                format_problem(label, where, None, field, "needs a slot schema ('slots')")
            )
    if cases:  # a case file with problems has no cases to check
        problems.extend(audit.human_problems(label))
    mutator: Mutator | None = None
    judge: FieldJudge | None = None
    description = _describe_spec(model)
    if load_mutator and check_only:
        check_mutator(model, base, label, line_locator(text), problems)
    elif load_mutator:
        mutator, judge, description = _runners(model, base, label, line_locator(text), problems)
    if problems:
        raise SuiteProblemsError(problems)
    name = model.name or path.stem
    cases_hash = cases.hash
    return Suite(
        path=path,
        model=model,
        name=name,
        cases=cases,
        policies=policies,
        slots=slots,
        checks=checks,
        thresholds=model.thresholds,
        phoenix=PhoenixNames(
            dataset=model.phoenix.dataset or name,
            experiment_prefix=model.phoenix.experiment_prefix or name,
            project=model.phoenix.project or name,
            fields_as=model.phoenix.fields_as,
        ),
        cases_hash=cases_hash,
        # `mutation:` only configures `stateval mutate`: it does not change what a run measures.
        suite_hash=_hash(
            {
                "suite": model.model_dump(
                    mode="json", exclude={"mutation": True, "phoenix": {"fields_as": True}}
                ),
                "cases": cases_hash,
            }
        ),
        mutator=mutator,
        mutator_description=description,
        judge=judge,
        drafts=tuple(drafts),
        warnings=tuple(audit.list_warnings()),
        slot_schema=schema,
        services_key=services_key,
        slices=tuple(model.slices),
        metric_options=metric_options,
        seen_services=seen_services,
        episodes=episodes,
    )


def with_mutator(suite: Suite) -> Suite:
    """``suite`` with the mutator and the judge its settings name, built as `load_suite`
    builds them: for a suite loaded once without them (``load_mutator=False``, or shipped to
    the worker process or Ray task running a shard of it, as neither need pickle).

    Raises:
        SuiteProblemsError: The mutator or the judge cannot be built here, one line each
            as `load_suite` words them.
    """
    problems: list[str] = []
    path = suite.path
    base, label = path.resolve().parent, display_path(path)
    mutator, judge, description = _runners(suite.model, base, label, _locate_in(path), problems)
    if problems:
        raise SuiteProblemsError(problems)
    return replace(suite, mutator=mutator, judge=judge, mutator_description=description)


def _runners(
    model: SuiteModel, base: Path, label: str, locate: Locate, problems: list[str]
) -> tuple[Mutator | None, FieldJudge | None, str]:
    """The suite's mutator, its judge (None without a ``judge:`` block) and the mutator's
    description, appending one line per problem (None for what could not be built)."""
    mutator = build_mutator(model, base, label, locate, problems)
    description = _describe_spec(model) if mutator is None else describe_mutator(mutator)
    judge = None
    if model.judge is not None:
        judge = build_judge(model.judge, model.mutator, label, locate, problems)
    return mutator, judge, description


def _locate_in(path: Path) -> Locate:
    """`line_locator` of the suite file at ``path``, read when a line is first asked for (no
    line when it cannot be read)."""
    found: list[Locate] = []

    def locate(loc: Loc) -> int | None:
        if not found:
            try:
                found.append(line_locator(path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                found.append(line_locator(""))
        return found[0](loc)

    return locate


def _policies(model: SuiteModel, schema: SlotSchema | None) -> FieldPolicies:
    user = FieldPolicies.from_mapping(model.policies)
    return user if schema is None else schema.policies(user)


def _episodes_spec(data: Mapping[str, Any]) -> EpisodesSpec | None:
    try:
        found = data.get("episodes")
        return None if found is None else EpisodesSpec.model_validate(found)
    except ValidationError:
        return None


def _cases_spec(data: Mapping[str, Any]) -> CasesSpec | None:
    try:
        return CasesSpec.model_validate(data.get("cases"))
    except ValidationError:
        return None


def _load_cases(
    spec: CasesSpec | None,
    data: Mapping[str, Any],
    text: str,
    base: Path,
    label: str,
    problems: list[str],
    episodes: EpisodesSpec | None = None,
    audit: CaseAudit | None = None,
    drafts: list[str] | None = None,
    *,
    parts: int = 1,
    run_parts: PartsMap = run_in_turn,
) -> tuple[Cases, Episodes | None]:
    """The suite's cases (from its case file or inline) and, with ``episodes``, their episode
    index, appending one line per problem; ``audit`` takes each valid case into account as it
    is read; the ids of unreviewed drafts left out are appended to ``drafts``; a JSONL case
    file is validated in ``parts`` byte ranges run by ``run_parts``."""
    if spec is None:
        return MemoryCases(()), None
    indexer = None if episodes is None else EpisodeIndexer(episodes)
    cases: Cases
    if spec.file is not None:
        case_path = base / spec.file
        where = display_path(case_path)
        ref = CaseFileRef(label, line_locator(text)(("cases", "file")), spec.file)
        cases = read_case_file(
            case_path,
            where,
            spec.format,
            spec.confidence,
            problems,
            ref,
            indexer,
            audit,
            drafts=drafts,
            parts=parts,
            run_parts=run_parts,
        )
    else:
        where = label
        raw_items = data["cases"]["inline"]
        records = inline_records(raw_items, line_locator(text, ("cases", "inline")))
        cases = MemoryCases(
            build_cases(
                records,
                label,
                spec.format,
                spec.confidence,
                problems,
                indexer,
                None if audit is None else audit.add,
                drafts=drafts,
            )
        )
    if indexer is None or problems:
        return cases, None
    index, bad = indexer.finish(where)
    problems.extend(format_problem(where, line, c, loc, m) for line, c, loc, m in bad)
    return cases, index


def _episode_threshold_problems(
    model: SuiteModel, label: str, locate: Any, problems: list[str]
) -> None:
    """Episode thresholds need ``episodes:``."""
    marked = [
        name
        for name, info in ThresholdsSpec.model_fields.items()
        if isinstance(info.json_schema_extra, dict)
        and info.json_schema_extra.get("x-episode-metric")
    ]
    for key in (*marked, "per_turn"):
        if getattr(model.thresholds, key) is not None and model.episodes is None:
            where = locate(("thresholds", key))
            message = "needs episodes ('episodes: {by: ..., order: ...}')"
            problems.append(format_problem(label, where, None, f"thresholds.{key}", message))


def _load_checks(
    specs_by_pattern: Mapping[str, list[dict[str, Any]]],
    label: str,
    locate: Any,
    problems: list[str],
) -> dict[str, tuple[Criterion, ...]]:
    """The ``checks:`` section of a suite or monitor file, parsed (one problem per bad entry)."""
    out: dict[str, tuple[Criterion, ...]] = {}
    for pattern, specs in specs_by_pattern.items():
        try:
            out[pattern] = tuple(parse_criteria(specs))
        except StatevalError as exc:
            where = locate(("checks", pattern))
            problems.append(format_problem(label, where, None, f"checks.{pattern}", str(exc)))
    return out


def _describe_spec(model: SuiteModel) -> str:
    spec = model.mutator
    if isinstance(spec, PythonMutatorSpec):
        return f"python:{spec.callable}"
    if isinstance(spec, ReplayMutatorSpec):
        return f"replay:{spec.predictions or 'cases'}"
    return f"llm:{spec.model}"
