"""The Phoenix REST wire format stateval reads, and the records it writes.

Responses are validated with pydantic models that *ignore* unknown fields (unlike stateval's own
boundary models): they belong to a server that adds fields between releases, and a newer Phoenix
must not break an older stateval. Only the fields stateval uses are declared.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, RootModel

__all__ = [
    "CASE_ID_KEY",
    "AnnotatorKind",
    "DatasetRef",
    "EvaluationRecord",
    "Example",
    "ExperimentRef",
    "RunRecord",
    "SessionAnnotationRecord",
    "SpanAnnotationRecord",
    "StoredEvaluation",
    "StoredRun",
    "StoredSession",
    "StoredSessionAnnotation",
    "StoredSpanAnnotation",
]

AnnotatorKind: TypeAlias = Literal["CODE", "LLM", "HUMAN"]

CASE_ID_KEY = "case_id"
"""The example metadata key that holds the case id (also sent as Phoenix's external example id)."""


def _now() -> datetime:
    return datetime.now(UTC)


# -- what stateval sends ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Example:
    """One dataset example: a case's input, expected output and metadata, under a stable id.

    The id is stored as Phoenix's external example id and in ``metadata["case_id"]``. With a
    ``span_id`` (16 hex digits) the example links to that span ("View Source Span" in the UI).
    """

    case_id: str
    input: Mapping[str, Any]
    output: Mapping[str, Any]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    span_id: str | None = None

    def stored_metadata(self) -> dict[str, Any]:
        """The metadata as uploaded: the given keys plus the case id."""
        return {**self.metadata, CASE_ID_KEY: self.case_id}


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One experiment run (one task call on one example) to upload."""

    example_id: str
    output: Any
    start_time: datetime
    end_time: datetime
    error: str | None = None
    trace_id: str | None = None
    repetition: int = 1

    def body(self) -> dict[str, Any]:
        """The JSON body of ``POST /v1/experiments/{id}/runs``."""
        body: dict[str, Any] = {
            "dataset_example_id": self.example_id,
            "output": self.output,
            "repetition_number": self.repetition,
            "start_time": self.start_time.isoformat(),
            "end_time": self.end_time.isoformat(),
        }
        if self.error is not None:
            body["error"] = self.error
        if self.trace_id is not None:
            body["trace_id"] = self.trace_id
        return body


@dataclass(frozen=True, slots=True)
class EvaluationRecord:
    """One evaluation of one experiment run to upload (upserted by run and name)."""

    run_id: str
    name: str
    annotator_kind: AnnotatorKind = "CODE"
    score: float | None = None
    label: str | None = None
    explanation: str | None = None
    error: str | None = None
    start_time: datetime = field(default_factory=_now)
    end_time: datetime = field(default_factory=_now)
    metadata: Mapping[str, Any] | None = None
    trace_id: str | None = None

    def body(self) -> dict[str, Any]:
        """The JSON body of ``POST /v1/experiment_evaluations``."""
        body: dict[str, Any] = {
            "experiment_run_id": self.run_id,
            "name": self.name,
            "annotator_kind": self.annotator_kind,
            "start_time": self.start_time.isoformat(),
            "end_time": self.end_time.isoformat(),
        }
        if self.error is not None:
            body["error"] = self.error
        if self.error is None or any(
            v is not None for v in (self.score, self.label, self.explanation)
        ):
            body["result"] = {
                "score": self.score,
                "label": self.label,
                "explanation": self.explanation,
            }
        if self.metadata:
            body["metadata"] = dict(self.metadata)
        if self.trace_id is not None:
            body["trace_id"] = self.trace_id
        return body


@dataclass(frozen=True, slots=True)
class SpanAnnotationRecord:
    """One annotation of one span to upload (upserted by span, name and ``identifier``).

    Attributes:
        span_id: The span's OpenTelemetry id, 16 hex digits.
        name: The annotation's name (``field:<path>``).
        identifier: Distinguishes annotations of one name on one span; the same triple
            replaces what was stored (so posting twice stores one annotation).
    """

    span_id: str
    name: str
    annotator_kind: AnnotatorKind = "CODE"
    score: float | None = None
    label: str | None = None
    explanation: str | None = None
    metadata: Mapping[str, Any] | None = None
    identifier: str = ""

    def body(self) -> dict[str, Any]:
        """One item of the ``data`` list of ``POST /v1/span_annotations``."""
        return _annotation_body({"span_id": self.span_id}, self)


@dataclass(frozen=True, slots=True)
class SessionAnnotationRecord:
    """One annotation of one session (an episode) to upload (upserted by session, name and
    ``identifier``).

    Attributes:
        session_id: The session, as its spans' ``session.id`` names it.
        name: The annotation's name (``episode_success``, ...).
        identifier: Distinguishes annotations of one name on one session; the same triple
            replaces what was stored (so posting twice stores one annotation).
    """

    session_id: str
    name: str
    annotator_kind: AnnotatorKind = "CODE"
    score: float | None = None
    label: str | None = None
    explanation: str | None = None
    metadata: Mapping[str, Any] | None = None
    identifier: str = ""

    def body(self) -> dict[str, Any]:
        """One item of the ``data`` list of ``POST /v1/session_annotations``."""
        return _annotation_body({"session_id": self.session_id}, self)


def _annotation_body(
    target: dict[str, Any], record: SpanAnnotationRecord | SessionAnnotationRecord
) -> dict[str, Any]:
    """The upload body of a span or session annotation: ``target`` names what it annotates."""
    body = {
        **target,
        "name": record.name,
        "annotator_kind": record.annotator_kind,
        "result": {"score": record.score, "label": record.label, "explanation": record.explanation},
        "identifier": record.identifier,
    }
    if record.metadata:
        body["metadata"] = dict(record.metadata)
    return body


# -- what stateval gets back ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DatasetRef:
    """A dataset version on the server holding a given set of examples.

    Attributes:
        id: The dataset id.
        name: The dataset name.
        version_id: The version holding exactly the examples asked for.
        example_ids: Case id to Phoenix example id (what runs refer to).
        content_hash: Hash of the examples' ids and content.
        uploaded: False when the server already had this content and nothing was sent.
    """

    id: str
    name: str
    version_id: str
    example_ids: Mapping[str, str]
    content_hash: str
    uploaded: bool


@dataclass(frozen=True, slots=True)
class ExperimentRef:
    """An experiment on the server.

    Attributes:
        id: The experiment id.
        name: Its name.
        dataset_id: The dataset it runs over.
        dataset_version_id: The dataset version it runs over.
        project_name: The Phoenix project Phoenix made for its traces.
        url: Where the experiment opens in the Phoenix UI.
        metadata: Its metadata.
    """

    id: str
    name: str
    dataset_id: str
    dataset_version_id: str
    project_name: str | None
    url: str
    metadata: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StoredRun:
    """An experiment run as the server holds it."""

    id: str
    example_id: str
    output: Any
    error: str | None
    trace_id: str | None
    repetition: int
    start_time: datetime
    end_time: datetime


@dataclass(frozen=True, slots=True)
class StoredEvaluation:
    """An experiment evaluation as the server holds it."""

    run_id: str
    example_id: str
    name: str
    annotator_kind: str
    score: float | None
    label: str | None
    explanation: str | None
    error: str | None
    metadata: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StoredSpanAnnotation:
    """A span annotation as the server holds it."""

    span_id: str
    name: str
    annotator_kind: str
    score: float | None
    label: str | None
    explanation: str | None
    identifier: str
    metadata: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StoredSessionAnnotation:
    """A session annotation as the server holds it."""

    session_id: str
    name: str
    annotator_kind: str
    score: float | None
    label: str | None
    explanation: str | None
    identifier: str
    metadata: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session of a project as the server holds it.

    Attributes:
        session_id: Its id (the ``session.id`` of its spans).
        trace_ids: The traces in it, oldest first.
    """

    session_id: str
    trace_ids: tuple[str, ...]


# -- response models --------------------------------------------------------------------------


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class DatasetWire(_Wire):
    id: str
    name: str


class DatasetListWire(_Wire):
    data: list[DatasetWire]
    next_cursor: str | None = None


class UploadWire(_Wire):
    class Data(_Wire):
        dataset_id: str
        version_id: str

    data: Data


class ExampleWire(_Wire):
    id: str
    node_id: str | None = None
    input: dict[str, Any]
    output: dict[str, Any]
    metadata: dict[str, Any]


class ExamplesWire(_Wire):
    class Data(_Wire):
        dataset_id: str
        version_id: str
        examples: list[ExampleWire]

    data: Data


class ExperimentWire(_Wire):
    id: str
    name: str
    dataset_id: str
    dataset_version_id: str
    project_name: str | None = None
    metadata: dict[str, Any] = {}


class ExperimentBodyWire(_Wire):
    data: ExperimentWire


class ExperimentListWire(_Wire):
    data: list[ExperimentWire]
    next_cursor: str | None = None


class IdWire(_Wire):
    class Data(_Wire):
        id: str

    data: Data


class RunWire(_Wire):
    id: str
    dataset_example_id: str
    output: Any = None
    error: str | None = None
    trace_id: str | None = None
    repetition_number: int
    start_time: datetime
    end_time: datetime


class RunListWire(_Wire):
    data: list[RunWire]
    next_cursor: str | None = None


class AnnotationWire(_Wire):
    name: str
    annotator_kind: str
    score: float | None = None
    label: str | None = None
    explanation: str | None = None
    error: str | None = None
    metadata: dict[str, Any] | None = None


class ListedAnnotationWire(_Wire):
    """A span or session annotation as ``GET /v1/projects/{name}/{span,session}_annotations``
    lists it (the one id the listing is about is set)."""

    class Result(_Wire):
        score: float | None = None
        label: str | None = None
        explanation: str | None = None

    span_id: str = ""
    session_id: str = ""
    name: str
    annotator_kind: str
    result: Result | None = None
    identifier: str = ""
    metadata: dict[str, Any] | None = None
    id: str = ""
    updated_at: datetime = datetime.min.replace(tzinfo=UTC)
    source: str | None = None
    user_id: str | None = None

    def stored(self) -> dict[str, Any]:
        """What a stored span or session annotation holds besides its target's id."""
        result = self.result
        return {
            "name": self.name,
            "annotator_kind": self.annotator_kind,
            "score": None if result is None else result.score,
            "label": None if result is None else result.label,
            "explanation": None if result is None else result.explanation,
            "identifier": self.identifier,
            "metadata": self.metadata or {},
        }


class AnnotationPageWire(_Wire):
    data: list[ListedAnnotationWire]
    next_cursor: str | None = None


class SessionWire(_Wire):
    class Trace(_Wire):
        trace_id: str

    session_id: str
    traces: list[Trace] = []


class SessionListWire(_Wire):
    data: list[SessionWire]
    next_cursor: str | None = None


class InsertedListWire(_Wire):
    class Item(_Wire):
        id: str

    data: list[Item]


class ExportedRunWire(_Wire):
    example_id: str
    repetition_number: int
    annotations: list[AnnotationWire] = []


class ExportWire(RootModel[list[ExportedRunWire]]):
    """The body of ``GET /v1/experiments/{id}/json``: runs with their evaluations."""


# -- content identity -------------------------------------------------------------------------


def content_hash(items: Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any], Any]]) -> str:
    """A hash of (case id, input, output, metadata) tuples, independent of their order."""
    canonical = sorted(
        json.dumps(list(item), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        for item in items
    )
    digest = hashlib.sha256()
    for line in canonical:
        digest.update(line.encode())
        digest.update(b"\n")
    return digest.hexdigest()
