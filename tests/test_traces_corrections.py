"""The corrections convention read from span notes, and the review queue's order and sample
(no Phoenix needed: notes and drafts are built here)."""

from __future__ import annotations

from datetime import UTC, datetime

from stateval.state import InterpretiveState, ValueConfidence
from stateval.traces import (
    ABSENT,
    Draft,
    MappedCall,
    SpanNote,
    correction_note,
    read_review,
    review_queue,
    sample_drafts,
)
from stateval.upload import StoredSpan

KNOWN = {"name", "phone", "email"}.__contains__


def test_later_notes_win_field_by_field_and_ordinary_lines_are_left_alone() -> None:
    review = read_review(
        [
            SpanNote("b", 'correct: phone = "555-0102"', "bob", "2026-01-02T00:00:00"),
            SpanNote(
                "a",
                'Looks odd.\ncorrect: phone = "555-0101"\ncorrect: email = absent',
                "ann",
                "2026-01-01T00:00:00",
            ),
        ],
        KNOWN,
    )
    assert dict(review.values) == {"phone": "555-0102", "email": ABSENT}
    assert review.status == "corrected"
    assert (review.by, review.at, review.notes) == (
        ("ann", "bob"),
        "2026-01-02T00:00:00",
        ("a", "b"),
    )
    assert review.expected({"name": "Ada", "phone": "x", "email": "a@x"}) == {
        "name": "Ada",
        "phone": "555-0102",
    }


def test_notes_written_in_the_same_second_are_read_in_the_order_written() -> None:
    same = "2026-01-01T00:00:00"
    notes = [
        SpanNote("n10", 'correct: name = "B"', "x", same, 10),
        SpanNote("n9", 'correct: name = "A"', "x", same, 9),
    ]
    assert dict(read_review(notes, KNOWN).values) == {"name": "B"}


def test_ok_confirms_the_draft_and_verdicts_are_kept() -> None:
    review = read_review(
        [SpanNote("n", correction_note(ok=True, human={"name": "same"}), "x", "t")]
    )
    assert review.status == "confirmed"
    assert dict(review.human) == {"name": "same"}
    assert review.expected({"name": "Ada"}) == {"name": "Ada"}


def test_a_note_without_corrections_is_no_review() -> None:
    review = read_review([SpanNote("n", "I will look at this tomorrow", "x", "t")])
    assert review.status is None
    assert review.notes == ()


def test_bad_lines_are_problems_naming_the_note_and_the_reason() -> None:
    review = read_review(
        [
            SpanNote(
                "n",
                'correct: colour = "red"\ncorrect: phone = 555-0199\n'
                "correct: name\nhuman: name = maybe",
                "ann",
                "t",
            )
        ],
        KNOWN,
    )
    assert [p.rsplit("': ", 1)[-1] for p in review.problems] == [
        "unknown field 'colour'",
        "'555-0199' is not valid JSON (quote strings: \"...\"; or write absent)",
        "expected 'path = value'",
        "a verdict is one of same, equivalent, different",
    ]


def test_correction_note_round_trips() -> None:
    values = {"phone": "555-0199", "tags": ["a", 1], "email": ABSENT}
    assert dict(read_review([SpanNote("n", correction_note(values), "x", "t")]).values) == values


def _draft(i: int, confidence: float, flagged: bool = False, stratum: str = "a") -> Draft:
    state = InterpretiveState()
    state.set_value("phone", ValueConfidence(f"555-{i}", confidence))
    span = StoredSpan(f"{i:016x}", "0" * 32, "s", "CHAIN", datetime.now(UTC), "OK", {}, i)
    return Draft(span, MappedCall(None, "m", state), "check:phone" if flagged else None, stratum)


def test_the_queue_puts_flagged_first_then_the_least_sure() -> None:
    drafts = [_draft(1, 0.9), _draft(2, 0.2), _draft(3, 0.95, flagged=True), _draft(4, 0.5)]
    queue = review_queue(drafts)
    assert [d.span.row for d in queue] == [3, 2, 4, 1]
    assert queue[0].reason == "flagged: check:phone; lowest confidence 0.95 (phone)"
    assert queue[1].reason == "lowest confidence 0.20 (phone)"


def test_a_stratified_sample_takes_each_stratum_in_proportion_and_is_stable() -> None:
    drafts = [_draft(i, 1.0, stratum="big" if i < 80 else "small") for i in range(100)]
    sample = sample_drafts(drafts, 10, seed=3, stratified=True)
    assert sorted(d.stratum or "" for d in sample) == ["big"] * 8 + ["small"] * 2
    assert sample == sample_drafts(drafts, 10, seed=3, stratified=True)
    assert sample_drafts(drafts, 10, seed=4) != sample_drafts(drafts, 10, seed=3)
