"""From corrections back to gold: `import_corrections` (``stateval traces import``).

Reads the notes on the source span of every exported case in a case file
(`stateval.traces._corrections` says what they mean) and writes the file again:

* a case whose draft was corrected (or confirmed with ``correct: ok``) gets its
  ``expected_post_state`` (the draft with the corrections applied), its review status
  (``corrected``/``confirmed``) and provenance (who wrote the notes, when, which notes) under
  ``metadata.review``; human verdicts on its fields become its ``human:`` verdicts, each on
  the draft's value;
* a case nobody reviewed stays an unreviewed draft (no ``expected_post_state``: a suite leaves
  it out);
* the notes are the source of truth, so importing again changes nothing, and a note added
  later changes exactly the case of its span.

Bad input is one line of the summary each, and leaves its case exactly as it was: a line naming
an unknown field (one no draft, pre-state or expected state of the file holds), a value that is
not JSON, a span that no longer exists. Lines that are not exported cases are left alone. The
file is rewritten (atomically) only when a case changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stateval.compare import FieldPolicies
from stateval.errors import StatevalError
from stateval.suite import REVIEW_KEY, SOURCE_PROJECT_KEY, SOURCE_SPAN_KEY, UNREVIEWED, Monitor
from stateval.traces._corrections import Review, SpanNote, read_review
from stateval.traces._export import read_lines, write_lines
from stateval.upload import PhoenixUploader, SpanFilter, StoredSpanNote
from stateval.wire import coerce_state

__all__ = ["ImportResult", "import_corrections"]

_IDS_PER_QUERY = 100


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import did.

    Attributes:
        cases: Exported cases in the file.
        corrected: Cases whose draft was corrected.
        confirmed: Cases whose draft was confirmed as it is.
        unreviewed: Cases nobody reviewed yet.
        changed: The ids of the cases this import changed.
        problems: One line per bad note line or vanished span (their cases left as they were).
    """

    cases: int
    corrected: int
    confirmed: int
    unreviewed: int
    changed: tuple[str, ...]
    problems: tuple[str, ...]

    def summary(self) -> str:
        """One line: the counts."""
        return (
            f"{self.cases} exported cases: {self.corrected} corrected, {self.confirmed} "
            f"confirmed, {self.unreviewed} unreviewed; {len(self.changed)} changed by this "
            f"import, {len(self.problems)} problems"
        )


def _source(case: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(project, span id)`` of an exported case."""
    metadata = case.get("metadata")
    if not isinstance(metadata, Mapping):
        return None
    span, project = metadata.get(SOURCE_SPAN_KEY), metadata.get(SOURCE_PROJECT_KEY)
    if isinstance(span, str) and isinstance(project, str):
        return project, span
    return None


def _flat(state: object) -> dict[str, Any]:
    return {} if state is None else coerce_state(state).to_flat()


def _known_fields(cases: Sequence[Mapping[str, Any]]) -> set[str]:
    known: set[str] = set()
    for case in cases:
        for key in ("pre_state", "actual_post_state", "expected_post_state"):
            try:
                known.update(_flat(case.get(key)))
            except StatevalError:
                continue
    return known


def reviewed_case(case: Mapping[str, Any], review: Review) -> dict[str, Any]:
    """The case as its review makes it (the draft itself is never changed)."""
    out = {k: v for k, v in case.items() if k not in ("expected_post_state", "human")}
    metadata = dict(case.get("metadata") or {})
    previous = metadata.get(REVIEW_KEY)
    kept = {
        k: v
        for k, v in (previous.items() if isinstance(previous, Mapping) else ())
        if k in ("rank", "reason")
    }
    status = review.status
    if status is None:
        metadata[REVIEW_KEY] = {"status": UNREVIEWED, **kept}
        out["metadata"] = metadata
        return out
    draft = _flat(case.get("actual_post_state"))
    out["expected_post_state"] = review.expected(draft)
    if review.human:
        out["human"] = {
            path: {"verdict": label, "actual": draft.get(path)}
            for path, label in sorted(review.human.items())
        }
    metadata[REVIEW_KEY] = {
        "status": status,
        **kept,
        "by": list(review.by),
        "at": review.at,
        "notes": list(review.notes),
    }
    out["metadata"] = metadata
    return out


async def _existing(phoenix: PhoenixUploader, project: str, span_ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(span_ids), _IDS_PER_QUERY):
        where = SpanFilter(span_ids=tuple(span_ids[start : start + _IDS_PER_QUERY]))
        async for page in phoenix.span_pages(project, where, page_size=1000):
            found.update(span.span_id for span in page)
    return found


def _judged_by(policies: FieldPolicies) -> Callable[[str], bool]:
    def judged(path: str) -> bool:
        return policies.for_path(path).judge is not None

    return judged


def _span_note(note: StoredSpanNote) -> SpanNote:
    return SpanNote(note.id, note.text, note.by, note.updated_at.isoformat(), note.row)


async def import_corrections(
    phoenix: PhoenixUploader, path: Path, monitor: Monitor | None = None
) -> ImportResult:
    """Read the corrections of the exported cases in ``path`` and write them into it.

    With the ``monitor`` the cases were exported by, a human verdict on a field its policies
    do not judge by LLM is a problem, and its slot list (when it has one) adds known fields.

    Raises:
        StatevalError: The file cannot be read.
        PhoenixUnavailableError: Phoenix cannot be reached.
    """
    lines = read_lines(path)
    cases = [data for _, data in lines if data is not None and _source(data) is not None]
    by_project: dict[str, list[str]] = {}
    for case in cases:
        project, span = _source(case) or ("", "")
        by_project.setdefault(project, []).append(span)
    existing: dict[str, set[str]] = {}
    notes: dict[str, list[SpanNote]] = {}
    for project, spans in by_project.items():
        existing[project] = await _existing(phoenix, project, spans)
        for note in await phoenix.list_span_notes(project, spans):
            notes.setdefault(note.span_id, []).append(_span_note(note))
    known = _known_fields(cases)
    judged: Callable[[str], bool] = bool
    if monitor is not None:
        judged = _judged_by(monitor.policies)
        if isinstance(monitor.model.slots, list):
            known.update(monitor.model.slots)
    problems: list[str] = []
    changed: list[str] = []
    counts = {"corrected": 0, "confirmed": 0, UNREVIEWED: 0}
    out: list[str] = []
    for text, line in lines:
        source = None if line is None else _source(line)
        if source is None or line is None:
            out.append(text)
            continue
        project, span = source
        case_id = str(line.get("id"))
        review = read_review(notes.get(span, ()), known.__contains__, judged)
        if span not in existing[project]:
            problems.append(
                f"case {case_id!r}: span {span} no longer exists in project {project!r} "
                "(case left as it was)"
            )
        problems.extend(f"case {case_id!r}: {p} (case left as it was)" for p in review.problems)
        new = line if span not in existing[project] or review.problems else None
        if new is None:
            try:
                new = reviewed_case(line, review)
            except StatevalError as exc:
                problems.append(f"case {case_id!r}: the draft is not a state: {exc}")
                new = line
        status = (new.get("metadata") or {}).get(REVIEW_KEY, {}).get("status", UNREVIEWED)
        counts[status if status in counts else UNREVIEWED] += 1
        if new != line:
            changed.append(case_id)
            text = json.dumps(new, ensure_ascii=False)
        out.append(text)
    if changed:
        write_lines(path, out)
    return ImportResult(
        cases=len(cases),
        corrected=counts["corrected"],
        confirmed=counts["confirmed"],
        unreviewed=counts[UNREVIEWED],
        changed=tuple(changed),
        problems=tuple(problems),
    )
