"""Uploading to a Phoenix server over REST: the wire records and the uploader.

Imports nothing from ``phoenix.*`` (plain ``httpx``), so the start of a run stays fast. A new
upload mode goes here.
"""

from __future__ import annotations

from stateval.upload._batcher import AnnotationBatcher
from stateval.upload._modes import (
    UPLOAD_MODES,
    ModeSpec,
    UploadMode,
    as_annotation,
    as_evaluation,
)
from stateval.upload._notes import NOTE_NAME, StoredSpanNote
from stateval.upload._rest import (
    CASE_ID_KEY,
    AnnotatorKind,
    DatasetRef,
    EvaluationRecord,
    Example,
    ExperimentRef,
    RunRecord,
    SessionAnnotationRecord,
    SpanAnnotationRecord,
    StoredEvaluation,
    StoredRun,
    StoredSession,
    StoredSessionAnnotation,
    StoredSpanAnnotation,
)
from stateval.upload._shared import SHARED_KEY
from stateval.upload._spans import SpanFilter, StoredSpan, span_cursor, span_row
from stateval.upload._uploader import PhoenixUploader

__all__ = [
    "CASE_ID_KEY",
    "NOTE_NAME",
    "SHARED_KEY",
    "UPLOAD_MODES",
    "AnnotationBatcher",
    "AnnotatorKind",
    "DatasetRef",
    "EvaluationRecord",
    "Example",
    "ExperimentRef",
    "ModeSpec",
    "PhoenixUploader",
    "RunRecord",
    "SessionAnnotationRecord",
    "SpanAnnotationRecord",
    "SpanFilter",
    "StoredEvaluation",
    "StoredRun",
    "StoredSession",
    "StoredSessionAnnotation",
    "StoredSpan",
    "StoredSpanAnnotation",
    "StoredSpanNote",
    "UploadMode",
    "as_annotation",
    "as_evaluation",
    "span_cursor",
    "span_row",
]
