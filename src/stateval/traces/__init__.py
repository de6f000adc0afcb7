"""Production traces scored without gold: monitor spans in Phoenix, verdicts back on the spans.

A monitor file (`stateval.suite.load_monitor`) names a Phoenix project's mutator-call spans and
where their states are (``_mapping.py``); the reader pages them in storage order with a
watermark (``_reader.py``); the no-gold checks (``_checks.py``, a table) look at every field of
every call, grounding values in the input with ``_grounding.py``.
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
from stateval.traces._grounding import FORMS, Grounding
from stateval.traces._mapping import AttributePointer, MappedCall, SpanMapping, Unmapped
from stateval.traces._reader import SpanPage, SpanWindow, in_sample, read_calls, span_filter

__all__ = [
    "CHECKS",
    "CHECK_NAMES",
    "FORMS",
    "PASSED",
    "AttributePointer",
    "CallVerdict",
    "FieldFlag",
    "FieldView",
    "Grounding",
    "MappedCall",
    "Monitor",
    "MonitorModel",
    "NoGoldChecks",
    "SpanMapping",
    "SpanPage",
    "SpanWindow",
    "TracesSpec",
    "Unmapped",
    "in_sample",
    "load_monitor",
    "read_calls",
    "span_filter",
]
