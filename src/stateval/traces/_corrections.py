"""The corrections convention: span notes that correct a draft, field by field.

A person reviewing a draft (a production span exported by `stateval traces export`) opens the
span in Phoenix and adds a **note** ("Add a note to this span…" in the span's details, or
``POST /v1/span_notes``). Each line of a note that starts with ``correct:`` or ``human:`` is
read; every other line is ordinary conversation and left alone:

==============================================  =================================================
``correct: phone = "555-0199"``                 the field's right value (any JSON value)
``correct: renewal_date = absent``              the field should not be in the state
``correct: ok``                                 the draft is right (every field not corrected)
``human: name = same``                          a verdict on an LLM-judged field's draft value
                                                (``same``, ``equivalent`` or ``different``)
==============================================  =================================================

Notes are read oldest first, so a later line about the same field wins: correcting a correction
is one more note. A span whose notes hold a ``correct:`` line or ``correct: ok`` is reviewed; its
expected state is the draft with the corrections applied. A line that names an unknown field or
holds a value that is not JSON is a problem of that span: the span is then left as it was.

Example:
    >>> review = read_review([
    ...     SpanNote("n1", 'correct: phone = "555-0199"\\nlooks like the signature', "alice", "t1"),
    ...     SpanNote("n2", "correct: renewal_date = absent\\nhuman: name = same", "bob", "t2"),
    ... ])
    >>> review.expected({"name": "Ada", "phone": "+1 212 555 0142", "renewal_date": "2027"})
    {'name': 'Ada', 'phone': '555-0199'}
    >>> review.status, dict(review.human), review.by, review.at
    ('corrected', {'name': 'same'}, ('alice', 'bob'), 't2')
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from stateval.calibration import HUMAN_LABELS
from stateval.errors import StateError
from stateval.state import validate_path

__all__ = [
    "ABSENT",
    "CONFIRMED",
    "CORRECTED",
    "CORRECT_PREFIX",
    "HUMAN_PREFIX",
    "Review",
    "SpanNote",
    "correction_note",
    "read_review",
]

CORRECT_PREFIX: Final = "correct:"
"""A note line correcting a field (``correct: path = JSON``), or confirming the draft."""

HUMAN_PREFIX: Final = "human:"
"""A note line giving a human verdict on an LLM-judged field (``human: path = same``)."""

ABSENT_WORD: Final = "absent"
OK_WORD: Final = "ok"

CORRECTED: Final = "corrected"
"""The review status of a draft with at least one field corrected."""

CONFIRMED: Final = "confirmed"
"""The review status of a draft a person said is right as it is (``correct: ok``)."""


class _Absent:
    """The value of a field that should not be in the state."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
"""A correction saying the field should be absent."""


@dataclass(frozen=True, slots=True)
class SpanNote:
    """One note on a span, as Phoenix holds it.

    Attributes:
        id: The note's id.
        text: What the person wrote.
        by: Who wrote it (the Phoenix user, or where it came from: ``Phoenix UI``, ``REST API``).
        at: When it was last written (ISO 8601).
        order: Breaks ties between notes written in the same second (later: larger).
    """

    id: str
    text: str
    by: str
    at: str
    order: int = 0


@dataclass(frozen=True, slots=True)
class Review:
    """What the notes of one span say about its draft.

    Attributes:
        values: Corrected fields: path -> the right JSON value, or `ABSENT`.
        confirmed: Someone wrote ``correct: ok``.
        human: Human verdicts on LLM-judged fields: path -> ``same``/``equivalent``/``different``.
        by: Who wrote the notes read, in the order first seen.
        at: When the newest of them was written (None without notes read).
        notes: The ids of the notes read.
        problems: One line per line that could not be read (the span is then left as it was).
    """

    values: Mapping[str, object] = field(default_factory=dict)
    confirmed: bool = False
    human: Mapping[str, str] = field(default_factory=dict)
    by: tuple[str, ...] = ()
    at: str | None = None
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def status(self) -> str | None:
        """`CORRECTED`, `CONFIRMED`, or None while nobody reviewed the draft."""
        if self.values:
            return CORRECTED
        return CONFIRMED if self.confirmed else None

    def expected(self, draft: Mapping[str, Any]) -> dict[str, Any]:
        """The expected state (flat): the draft with the corrections applied."""
        out = {path: value for path, value in draft.items() if path not in self.values}
        for path, value in self.values.items():
            if value is not ABSENT:
                out[path] = value
        return dict(sorted(out.items()))


def _field_line(body: str, known: Callable[[str], bool]) -> tuple[str, str]:
    """``path = rest`` -> (path, rest), checking the path.

    Raises:
        ValueError: No ``=``, an invalid path, or a field ``known`` does not know.
    """
    path, equals, rest = body.partition("=")
    path = path.strip()
    if not equals or not path:
        raise ValueError("expected 'path = value'")
    try:
        validate_path(path)
    except StateError as exc:
        raise ValueError(f"{path!r} is not a field path ({exc})") from None
    if not known(path):
        raise ValueError(f"unknown field {path!r}")
    return path, rest.strip()


def _json_value(text: str) -> object:
    if text == ABSENT_WORD:
        return ABSENT
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError(
            f'{text!r} is not valid JSON (quote strings: "..."; or write {ABSENT_WORD})'
        ) from None


def read_review(
    notes: Sequence[SpanNote],
    known: Callable[[str], bool] = bool,
    judged: Callable[[str], bool] = bool,
) -> Review:
    """Read a span's notes (in any order: they are taken oldest first) into a `Review`.

    Args:
        notes: The span's notes.
        known: Whether a field path is one the state can hold (unknown ones are problems).
        judged: Whether an LLM judges a field (a human verdict on another is a problem).
    """
    values: dict[str, object] = {}
    human: dict[str, str] = {}
    confirmed = False
    by: list[str] = []
    read: list[SpanNote] = []
    problems: list[str] = []
    for note in sorted(notes, key=lambda n: (n.at, n.order, n.id)):
        used = False
        for raw in note.text.splitlines():
            line = raw.strip()
            lowered = line.lower()
            try:
                if lowered.startswith(CORRECT_PREFIX):
                    used = True
                    body = line[len(CORRECT_PREFIX) :].strip()
                    if body.lower() == OK_WORD:
                        confirmed = True
                        continue
                    path, rest = _field_line(body, known)
                    values[path] = _json_value(rest)
                elif lowered.startswith(HUMAN_PREFIX):
                    used = True
                    path, rest = _field_line(line[len(HUMAN_PREFIX) :], known)
                    if rest not in HUMAN_LABELS:
                        raise ValueError(f"a verdict is one of {', '.join(HUMAN_LABELS)}")
                    if not judged(path):
                        raise ValueError(f"no LLM judges {path!r} (its policy has no judge: llm)")
                    human[path] = rest
            except ValueError as exc:
                problems.append(f"note {note.id} ({note.by}): {line!r}: {exc}")
        if used:
            read.append(note)
            if note.by not in by:
                by.append(note.by)
    return Review(
        values=values,
        confirmed=confirmed,
        human=human,
        by=tuple(by),
        at=max((n.at for n in read), default=None),
        notes=tuple(n.id for n in read),
        problems=tuple(problems),
    )


def correction_note(
    values: Mapping[str, object] = {},
    *,
    ok: bool = False,
    human: Mapping[str, str] = {},
) -> str:
    """The text of a note making these corrections (what a script posts to
    ``/v1/span_notes``).

    Example:
        >>> print(correction_note({"phone": "555-0199", "renewal_date": ABSENT}))
        correct: phone = "555-0199"
        correct: renewal_date = absent
    """
    lines = [
        f"{CORRECT_PREFIX} {path} = "
        + (ABSENT_WORD if value is ABSENT else json.dumps(value, ensure_ascii=False))
        for path, value in values.items()
    ]
    if ok:
        lines.append(f"{CORRECT_PREFIX} {OK_WORD}")
    lines.extend(f"{HUMAN_PREFIX} {path} = {label}" for path, label in human.items())
    return "\n".join(lines)
