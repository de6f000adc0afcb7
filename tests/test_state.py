"""The interpretive state: candidates, best value, paths, copies, JSON, builders, and bad input."""

from __future__ import annotations

import doctest
import json
import math
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import stateval.state
from stateval import (
    InterpretiveState,
    InvalidConfidenceError,
    InvalidPathError,
    InvalidValueError,
    StateError,
    StatevalError,
    ValueConfidence,
)


def test_docstring_examples_run() -> None:
    assert doctest.testmod(stateval.state).failed == 0


def test_best_is_the_highest_confidence_and_a_tie_goes_to_the_first_added() -> None:
    state = InterpretiveState()
    state.add_value("registrant.name", ValueConfidence("Ada", 0.6))
    state.add_value("registrant.name", ValueConfidence("Ada Lovelace", 0.9))
    state.add_value("registrant.name", ValueConfidence("A. Lovelace", 0.9))
    state.add_value("registrant.name", ValueConfidence("Lady Ada", 0.3))
    best = state.best("registrant.name")
    assert best is not None
    assert best.value == "Ada Lovelace"
    assert [vc.value for vc in state.candidates("registrant.name")] == [
        "Ada",
        "Ada Lovelace",
        "A. Lovelace",
        "Lady Ada",
    ]


def test_best_of_an_unknown_path_is_none_and_parents_are_not_fields() -> None:
    state = InterpretiveState.from_flat({"registrant.name": "Ada"})
    assert state.best("registrant") is None
    assert state.paths() == ["registrant.name"]
    assert "registrant" not in state
    assert "registrant.name" in state
    assert len(state) == 1


def test_paths_keep_the_order_first_added() -> None:
    state = InterpretiveState()
    for path in ("b", "a.z", "a.b"):
        state.add_value(path, ValueConfidence(1, 1.0))
    state.add_value("b", ValueConfidence(2, 0.5))
    assert state.paths() == ["b", "a.z", "a.b"]
    assert list(state) == ["b", "a.z", "a.b"]


def test_copy_is_independent() -> None:
    state = InterpretiveState.from_flat({"a": 1})
    clone = state.copy()
    clone.add_value("a", ValueConfidence(2, 1.0))
    clone.add_value("b", ValueConfidence(3, 1.0))
    assert state.candidates("a") == [ValueConfidence(1, 1.0)]
    assert state.paths() == ["a"]
    assert clone != state


def test_set_value_replaces_and_remove_deletes() -> None:
    state = InterpretiveState.from_flat({"a": 1, "b": 2})
    state.set_value("a", ValueConfidence(9, 0.2))
    state.remove("b")
    state.remove("never-there")
    assert state.to_flat() == {"a": 9}


@pytest.mark.parametrize("method", ["set_value", "add_value"])
def test_a_bare_value_is_refused_with_the_call_that_works(method: str) -> None:
    state = InterpretiveState.from_flat({"area": "north"})
    with pytest.raises(InvalidValueError) as caught:
        getattr(state, method)("area", "south")
    message = str(caught.value)
    assert message.startswith("invalid value at 'area':")
    assert f"{method} takes a ValueConfidence, not str 'south'" in message
    assert f"write {method}('area', ValueConfidence('south', 1.0))" in message
    assert state.to_flat() == {"area": "north"}  # the state is left as it was


def test_json_round_trip_keeps_every_candidate_and_its_metadata() -> None:
    state = InterpretiveState()
    state.add_value("x.y", ValueConfidence({"k": [1, 2.5, None]}, 0.4, "because", "m-1"))
    state.add_value("x.y", ValueConfidence("second", 0.7))
    state.add_value("flag", ValueConfidence(False, 1))
    text = state.to_json()
    assert InterpretiveState.from_json(text) == state
    assert json.loads(text)["fields"]["x.y"][0] == {
        "value": {"k": [1, 2.5, None]},
        "confidence": 0.4,
        "inference": "because",
        "message_id": "m-1",
    }


def test_from_nested_flattens_objects_and_keeps_lists_as_values() -> None:
    state = InterpretiveState.from_nested(
        {"registrant": {"name": "Ada", "tags": ["a", "b"], "empty": {}}, "n": 1}, confidence=0.8
    )
    assert state.to_flat() == {"registrant.name": "Ada", "registrant.tags": ["a", "b"], "n": 1}
    best = state.best("n")
    assert best is not None
    assert best.confidence == 0.8


def test_with_message_id_fills_only_missing_ids() -> None:
    state = InterpretiveState()
    state.add_value("a", ValueConfidence(1, 1.0, message_id="old"))
    state.add_value("b", ValueConfidence(2, 1.0))
    stamped = state.with_message_id("new")
    assert [vc.message_id for p in stamped.paths() for vc in stamped.candidates(p)] == [
        "old",
        "new",
    ]


@pytest.mark.parametrize("confidence", [-0.01, 1.01, math.nan, math.inf, "0.5", None, True])
def test_a_confidence_outside_0_1_or_not_a_number_is_rejected(confidence: object) -> None:
    with pytest.raises(InvalidConfidenceError, match="invalid confidence"):
        ValueConfidence("x", confidence)  # type: ignore[arg-type]


def test_a_bad_confidence_in_a_builder_names_the_path() -> None:
    with pytest.raises(InvalidConfidenceError, match=r"'hotel\.area'"):
        InterpretiveState.from_flat({"hotel.area": "north"}, confidence=2.0)


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("", "empty path"),
        ("a..b", "empty segment"),
        (".a", "empty segment"),
        ("a.", "empty segment"),
        ("a b", "whitespace"),
        ("a\n", "whitespace"),
        ("a\x00b", "control"),
        (3, "a path is a string"),
    ],
)
def test_an_empty_or_malformed_path_is_rejected_with_the_problem(
    path: object, problem: str
) -> None:
    state = InterpretiveState()
    with pytest.raises(InvalidPathError, match=problem) as info:
        state.add_value(path, ValueConfidence(1, 1.0))  # type: ignore[arg-type]
    assert info.value.path == path


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (math.nan, "JSON cannot hold"),
        ({"k": math.inf}, "JSON cannot hold"),
        ({1: "x"}, "non-string key"),
        ({"a", "b"}, "not a JSON value"),
        ([object()], "not a JSON value"),
    ],
)
def test_a_value_that_is_not_json_is_rejected(value: object, problem: str) -> None:
    with pytest.raises(InvalidValueError, match=problem):
        ValueConfidence(value, 1.0)


def test_a_non_json_value_in_a_builder_names_the_path() -> None:
    with pytest.raises(InvalidValueError, match=r"'a\.b'"):
        InterpretiveState.from_flat({"a.b": math.nan})


def test_every_state_error_is_a_stateval_error() -> None:
    assert issubclass(InvalidPathError, StateError)
    assert issubclass(StateError, StatevalError)


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"fields": []},
        {"fields": {"a": {"value": 1, "confidence": 1}}},
        {"fields": {"a": [{"value": 1}]}},
        {"fields": {"a": [{"value": 1, "confidence": 1, "why": "x"}]}},
    ],
)
def test_a_malformed_state_document_is_a_state_error(data: object) -> None:
    with pytest.raises(StateError):
        InterpretiveState.from_dict(data)  # type: ignore[arg-type]


def test_unparseable_state_json_is_a_state_error() -> None:
    with pytest.raises(StateError, match="does not parse"):
        InterpretiveState.from_json("{not json")


_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
_paths = st.lists(
    st.text(alphabet="abcxyz_0123", min_size=1, max_size=4), min_size=1, max_size=3
).map(".".join)


@given(st.dictionaries(_paths, _json_scalars, max_size=8), st.floats(0, 1))
def test_round_trip_and_copy_preserve_any_flat_state(
    values: dict[str, object], conf: float
) -> None:
    state = InterpretiveState.from_flat(values, confidence=conf)
    assert InterpretiveState.from_json(state.to_json()) == state
    assert state.copy() == state
    assert state.to_flat() == values


@given(st.dictionaries(_paths, _json_scalars, max_size=8), st.floats(0, 1))
def test_flat_values_read_again_make_the_state_they_made(
    values: dict[str, object], conf: float
) -> None:
    # checked: the values an earlier from_flat accepted, kept; all_strings as it found them
    first = InterpretiveState.from_flat(values, confidence=conf)
    flat = first.flat_values
    strings = None if flat is None else flat.all_strings
    for known in (None, strings):
        again = InterpretiveState.from_flat(dict(values), conf, checked=True, all_strings=known)
        assert again == first
        assert again.to_dict() == first.to_dict()
        kept = again.flat_values
        assert (kept is None) == (flat is None)
        assert kept is None or (flat is not None and kept.all_strings == flat.all_strings)


@given(
    st.dictionaries(_paths, _json_scalars, max_size=8),
    st.floats(0, 1),
    st.none() | st.text(alphabet="abc", min_size=1),
)
def test_a_flat_state_writes_the_json_of_its_candidates(
    values: dict[str, object], conf: float, message_id: str | None
) -> None:
    # written from the compact form: the same JSON as each candidate's, keys in the same order
    state = InterpretiveState.from_flat(values, confidence=conf, message_id=message_id)
    written = state.to_json()
    candidates = {p: [vc.to_dict() for vc in state.candidates(p)] for p in state.paths()}
    assert written == json.dumps({"fields": candidates})


# -- values no file or server could store are refused (issue 11) ----------------------------


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda: ValueConfidence("a\ud800", 1.0), "unpaired surrogate"),
        (lambda: ValueConfidence({"k\udc80": 1}, 1.0), "unpaired surrogate"),
        (lambda: ValueConfidence(1, 1.0, inference="\ud800"), "unpaired surrogate"),
        (lambda: InterpretiveState.from_flat({"a\ud800": 1}), "unpaired surrogate"),
        (lambda: ValueConfidence(1, 10**400), "not a number in [0, 1]"),
        (lambda: ValueConfidence(_nested(150), 1.0), "nests deeper than 100"),
        (lambda: InterpretiveState.from_json("[" * 100_000), "nests too deeply"),
        (lambda: InterpretiveState.from_json("9" * 5000), "does not parse"),
    ],
)
def test_values_no_file_could_store_are_state_errors(make: Any, problem: str) -> None:
    with pytest.raises(StateError, match=re.escape(problem)):
        make()


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


# -- the compact form through a mutator's changes and the journal (issue 25) -----------------


@given(
    st.dictionaries(_paths, _json_scalars, max_size=6),
    st.dictionaries(_paths, _json_scalars, max_size=6),
    st.sampled_from([1.0, 0.5, 0.0]),
    st.sampled_from([1.0, 0.5, 0.0, -0.0]),
    st.none() | st.just("m1"),
)
def test_set_value_and_remove_on_a_flat_state_act_as_on_candidates(
    values: dict[str, object],
    changes: dict[str, object],
    conf: float,
    set_conf: float,
    message_id: str | None,
) -> None:
    compact = InterpretiveState.from_flat(values, confidence=conf)
    expanded = InterpretiveState.from_flat(values, confidence=conf)
    expanded.candidates("x")  # reading a candidate list expands the state
    for path, value in changes.items():
        for state in (compact, expanded):
            state.set_value(path, ValueConfidence(value, set_conf, message_id=message_id))
    for path in list(values)[:2]:
        for state in (compact, expanded):
            state.remove(path)
    same = set_conf == conf and str(set_conf) == str(conf) and message_id is None
    # compact while every value is like the others (an empty from_flat state has no compact form)
    assert (compact.flat_values is not None) == (bool(values) and (not changes or same))
    assert compact.to_json() == expanded.to_json()
    assert compact == expanded


def test_a_journaled_compact_state_is_read_back_compact_and_the_rest_as_candidates() -> None:
    state = InterpretiveState.from_flat({"a": "x", "b": 2}, confidence=0.5, message_id="m")
    again = InterpretiveState.from_dict(json.loads(state.to_json()))
    assert again.flat_values is not None
    assert again.to_json() == state.to_json()
    mixed = {
        "fields": {"a": [{"value": 1, "confidence": 0.5}], "b": [{"value": 2, "confidence": -0.0}]}
    }
    two = {"fields": {"a": [{"value": 1, "confidence": 1.0}, {"value": 2, "confidence": 0.5}]}}
    noted = {"fields": {"a": [{"value": 1, "confidence": 1.0, "inference": "said so"}]}}
    for data in (mixed, two, noted):
        read = InterpretiveState.from_dict(data)
        assert read.flat_values is None
        assert read.to_dict() == data
    with pytest.raises(InvalidConfidenceError):
        InterpretiveState.from_dict({"fields": {"a": [{"value": 1, "confidence": 2.0}]}})
    # a null confidence is refused, not given the next candidate's confidence and message id
    null_first = {
        "a": [{"value": 1, "confidence": None}],
        "b": [{"value": 2, "confidence": 0.5, "message_id": "m"}],
    }
    with pytest.raises(InvalidConfidenceError, match="at 'a'"):
        InterpretiveState.from_dict({"fields": null_first})
    # a message id of None written or not is the same; any other key is not the compact form
    written = {"a": [{"value": 1, "confidence": 0.5, "message_id": None}]}
    both = {"fields": {**written, "b": [{"value": 2, "confidence": 0.5}]}}
    assert InterpretiveState.from_dict(both).flat_values is not None
    other = {"fields": {**written, "b": [{"value": 2, "confidence": 0.5, "inference": "x"}]}}
    assert InterpretiveState.from_dict(other).flat_values is None
    assert InterpretiveState.from_dict(other).to_dict()["fields"]["b"][0]["inference"] == "x"


@pytest.mark.parametrize("message_id", ["\ud800", "ok \udfff", 7])
def test_a_flat_states_message_id_is_refused_where_a_candidates_is(message_id: object) -> None:
    with pytest.raises(InvalidValueError):
        ValueConfidence("x", 1.0, None, message_id)  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="at 'a'"):
        InterpretiveState.from_flat({"a": "x"}, 1.0, message_id)  # type: ignore[arg-type]
