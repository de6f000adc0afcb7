"""Monitor recall by mutation: the no-gold checks measured on state mutants of real calls."""

from __future__ import annotations

import pytest

from stateval.state import InterpretiveState
from stateval.traces import MappedCall, MonitorRecall, NoGoldChecks, measure_recall


def _calls(n: int = 40) -> list[MappedCall]:
    """CRM profile updates: each call sets the phone the message gives; e-mail and name kept."""
    calls = []
    for i in range(n):
        pre = {"phone": f"+1 415 555 {1000 + i}", "email": f"user{i}@example.com", "name": "Ada"}
        new_phone = f"+1 415 555 {2000 + i}"
        post = {**pre, "phone": new_phone}
        calls.append(
            MappedCall(
                InterpretiveState.from_flat(pre),
                f"Hi, my new phone number is {new_phone}, please use it from now on.",
                InterpretiveState.from_flat(post),
            )
        )
    return calls


def _recall(**checks: object) -> MonitorRecall:
    return measure_recall(_calls(), NoGoldChecks(**checks))  # type: ignore[arg-type]


def test_an_unexplained_change_check_catches_every_clobber_and_no_original() -> None:
    recall = _recall(unexplained_changes=True)
    assert recall.calls == 40
    clobber = recall.operators["clobber_field"]
    assert clobber.applied > 0
    assert clobber.recall == 1.0
    assert recall.fields_flagged == 0
    assert recall.original_flag_rate == 0.0
    removed = recall.operators["spurious_delete"]
    assert removed.recall == 1.0
    assert recall.checks["unexplained_change"].caught == clobber.caught + removed.caught


def test_a_perturbed_value_survives_without_grounding_and_is_caught_with_it() -> None:
    without = _recall(unexplained_changes=True)
    perturbed = without.operators["perturb_value"]
    assert perturbed.applied == 40
    assert perturbed.recall == 0.0
    low, high = perturbed.interval  # type: ignore[misc]
    assert low == 0.0
    assert 0.0 < high < 0.1
    survivor = next(s for s in without.survivors if s.operator == "perturb_value")
    assert survivor.path == "phone"
    assert survivor.suggestion == "ground phone in the input: add it to `grounded:`"

    grounded = _recall(unexplained_changes=True, grounded=("phone",))
    # One near-miss drops the country code's digit ("+ 415 555 2014"): the same national
    # number, which the phone form of grounding accepts.
    assert grounded.operators["perturb_value"].caught == 39
    assert grounded.fields[("perturb_value", "phone")].caught == 39
    assert grounded.checks["grounded"].caught >= 39
    assert not any(s.operator == "perturb_value" for s in grounded.survivors)


def test_a_lost_update_is_a_survivor_that_says_no_check_can_see_it() -> None:
    recall = _recall(unexplained_changes=True, grounded=("*",))
    dropped = recall.operators["drop_field"]
    assert dropped.applied == 40
    assert dropped.caught == 0
    survivor = next(s for s in recall.survivors if s.operator == "drop_field")
    assert "no no-gold check can see" in survivor.suggestion


def test_flags_on_the_originals_are_the_false_flag_rate_and_do_not_count_as_catches() -> None:
    calls = _calls(10)
    # The message of the first call does not give the number the call wrote: a flag on the
    # original, so mutants of that call are caught only by flags the original did not have.
    first = calls[0]
    calls[0] = MappedCall(first.pre_state, "Thanks!", first.post_state)
    recall = measure_recall(calls, NoGoldChecks(grounded=("phone",)))
    assert recall.fields_flagged == 1
    assert recall.original_flag_rate == pytest.approx(1 / recall.fields_checked)
    perturbed = recall.operators["perturb_value"]
    assert perturbed.applied == 10
    assert perturbed.caught == 9


def test_no_applicable_mutant_is_not_measurable() -> None:
    recall = _recall(unexplained_changes=True)
    unused = recall.operators["change_date_format"]
    assert unused.applied == 0
    assert unused.recall is None
    assert unused.interval is None
    assert recall.to_dict()["operators"]["change_date_format"]["recall"] is None  # type: ignore[index]


def test_the_same_seed_gives_the_same_figures() -> None:
    first = measure_recall(_calls(), NoGoldChecks(unexplained_changes=True), seed=7)
    second = measure_recall(_calls(), NoGoldChecks(unexplained_changes=True), seed=7)
    assert first.to_dict() == second.to_dict()


def test_an_unknown_operator_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown state operator 'drop_everything'; known: "):
        measure_recall(_calls(2), NoGoldChecks(), operators=("drop_everything",))


def test_deletes_lost_and_spurious_are_measured() -> None:
    calls = []
    for i in range(20):
        pre = {"phone": f"555-{1000 + i}", "company": "Acme", "name": "Ada"}
        post = {"phone": f"555-{1000 + i}", "name": "Ada"}
        calls.append(
            MappedCall(
                InterpretiveState.from_flat(pre),
                "I left my company last month, please remove it.",
                InterpretiveState.from_flat(post),
            )
        )
    recall = measure_recall(calls, NoGoldChecks(unexplained_changes=True))
    spurious = recall.operators["spurious_delete"]
    assert spurious.applied == 40  # phone and name, in every call
    assert spurious.recall == 1.0
    missed = recall.operators["missed_delete"]
    assert missed.applied == 20
    assert missed.caught == 0
    survivor = next(s for s in recall.survivors if s.operator == "missed_delete")
    assert survivor.path == "company"
    assert "a lost delete leaves company as it was" in survivor.suggestion


def test_the_markdown_report_shows_recall_checks_and_survivors() -> None:
    from stateval.reports import recall_markdown

    text = recall_markdown("crm", _recall(unexplained_changes=True))
    assert text.startswith("# Monitor recall: crm\n")
    assert "| clobber_field | 80 | 80 | 100.0% |" in text
    assert "| change_date_format | 0 | 0 | not measurable | no mutant applied |" in text
    assert "| unexplained_change |" in text
    assert "- `perturb_value` on `phone` (40 calls): ground phone in the input" in text
