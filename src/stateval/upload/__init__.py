"""The Phoenix edge: every Phoenix write and read of stateval, over REST.

The wire records and the uploader (datasets, experiments, span and session annotations, span
and annotation reads), the upload modes, and a run's side of Phoenix: the server to report to
(`resolve_phoenix`), the run reported to Phoenix (`run_suite`: traced mutator calls, the
`PhoenixSink` the runner hands scored cases to, the `ExperimentWriter`, episodes as sessions)
and a rescoring logged as a new experiment (`rescore_to_phoenix`). `stateval.run` does no
Phoenix I/O itself: it hands records to the sink and span protocols implemented here.

Imports nothing from ``phoenix.*`` (plain ``httpx``), so the start of a run stays fast. A new
upload mode goes here.
"""

from __future__ import annotations

from stateval.upload._batcher import AnnotationBatcher
from stateval.upload._episode_sessions import session_run
from stateval.upload._experiment_writer import ExperimentSpec, ExperimentWriter, create_experiment
from stateval.upload._modes import (
    UPLOAD_MODES,
    ModeSpec,
    UploadMode,
    as_annotation,
    as_evaluation,
)
from stateval.upload._notes import NOTE_NAME, StoredSpanNote
from stateval.upload._rescore import rescore_to_phoenix
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
from stateval.upload._run import run_suite
from stateval.upload._shared import SHARED_KEY
from stateval.upload._sink import PhoenixSink
from stateval.upload._spans import SpanFilter, StoredSpan, span_cursor, span_row
from stateval.upload._target import check_phoenix_url, resolve_phoenix
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
    "ExperimentSpec",
    "ExperimentWriter",
    "ModeSpec",
    "PhoenixSink",
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
    "check_phoenix_url",
    "create_experiment",
    "rescore_to_phoenix",
    "resolve_phoenix",
    "run_suite",
    "session_run",
    "span_cursor",
    "span_row",
]
