"""Production traces scored without gold: monitor spans in Phoenix, verdicts back on the spans.

A monitor file (`stateval.suite.load_monitor`) names a Phoenix project's mutator-call spans and
where their states are (``_mapping.py``); the reader pages them in storage order with a
watermark (``_reader.py``); the no-gold checks (``_checks.py``, a table) look at every field of
every call, grounding values in the input with ``_grounding.py``; the optional LLM judge asks
whether a value is supported by the input (``_judge.py``). ``_score.py`` runs a monitor
(`score_traces` over one `TracesRequest`), writing verdicts as span and session annotations
(``_verdicts.py``), counting them (``_summary.py``) and keeping the watermark and the journal of
an interrupted run (``_progress.py``). Spans become drafts to review (``_export.py``), people
correct them with span notes (``_corrections.py``), and the corrections become gold
(``_import.py``).
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
    Draft,
    ExportOptions,
    ExportResult,
    export_drafts,
    gold_suite,
    review_queue,
    sample_drafts,
)
from stateval.traces._figures import (
    RATES_SPAN,
    RECALL_SPAN,
    PublishedFigures,
    publish_figures,
    rate_annotations,
    recall_annotations,
)
from stateval.traces._grounding import FORMS, Grounding
from stateval.traces._import import ImportResult, import_corrections
from stateval.traces._judge import JUDGE_PROMPT, SupportJudge, judge_calls
from stateval.traces._mapping import AttributePointer, MappedCall, SpanMapping, Unmapped
from stateval.traces._progress import MonitorProgress
from stateval.traces._rates import FieldRates, RateTally, ReviewedCase
from stateval.traces._reader import SpanPage, SpanWindow, in_sample, read_calls, span_filter
from stateval.traces._recall import (
    DEFAULT_OPERATORS,
    CallSample,
    MonitorRecall,
    RecallTally,
    Survivor,
    measure_recall,
    sample_calls,
)
from stateval.traces._score import TracesRequest, score_traces
from stateval.traces._summary import FieldFlagRate, TracesSummary, TracesTally
from stateval.traces._verdicts import (
    FLAG_PREFIX,
    SUMMARY_NAME,
    EpisodeTally,
    flag_name,
    identifier,
    session_records,
    span_records,
)

__all__ = [
    "ABSENT",
    "CHECKS",
    "CHECK_NAMES",
    "DEFAULT_OPERATORS",
    "FLAG_PREFIX",
    "FORMS",
    "JUDGE_PROMPT",
    "PASSED",
    "RATES_SPAN",
    "RECALL_SPAN",
    "SUMMARY_NAME",
    "AttributePointer",
    "CallSample",
    "CallVerdict",
    "Draft",
    "EpisodeTally",
    "ExportOptions",
    "ExportResult",
    "FieldFlag",
    "FieldFlagRate",
    "FieldRates",
    "FieldView",
    "Grounding",
    "ImportResult",
    "MappedCall",
    "Monitor",
    "MonitorModel",
    "MonitorProgress",
    "MonitorRecall",
    "NoGoldChecks",
    "PublishedFigures",
    "RateTally",
    "RecallTally",
    "Review",
    "ReviewedCase",
    "SpanMapping",
    "SpanNote",
    "SpanPage",
    "SpanWindow",
    "SupportJudge",
    "Survivor",
    "TracesRequest",
    "TracesSpec",
    "TracesSummary",
    "TracesTally",
    "Unmapped",
    "correction_note",
    "export_drafts",
    "flag_name",
    "gold_suite",
    "identifier",
    "import_corrections",
    "in_sample",
    "judge_calls",
    "load_monitor",
    "measure_recall",
    "publish_figures",
    "rate_annotations",
    "read_calls",
    "read_review",
    "recall_annotations",
    "review_queue",
    "sample_calls",
    "sample_drafts",
    "score_traces",
    "session_records",
    "span_filter",
    "span_records",
]
