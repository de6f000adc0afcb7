"""Cases: reading them from JSONL / JSON / CSV or inline, with one problem line per mistake."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple, Protocol

import orjson
from pydantic import ValidationError

from stateval.calibration import HUMAN_LABELS, HumanVerdict
from stateval.errors import StateError, SuiteError
from stateval.mutators import StructuredInput
from stateval.state import InterpretiveState
from stateval.suite._case import UNREVIEWED, Case, review_status
from stateval.suite._case_spec import PlainCaseSpec, case_spec
from stateval.suite._documents import DocumentError, parse_json
from stateval.suite._episodes import EpisodeIndexer, episode_keys
from stateval.suite._models import CaseSpec, EpisodesSpec, HumanVerdictSpec
from stateval.suite._problems import (
    Loc,
    Locate,
    format_problem,
    line_locator,
    pydantic_message,
)

__all__ = [
    "PLAIN_LINE",
    "POST_STRINGS",
    "PRE_STRINGS",
    "CaseFileRef",
    "SeenIds",
    "build_case",
    "build_cases",
    "duplicate_problem",
    "read_state",
]

StateFormat = Literal["flat", "nested"]

_CSV_COLUMNS = (
    "id",
    "pre_state",
    "prompt",
    "message_id",
    "input_metadata",
    "expected_post_state",
    "actual_post_state",
    "metadata",
    "human",
)
_CSV_JSON_COLUMNS = frozenset(
    {"pre_state", "input_metadata", "expected_post_state", "actual_post_state", "metadata", "human"}
)


def read_state(
    data: Mapping[str, Any], fmt: StateFormat, confidence: float, *, checked: bool = False
) -> InterpretiveState:
    """A state as a suite writes it: the candidate form, or flat / nested values (with
    ``checked``, flat values read before from an unchanged line: kept as they are, see
    `InterpretiveState.from_flat`)."""
    fields = data.get("fields")
    if (
        len(data) == 1
        and isinstance(fields, Mapping)
        and all(isinstance(v, list) for v in fields.values())
    ):
        return InterpretiveState.from_dict(data)
    if fmt == "nested":
        return InterpretiveState.from_nested(data, confidence=confidence)
    return InterpretiveState.from_flat(data, confidence=confidence, checked=checked)


def _human_verdict(given: str | HumanVerdictSpec) -> HumanVerdict:
    if isinstance(given, HumanVerdictSpec):
        return HumanVerdict(HUMAN_LABELS[given.verdict], given.actual, pinned=True)
    return HumanVerdict(HUMAN_LABELS[given])


def build_case(
    spec: CaseSpec | PlainCaseSpec,
    fmt: StateFormat,
    confidence: float,
    episodes: EpisodesSpec | None = None,
    *,
    checked: bool = False,
) -> tuple[Case | None, list[tuple[Loc, str]]]:
    """Turn a validated `CaseSpec` into a `Case`, or the ``(location, message)`` problems.

    An unreviewed draft without ``expected_post_state`` is neither: ``(None, [])``. With
    ``episodes``, the case's episode and turn index are read from its metadata. With
    ``checked``, the spec was read from a line built into a case before and unchanged since:
    its flat states and metadata are not checked again."""
    problems: list[tuple[Loc, str]] = []
    episode_id: str | None = None
    turn_index: int | None = None
    if episodes is not None:
        episode_id, turn_index, bad = episode_keys(spec.metadata, episodes)
        problems.extend(bad)
    states: dict[str, InterpretiveState] = {}
    if spec.expected_post_state is None:
        if review_status(spec.metadata) == UNREVIEWED:
            return None, problems
        problems.append(
            (("expected_post_state",), "required (only an unreviewed draft may leave it out)")
        )
    for name in ("pre_state", "expected_post_state"):
        given = getattr(spec, name)
        if given is None:
            continue
        try:
            states[name] = read_state(given, fmt, confidence, checked=checked)
        except StateError as exc:
            path = getattr(exc, "path", None)
            problems.append(((name, path) if isinstance(path, str) else (name,), str(exc)))
    try:
        case_input = StructuredInput(
            prompt=spec.input.prompt,
            message_id=spec.input.message_id or spec.id,
            metadata=spec.input.metadata,
        )
    except StateError as exc:
        problems.append((("input", "metadata"), str(exc)))
    try:
        if spec.metadata and not checked:
            json.dumps(spec.metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        problems.append((("metadata",), f"not JSON: {exc}"))
    if problems:
        return None, problems
    case = Case(
        spec.id,
        states["pre_state"],
        case_input,
        states["expected_post_state"],
        dict(spec.metadata),
        {path: _human_verdict(given) for path, given in spec.human.items()},
        spec.actual_post_state,
        episode_id,
        turn_index,
    )
    return case, []


class _Record(NamedTuple):  # made per case line: a tuple costs a third of a frozen dataclass
    data: object
    line: int | None
    locate: Locate
    parsed: bool = False  # parsed from JSON text: every object key is a string


def _case_id(data: object) -> str | None:
    if isinstance(data, Mapping):
        value = data.get("id")
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)
    return None


@dataclass(frozen=True, slots=True)
class CaseFileRef:
    """Where the suite names its case file: ``suite.yaml``, its line, the value written."""

    suite: str
    line: int | None
    written: str

    def problem(self, message: str) -> str:
        """``suite.yaml:LINE: cases.file: message``."""
        return format_problem(self.suite, self.line, None, "cases.file", message)


PLAIN_LINE: Final = 1
"""A line's kind (`FileCases`): the load pass parsed it with orjson alone and found it a plain
case (`stateval.suite._case_line`): a record of the plain shape (`plain_spec`), flat states
of known paths and JSON values, not empty and not in the candidate form, no episode
problem."""
PRE_STRINGS: Final = 2
"""A line's kind: with `PLAIN_LINE`, every value of its pre-state is a string."""
POST_STRINGS: Final = 4
"""A line's kind: with `PLAIN_LINE`, every value of its expected post-state is a string."""


def _case_from_line(
    raw: bytes,
    kind: int,
    fmt: StateFormat,
    confidence: float,
    episodes: EpisodesSpec | None,
) -> Case:
    """One case from a JSONL line validated when the suite was loaded and unchanged since
    (`FileCases` compares its checksum), of ``kind`` (what the load pass found of it): what
    was checked then (the limits of its JSON, the paths and values of its flat states, its
    metadata, a plain line's shape) is not checked again."""
    if kind & PLAIN_LINE:
        return _plain_line_case(orjson.loads(raw), kind, confidence, episodes)
    try:
        spec = case_spec(parse_json(raw, checked=True))
    except (ValueError, ValidationError, DocumentError) as exc:
        raise SuiteError(f"not a valid case: {exc}") from exc
    if isinstance(spec, PlainCaseSpec):
        return _plain_case(spec, fmt, confidence, episodes)
    case, bad = build_case(spec, fmt, confidence, episodes, checked=True)
    if case is None:
        raise SuiteError(f"not a valid case: {bad[0][1]}")
    return case


def _plain_case(
    spec: PlainCaseSpec, fmt: StateFormat, confidence: float, episodes: EpisodesSpec | None
) -> Case:
    """The case `build_case` makes of a plain spec read again from an unchanged line (what
    a line read again costs is most of a run's reading: this is that path without its
    problem bookkeeping; `build_case` made the same case of it when the suite was loaded).

    Raises:
        SuiteError: The case's episode keys are not what they were when it was loaded.
    """
    episode_id: str | None = None
    turn_index: int | None = None
    if episodes is not None:
        episode_id, turn_index, bad = episode_keys(spec.metadata, episodes)
        if bad:
            raise SuiteError(f"not a valid case: {bad[0][1]}")
    given = spec.input
    try:
        pre = read_state(spec.pre_state, fmt, confidence, checked=True)
        expected = read_state(spec.expected_post_state, fmt, confidence, checked=True)
        case_input = StructuredInput(given.prompt, given.message_id or spec.id, given.metadata)
    except StateError as exc:
        raise SuiteError(f"not a valid case: {exc}") from exc
    return Case(
        spec.id,
        pre,
        case_input,
        expected,
        spec.metadata,  # parsed from the line for this case alone: not copied
        {},
        spec.actual_post_state,
        episode_id,
        turn_index,
    )


def _plain_line_case(
    data: dict[str, Any], kind: int, confidence: float, episodes: EpisodesSpec | None
) -> Case:
    """`_plain_case` of a line the load pass found plain (`PLAIN_LINE`), parsed again by
    orjson as it was then: its shape, states and input are taken as they are (the strings
    in its states as ``kind`` says), none of it checked again or copied."""
    case_id = data["id"]
    metadata = data.get("metadata")
    if metadata is None:
        metadata = {}
    episode_id: str | None = None
    turn_index: int | None = None
    if episodes is not None:
        episode_id, turn_index, bad = episode_keys(metadata, episodes)
        if bad:
            raise SuiteError(f"not a valid case: {bad[0][1]}")
    given = data["input"]
    given_metadata = given.get("metadata")
    case_input = StructuredInput.of_checked(
        given["prompt"],
        given.get("message_id") or case_id,
        {} if given_metadata is None else given_metadata,
    )
    from_flat = InterpretiveState.from_flat
    return Case(
        case_id,
        from_flat(data["pre_state"], confidence, checked=True, all_strings=kind & PRE_STRINGS > 0),
        case_input,
        from_flat(
            data["expected_post_state"],
            confidence,
            checked=True,
            all_strings=kind & POST_STRINGS > 0,
        ),
        metadata,  # parsed from the line for this case alone: not copied
        {},
        data.get("actual_post_state"),
        episode_id,
        turn_index,
    )


class SeenIds(Protocol):
    """The ids read so far and each one's line (a dict; a split load logs them instead, and
    finds the duplicates when its parts are combined)."""

    def __contains__(self, case_id: object, /) -> bool: ...
    def __getitem__(self, case_id: str, /) -> int | None: ...
    def __setitem__(self, case_id: str, line: int | None, /) -> None: ...


def duplicate_problem(label: str, line: int | None, case_id: str, first: int | None) -> str:
    """The problem line of a case id read again (``first``: the line of its first case)."""
    where = f" (first at line {first})" if first else ""
    return format_problem(label, line, case_id, "id", f"duplicate case id{where}")


def build_cases(
    records: Sequence[_Record],
    label: str,
    fmt: StateFormat,
    confidence: float,
    problems: list[str],
    episodes: EpisodeIndexer | None = None,
    visit: Callable[[Case], None] | None = None,
    *,
    drafts: list[str] | None = None,
) -> list[Case]:
    """Validate records as cases; duplicates and bad fields become problems; ``visit`` is
    called with each valid case; the ids of unreviewed drafts are appended to ``drafts``. With
    ``episodes``, each case's episode and turn are handed to the indexer."""
    cases: list[Case] = []
    seen: dict[str, int | None] = {}
    for record in records:
        case = _build_record(record, label, fmt, confidence, problems, seen, episodes, drafts)
        if case is not None:
            cases.append(case)
            if visit is not None:
                visit(case)
    return cases


def _build_record(
    record: _Record,
    label: str,
    fmt: StateFormat,
    confidence: float,
    problems: list[str],
    seen: SeenIds,
    episodes: EpisodeIndexer | None = None,
    drafts: list[str] | None = None,
) -> Case | None:
    """One record as a case (None when it has problems, which are appended, or when it is an
    unreviewed draft, whose id is appended to ``drafts``)."""
    case_id = _case_id(record.data)
    try:
        spec = case_spec(record.data) if record.parsed else CaseSpec.model_validate(record.data)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(error["loc"])
            problems.append(
                format_problem(label, record.locate(loc), case_id, loc, pydantic_message(error))
            )
        return None
    case, bad = build_case(spec, fmt, confidence, None if episodes is None else episodes.spec)
    for loc, message in bad:
        problems.append(format_problem(label, record.locate(loc), spec.id, loc, message))
    if spec.id in seen:
        problems.append(duplicate_problem(label, record.line, spec.id, seen[spec.id]))
        return None
    seen[spec.id] = record.line
    if case is None and not bad and drafts is not None:
        drafts.append(spec.id)
    if episodes is not None and case is not None:
        assert case.episode_id is not None
        assert case.turn_index is not None
        empty = not case.pre_state.paths()
        episodes.add(case.episode_id, case.turn_index, case.id, record.line, empty, case.metadata)
    return case


def inline_records(items: Sequence[object], locate: Locate) -> list[_Record]:
    """Records for cases written inline in the suite file (``cases.inline``)."""
    return [
        _Record(item, locate((i,)), lambda loc, i=i: locate((i, *loc)))  # type: ignore[misc]
        for i, item in enumerate(items)
    ]


def _json_records(text: str, label: str, problems: list[str]) -> list[_Record]:
    try:
        data = parse_json(text)
    except DocumentError as exc:
        problems.append(format_problem(label, exc.line, None, None, exc.message))
        return []
    base: Loc = ()
    if isinstance(data, Mapping) and isinstance(data.get("cases"), list):
        data, base = data["cases"], ("cases",)
    if not isinstance(data, list):
        problems.append(
            format_problem(label, 1, None, None, 'expected a list of cases (or {"cases": [...]})')
        )
        return []
    return inline_records(data, line_locator(text, base))


def _csv_records(text: str, label: str, problems: list[str]) -> list[_Record]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    columns = reader.fieldnames or []
    unknown = [c for c in columns if c not in _CSV_COLUMNS]
    if unknown or "id" not in columns:
        known = ", ".join(_CSV_COLUMNS)
        what = f"unknown column(s) {unknown}" if unknown else "no 'id' column"
        problems.append(format_problem(label, 1, None, None, f"{what}; columns are: {known}"))
        return []
    records: list[_Record] = []
    start = 2
    for row in reader:
        number, start = start, reader.line_num + 1
        data: dict[str, Any] = {}
        bad = False
        for column, cell in row.items():
            if column is None or cell is None:
                problems.append(
                    format_problem(label, number, row.get("id"), None, "wrong number of cells")
                )
                bad = True
                break
            if column in _CSV_JSON_COLUMNS:
                if not cell.strip():
                    continue
                try:
                    data[column] = parse_json(cell)
                except DocumentError as exc:
                    problems.append(
                        format_problem(label, number, row.get("id"), column, exc.message)
                    )
                    bad = True
            elif cell != "" or column in ("id", "prompt"):
                data[column] = cell
        if bad:
            continue
        case_input = {"prompt": data.pop("prompt", None)}
        if case_input["prompt"] is None:
            del case_input["prompt"]
        if "message_id" in data:
            case_input["message_id"] = data.pop("message_id")
        if "input_metadata" in data:
            case_input["metadata"] = data.pop("input_metadata")
        data["input"] = case_input
        records.append(_Record(data, number, lambda _loc, n=number: n))  # type: ignore[misc]
    return records
