"""Checks bound to one state field, and field lookup in states and mappings."""

from __future__ import annotations

import functools

import pytest

from stateval.checks import (
    contains,
    contains_any,
    field_value,
    levenshtein,
    matches_regex,
    on_field,
    on_field_pair,
)
from stateval.errors import FieldNotFoundError
from stateval.state import InterpretiveState, ValueConfidence


def test_field_value_reads_best_candidate_of_a_state() -> None:
    state = InterpretiveState()
    state.add_value("user.email", ValueConfidence("old@x.org", 0.4))
    state.add_value("user.email", ValueConfidence("new@x.org", 0.9))
    assert field_value(state, "user.email") == "new@x.org"


def test_field_value_walks_into_a_state_value() -> None:
    state = InterpretiveState.from_flat({"registrant": {"name": "Ada", "tags": ["a", "b"]}})
    assert field_value(state, "registrant.name") == "Ada"
    assert field_value(state, "registrant.tags.1") == "b"
    with pytest.raises(FieldNotFoundError, match=r"'registrant\.age' has no value"):
        field_value(state, "registrant.age")


def test_field_value_reads_flat_nested_and_mixed_mappings() -> None:
    assert field_value({"a.b": 1}, "a.b") == 1
    assert field_value({"a": {"b": 2}}, "a.b") == 2
    assert field_value({"a": {"b.c": 3}}, "a.b.c") == 3
    assert field_value({"items": [{"sku": "A1"}]}, "items.0.sku") == "A1"
    assert field_value({"a": None}, "a") is None
    with pytest.raises(FieldNotFoundError):
        field_value({"items": []}, "items.0")
    with pytest.raises(KeyError):  # FieldNotFoundError is also a KeyError
        field_value({}, "x")


def test_on_field_applies_a_check_to_one_field() -> None:
    state = InterpretiveState.from_nested({"user": {"email": "ada@example.org", "age": 36}})
    email_ok = on_field(matches_regex, "user.email")
    result = email_ok(state, r"^[^@]+@[^@]+\.\w+$")
    assert result.passed
    assert result.name == "matches_regex:user.email"
    # Non-string values are read as JSON text.
    assert on_field(contains, "user.age")(state, "36").passed


def test_on_field_with_partial_and_missing_field() -> None:
    check = on_field(functools.partial(contains_any, keywords=["Paris"]), "city")
    assert check({"city": "Paris"}).passed
    missing = check({"town": "Paris"})
    assert (missing.passed, missing.label, missing.name) == (False, "missing", "contains_any:city")


def test_on_field_pair_compares_actual_with_expected_field() -> None:
    check = on_field_pair(levenshtein, "name")
    actual = InterpretiveState.from_flat({"name": "Ada Lovelace"})
    expected = {"name": "Ada Lovelace"}
    assert check(actual, expected).score == 1.0
    assert check(actual, {"name": "Ada"}, threshold=0.2).passed
    assert check({}, expected).label == "missing"
    assert "no expected value" in check(actual, {}).explanation
