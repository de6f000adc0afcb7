"""Production traces scored without gold: monitor spans in Phoenix, verdicts back on the spans.

A monitor file (`stateval.suite.load_monitor`) names a Phoenix project's mutator-call spans and
where their states are (``_mapping.py``); the reader pages them in storage order with a
watermark (``_reader.py``); the no-gold checks (``_checks.py``, a table) look at every field of
every call, grounding values in the input with ``_grounding.py``. Spans become drafts to review
(``_export.py``), people correct them with span notes (``_corrections.py``), and the
corrections become gold (``_import.py``).
"""

from __future__ import annotations

from stateval.suite import Monitor, MonitorModel, TracesSpec, load_monitor
from stateval.traces._checks import (
    CHECK_NAMES,
    CHECKS,
    PASSED,
    CallVerdict,
    FieldFlag,
    FieldView,
    NoGoldChecks,
)
from stateval.traces._corrections import (
    ABSENT,
    Review,
    SpanNote,
    correction_note,
    read_review,
)
from stateval.traces._export import (
    FLAGS_ANNOTATION,
    Draft,
    ExportOptions,
    ExportResult,
    export_drafts,
    gold_suite,
    review_queue,
    sample_drafts,
)
from stateval.traces._grounding import FORMS, Grounding
from stateval.traces._import import ImportResult, import_corrections
from stateval.traces._mapping import AttributePointer, MappedCall, SpanMapping, Unmapped
from stateval.traces._reader import SpanPage, SpanWindow, in_sample, read_calls, span_filter
from stateval.traces._recall import (
    DEFAULT_OPERATORS,
    MonitorRecall,
    RecallTally,
    Survivor,
    measure_recall,
)

__all__ = [
    "ABSENT",
    "CHECKS",
    "CHECK_NAMES",
    "DEFAULT_OPERATORS",
    "FLAGS_ANNOTATION",
    "FORMS",
    "PASSED",
    "AttributePointer",
    "CallVerdict",
    "Draft",
    "ExportOptions",
    "ExportResult",
    "FieldFlag",
    "FieldView",
    "Grounding",
    "ImportResult",
    "MappedCall",
    "Monitor",
    "MonitorModel",
    "MonitorRecall",
    "NoGoldChecks",
    "RecallTally",
    "Review",
    "SpanMapping",
    "SpanNote",
    "SpanPage",
    "SpanWindow",
    "Survivor",
    "TracesSpec",
    "Unmapped",
    "correction_note",
    "export_drafts",
    "gold_suite",
    "import_corrections",
    "in_sample",
    "load_monitor",
    "measure_recall",
    "read_calls",
    "read_review",
    "review_queue",
    "sample_drafts",
    "span_filter",
]
