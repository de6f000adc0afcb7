"""Verdicts as Phoenix annotations: what a monitor writes on the spans and sessions it scores.

Per scored span, one summary annotation `SUMMARY_NAME` (``stateval:flags``): score the share of
checked fields that pass, label ``ok`` / ``flagged`` / ``unchecked``, the flagged fields and why
in the explanation. Per flagged field, one annotation ``flag:<path>`` (`flag_name`): score 0,
label the check it failed (``grounded``, ``unexplained_change``, ``rule``, ``slot_value``,
``judge``), explanation the reason. Per episode (spans sharing ``session.id``), one session
annotation `SUMMARY_NAME`: score the share of its scored turns with no flag.

Every annotation carries the identifier ``stateval:<monitor>``: Phoenix keeps one annotation per
(span, name, identifier), so scoring the same span again replaces it and adds nothing.

Example:
    >>> from stateval.traces._checks import CallVerdict, FieldFlag
    >>> verdict = CallVerdict(("phone", "name"), (FieldFlag("name", "unexplained_change", "x"),))
    >>> [(r.name, r.label) for r in span_records("5a3d9c1b2e4f6a7b", verdict, "crm")]
    [('stateval:flags', 'flagged'), ('flag:name', 'unexplained_change')]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stateval.traces._checks import CallVerdict
from stateval.upload import SessionAnnotationRecord, SpanAnnotationRecord

__all__ = [
    "FLAG_PREFIX",
    "SUMMARY_NAME",
    "EpisodeTally",
    "flag_name",
    "identifier",
    "session_records",
    "span_records",
]

SUMMARY_NAME = "stateval:flags"
"""The name of the summary annotation on each scored span and episode."""

FLAG_PREFIX = "flag:"
"""The prefix of the per-field annotations: ``flag:<path>``."""


def flag_name(path: str) -> str:
    """The annotation name of a flagged field."""
    return f"{FLAG_PREFIX}{path}"


def identifier(monitor: str) -> str:
    """The identifier a monitor's annotations are upserted under."""
    return f"stateval:{monitor}"


def _explanation(verdict: CallVerdict) -> str:
    if not verdict.flags:
        checked = len(verdict.checked)
        return f"{checked} field{'s' * (checked != 1)} checked, none flagged"
    return "; ".join(f"{f.path} ({f.check}): {f.explanation}" for f in verdict.flags)[:2000]


def span_records(span_id: str, verdict: CallVerdict, monitor: str) -> list[SpanAnnotationRecord]:
    """The annotations of one scored span: the summary, then one per flagged field."""
    ident = identifier(monitor)
    records = [
        SpanAnnotationRecord(
            span_id=span_id,
            name=SUMMARY_NAME,
            score=verdict.score,
            label=verdict.label,
            explanation=_explanation(verdict),
            metadata={"checked": len(verdict.checked), "flagged": list(verdict.flagged)},
            identifier=ident,
        )
    ]
    by_path: dict[str, list[str]] = {}
    checks: dict[str, list[str]] = {}
    for flag in verdict.flags:
        by_path.setdefault(flag.path, []).append(flag.explanation)
        checks.setdefault(flag.path, []).append(flag.check)
    records.extend(
        SpanAnnotationRecord(
            span_id=span_id,
            name=flag_name(path),
            score=0.0,
            label=checks[path][0],
            explanation="; ".join(reasons)[:2000],
            metadata={"checks": checks[path]},
            identifier=ident,
        )
        for path, reasons in by_path.items()
    )
    return records


@dataclass(slots=True)
class EpisodeTally:
    """The scored turns of the episodes one run touched: span id -> flagged, per episode."""

    turns: dict[str, dict[str, bool]] = field(default_factory=dict)

    def add(self, episode: str, span_id: str, flagged: bool) -> None:
        """Record one scored turn."""
        self.turns.setdefault(episode, {})[span_id] = flagged

    def merge_stored(self, episode: str, metadata: Mapping[str, object]) -> None:
        """Add the turns an earlier run recorded in the episode's annotation (this run's
        verdicts win)."""
        stored = metadata.get("turns")
        if not isinstance(stored, Mapping):
            return
        mine = self.turns.setdefault(episode, {})
        for span_id, flagged in stored.items():
            if isinstance(span_id, str) and span_id not in mine:
                mine[span_id] = bool(flagged)


def session_records(tally: EpisodeTally, monitor: str) -> list[SessionAnnotationRecord]:
    """One summary annotation per episode of ``tally``."""
    out = []
    for episode, turns in tally.turns.items():
        flagged = sum(turns.values())
        out.append(
            SessionAnnotationRecord(
                session_id=episode,
                name=SUMMARY_NAME,
                score=1.0 - flagged / len(turns),
                label="flagged" if flagged else "ok",
                explanation=f"{flagged} of {len(turns)} scored turns flagged",
                metadata={"turns": {s: int(f) for s, f in turns.items()}},
                identifier=identifier(monitor),
            )
        )
    return out
