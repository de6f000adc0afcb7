"""Production traces scored without gold: monitor spans in Phoenix, verdicts back on the spans.

A monitor file (`stateval.suite.load_monitor`) names a Phoenix project's mutator-call spans and
where their states are (``_mapping.py``); the reader pages them in storage order with a
watermark (``_reader.py``).
"""

from __future__ import annotations

from stateval.suite import Monitor, MonitorModel, TracesSpec, load_monitor
from stateval.traces._mapping import AttributePointer, MappedCall, SpanMapping, Unmapped
from stateval.traces._reader import SpanPage, SpanWindow, in_sample, read_calls, span_filter

__all__ = [
    "AttributePointer",
    "MappedCall",
    "Monitor",
    "MonitorModel",
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
