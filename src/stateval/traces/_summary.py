"""What one monitor run found: counts per field and check, examples, and the thresholds.

`TracesTally` is filled page by page and holds counts plus a few examples (never the spans), so
its size does not grow with the number of spans; it round-trips through JSON for the journal of
an interrupted run. `TracesTally.summary` turns it into a `TracesSummary` with the thresholds
checked. Without gold the suite's thresholds read (docs/traces.md):

* ``overall_match_rate``: the share of scored spans with no flag;
* ``accuracy``: the share of checked fields (over all spans) with no flag;
* ``fields``: path or glob -> the share of that field's checks with no flag;
* ``max_error_rate``: the most spans that may be unreadable (no mapped call), as a share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from stateval.suite import ThresholdsSpec
from stateval.traces._checks import CallVerdict

__all__ = ["FieldFlagRate", "TracesSummary", "TracesTally"]

_EXAMPLES = 3
_GLOB = frozenset("*?[")


@dataclass(slots=True)
class _FieldCounts:
    checked: int = 0
    flagged: int = 0
    by_check: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)


@dataclass(slots=True)
class TracesTally:
    """Counts of one monitor run so far.

    Attributes:
        read: Spans read (sampled or not).
        scored: Spans whose call was read and checked.
        unmapped: Spans that matched the filters but hold no readable call.
        unmapped_examples: ``[span id, reason]`` of the first few.
        flagged_spans: Scored spans with at least one flag.
        checked_fields: Fields checked, over all spans.
        flagged_fields: Fields flagged, over all spans.
        fields: Path -> its counts.
        annotations: Annotations stored (span and session).
        judge_calls: Calls made to the LLM judge.
        last_row: The row of the last span scored (the watermark).
    """

    read: int = 0
    scored: int = 0
    unmapped: int = 0
    unmapped_examples: list[list[str]] = field(default_factory=list)
    flagged_spans: int = 0
    checked_fields: int = 0
    flagged_fields: int = 0
    fields: dict[str, _FieldCounts] = field(default_factory=dict)
    annotations: int = 0
    judge_calls: int = 0
    last_row: int = -1

    def add_unmapped(self, span_id: str, reason: str) -> None:
        """Count a span that holds no readable call."""
        self.unmapped += 1
        if len(self.unmapped_examples) < _EXAMPLES * 2:
            self.unmapped_examples.append([span_id, reason])

    def add(self, span_id: str, verdict: CallVerdict) -> None:
        """Count one scored span's verdict."""
        self.scored += 1
        self.flagged_spans += bool(verdict.flags)
        flagged = set(verdict.flagged)
        self.checked_fields += len(verdict.checked)
        self.flagged_fields += len(flagged)
        for path in verdict.checked:
            counts = self.fields.get(path)
            if counts is None:
                counts = self.fields[path] = _FieldCounts()
            counts.checked += 1
            if path in flagged:
                counts.flagged += 1
                if len(counts.examples) < _EXAMPLES:
                    counts.examples.append(span_id)
        for flag in verdict.flags:
            counts = self.fields[flag.path]
            counts.by_check[flag.check] = counts.by_check.get(flag.check, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        """The tally as JSON (for the journal)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TracesTally:
        """Inverse of `to_dict`."""
        values = dict(data)
        values["fields"] = {p: _FieldCounts(**c) for p, c in values.get("fields", {}).items()}
        return cls(**values)

    def summary(self, thresholds: ThresholdsSpec) -> TracesSummary:
        """The run's summary, with ``thresholds`` checked."""
        rows = sorted(
            (
                FieldFlagRate(p, c.checked, c.flagged, dict(c.by_check), tuple(c.examples))
                for p, c in self.fields.items()
            ),
            key=lambda r: (-r.flag_rate, -r.flagged, r.path),
        )
        span_pass = _share(self.scored - self.flagged_spans, self.scored)
        field_pass = _share(self.checked_fields - self.flagged_fields, self.checked_fields)
        error_rate = _share(self.unmapped, self.unmapped + self.scored)
        failures: list[str] = []
        _minimum(failures, "overall_match_rate", span_pass, thresholds.overall_match_rate)
        _minimum(failures, "accuracy", field_pass, thresholds.accuracy)
        for pattern, wanted in thresholds.fields.items():
            for row in rows:
                if row.path == pattern or (
                    _GLOB.intersection(pattern) and fnmatchcase(row.path, pattern)
                ):
                    _minimum(failures, f"fields.{row.path}", 1.0 - row.flag_rate, wanted)
        limit = thresholds.max_error_rate
        if limit is not None and error_rate is not None and error_rate > limit:
            failures.append(f"max_error_rate: {error_rate:.3f} of spans unreadable > {limit}")
        return TracesSummary(
            tally=self,
            fields=tuple(rows),
            span_pass_rate=span_pass,
            field_pass_rate=field_pass,
            error_rate=error_rate,
            failures=tuple(failures),
        )


@dataclass(frozen=True, slots=True)
class FieldFlagRate:
    """One field's flags over a run.

    Attributes:
        path: The field.
        checked: Spans in which it was checked.
        flagged: Spans in which it was flagged.
        by_check: Flags per check.
        examples: Ids of the first spans that flagged it.
    """

    path: str
    checked: int
    flagged: int
    by_check: Mapping[str, int]
    examples: tuple[str, ...]

    @property
    def flag_rate(self) -> float:
        """``flagged / checked``."""
        return self.flagged / self.checked if self.checked else 0.0


@dataclass(frozen=True, slots=True)
class TracesSummary:
    """A monitor run's results.

    Attributes:
        tally: The counts.
        fields: Each field's flag rate, worst first.
        span_pass_rate: Scored spans with no flag (``overall_match_rate``).
        field_pass_rate: Checked fields with no flag (``accuracy``).
        error_rate: Unreadable spans over spans that matched the filters.
        failures: The thresholds not met, one line each.
    """

    tally: TracesTally
    fields: tuple[FieldFlagRate, ...]
    span_pass_rate: float | None
    field_pass_rate: float | None
    error_rate: float | None
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """True when every threshold is met."""
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        """The JSON report."""
        t = self.tally
        return {
            "passed": self.passed,
            "failures": list(self.failures),
            "spans": {
                "read": t.read,
                "scored": t.scored,
                "flagged": t.flagged_spans,
                "unmapped": t.unmapped,
                "unmapped_examples": [{"span_id": s, "reason": r} for s, r in t.unmapped_examples],
            },
            "span_pass_rate": self.span_pass_rate,
            "field_pass_rate": self.field_pass_rate,
            "error_rate": self.error_rate,
            "annotations": t.annotations,
            "judge_calls": t.judge_calls,
            "watermark": t.last_row,
            "fields": [
                {
                    "path": r.path,
                    "checked": r.checked,
                    "flagged": r.flagged,
                    "flag_rate": r.flag_rate,
                    "by_check": dict(r.by_check),
                    "examples": list(r.examples),
                }
                for r in self.fields
            ],
        }


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _minimum(failures: list[str], name: str, value: float | None, wanted: float | None) -> None:
    if wanted is None:
        return
    if value is None:
        failures.append(f"{name}: nothing was checked (minimum {wanted})")
    elif value < wanted:
        failures.append(f"{name}: {value:.3f} < {wanted}")
