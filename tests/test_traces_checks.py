"""The no-gold checks, field by field (no server)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from stateval.checks import parse_criteria
from stateval.compare import COMPARATORS, FieldPolicies
from stateval.state import InterpretiveState
from stateval.suite import SlotSchema
from stateval.traces import CallVerdict, Grounding, MappedCall, NoGoldChecks


def _call(pre: dict | None, text: str, post: dict) -> MappedCall:
    return MappedCall(
        None if pre is None else InterpretiveState.from_flat(pre),
        text,
        InterpretiveState.from_flat(post),
    )


@pytest.mark.parametrize(
    ("message", "value", "form"),
    [
        ("Call me: Ada  Lovelace.", "ada lovelace", "literal"),
        ("the budget is 1,500 EUR", 1500, "number"),
        ("the budget is 1,500 EUR", "1500.0", "number"),
        ("renew on 2027-01-31", "2027-01-31", "literal"),
        ("renew on 31/01/2027", "2027-01-31", "date"),
        ("renew on 01/31/2027", "2027-01-31", "date"),
        ("renew on 31.01.2027", "2027-01-31", "date"),
        ("renew on January 31, 2027", "2027-01-31", "date"),
        ("renew on the 31st Jan 2027", "2027-01-31", "date"),
        ("renew on 2027-01-31", "31 January 2027", "date"),
        ("ring +1 (212) 555-0142", "(212)5550142", "phone"),
        ("ring 212 555 0142", "+12125550142", "phone"),
        ("tags a and b", ["a", "b"], "literal"),
    ],
)
def test_the_forms_a_value_is_grounded_in(message: str, value: object, form: str) -> None:
    assert Grounding(message).supports(value) == form


def _compare_reads(written: str) -> set[tuple[int, int | None, int | None]]:
    """What compare's date comparator reads ``written`` as, day-month and month-day."""
    days = set()
    for order in ("DMY", "MDY"):
        settings = SimpleNamespace(
            date_order=order, date_tolerance=None, phone_region=None, numeric_tolerance=None
        )
        try:
            days.add(COMPARATORS["date"].read(written, settings))
        except ValueError:
            continue
    return days


@pytest.mark.parametrize(
    ("written", "grounded"),
    [
        ("31/01/2027", True),
        ("01/31/2027", True),
        ("31.01.2027", True),
        ("January 31, 2027", True),
        ("Jan. 31st 2027", True),
        ("31st Sept 2027", False),  # no such day
        ("2027-1-31", True),
        ("31/01.2027", False),  # two separators: compare reads no date
        ("31 Janvier 2027", False),  # not an English month
        ("31/1/27", False),  # a two-digit year
    ],
)
def test_a_date_is_grounded_where_compare_reads_the_same_day(written: str, grounded: bool) -> None:
    # one date reader: grounding finds dates in the message, compare's date comparator reads them
    assert ((2027, 1, 31) in _compare_reads(written)) is grounded
    form = Grounding(f"please renew on {written}, thanks").supports("2027-01-31")
    assert (form == "date") is grounded


@pytest.mark.parametrize(
    ("message", "value"),
    [
        ("my number is 555-0199", "555-0142"),
        ("renew on 2027-01-31", "2027-02-01"),
        ("the budget is 1,500 EUR", 1600),
        ("Ada Lovelace", "Ada Byron"),
        ("tags a and b", ["a", "c"]),
        ("call 2125", "2125550142"),
    ],
)
def test_values_the_input_does_not_hold_are_not_grounded(message: str, value: object) -> None:
    assert Grounding(message).supports(value) is False


@pytest.mark.parametrize("value", [True, None, {"a": 1}, "  "])
def test_values_that_cannot_be_grounded_are_not_checked(value: object) -> None:
    assert Grounding("anything").supports(value) is None


def test_grounded_flags_only_written_values_it_cannot_find() -> None:
    checks = NoGoldChecks(grounded=("*",))
    verdict = checks.check(
        _call(
            {"phone": "555-0100", "name": "Ada"},
            "new number 555-0199, renew 2027-01-31",
            {"phone": "555-0199", "name": "Ada", "renewal_date": "2027-02-01"},
        )
    )
    assert [(f.path, f.check) for f in verdict.flags] == [("renewal_date", "grounded")]
    assert "'2027-02-01' is not written in the input" in verdict.flags[0].explanation
    assert verdict.checked == ("phone", "renewal_date")  # name did not change: not written
    assert verdict.score == 0.5
    assert verdict.label == "flagged"


def test_without_a_pre_state_every_value_is_a_written_one() -> None:
    verdict = NoGoldChecks(grounded=("name",)).check(_call(None, "I am Ada", {"name": "Bob"}))
    assert [f.path for f in verdict.flags] == ["name"]


def test_an_unexplained_change_is_one_the_input_does_not_mention() -> None:
    checks = NoGoldChecks(unexplained_changes=True)
    pre = {"phone": "555-0100", "company": "Acme", "city": "Oslo", "notes": "vip"}
    post = {"phone": "555-0199", "company": "Initech", "city": "Bergen", "tier": "gold"}
    verdict = checks.check(_call(pre, "I moved to Bergen; number 555-0199", post))
    flagged = {f.path: f.explanation for f in verdict.flags}
    assert set(flagged) == {"company", "notes", "tier"}
    assert flagged["company"].startswith("changed from 'Acme' to 'Initech'")
    assert flagged["notes"].startswith("removed (was 'vip')")
    assert flagged["tier"].startswith("set to 'gold'")


def test_a_change_the_input_names_by_field_is_explained() -> None:
    checks = NoGoldChecks(unexplained_changes=True)
    verdict = checks.check(
        _call({"renewal_date": "2026-01-01"}, "please renew my plan", {"renewal_date": "x"})
    )
    assert verdict.flags == ()
    assert verdict.checked == ("renewal_date",)


def test_equal_under_the_field_policy_is_no_change() -> None:
    policies = FieldPolicies.from_mapping({"name": {"normalize": ["case"]}})
    checks = NoGoldChecks(unexplained_changes=True, policies=policies)
    verdict = checks.check(_call({"name": "ada"}, "hello", {"name": "ADA"}))
    assert verdict == CallVerdict(())
    assert verdict.label == "unchecked"
    assert verdict.score is None


def test_rule_checks_and_slot_values_need_no_expected_state() -> None:
    schema = SlotSchema.from_data(
        [
            {
                "service_name": "crm",
                "slots": [
                    {"name": "tier", "is_categorical": True, "possible_values": ["gold", "free"]}
                ],
            }
        ]
    )
    checks = NoGoldChecks(
        checks={"*email": tuple(parse_criteria([{"type": "regex", "pattern": "^[^@ ]+@[^@ ]+$"}]))},
        slot_schema=schema,
    )
    verdict = checks.check(
        _call(None, "x", {"email": "ada at example", "work_email": "a@b.c", "crm.tier": "Platinum"})
    )
    assert [(f.path, f.check) for f in verdict.flags] == [
        ("email", "rule"),
        ("crm.tier", "slot_value"),
    ]
    assert verdict.checked == ("email", "work_email", "crm.tier")
    assert "'Platinum' is not one of the slot's values" in verdict.flags[1].explanation


def test_a_value_taken_from_a_signature_is_an_unexplained_change() -> None:
    checks = NoGoldChecks(unexplained_changes=True, grounded=("*",))
    email = "Please use ada@example.org from now on.\n--\nSupport desk +1 212 555 0142"
    verdict = checks.check(
        _call(
            {"phone": "555-0199", "email": "ada@old.org"},
            email,
            {"phone": "+1 212 555 0142", "email": "ada@example.org"},
        )
    )
    assert [(f.path, f.check) for f in verdict.flags] == [("phone", "unexplained_change")]
    assert Grounding(email).body().supports("+1 212 555 0142") is False
    assert Grounding("no signature here").body().supports("signature") == "literal"
