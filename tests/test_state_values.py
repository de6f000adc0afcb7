"""`ValueConfidence` built in one step (its checks in ``__new__``) holds, refuses, pickles and
copies as the checks say, and `set_value`'s own path check refuses what `validate_path` does."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stateval import InterpretiveState, InvalidPathError, StatevalError, ValueConfidence
from stateval.state import check_json_value, check_text, validate_path
from stateval.state._values import _check_confidence

_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.sampled_from(["\ud800", "caf\u00e9", "x"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3)
    ),
    max_leaves=6,
)
_confidences = (
    st.floats() | st.integers(-2, 2) | st.booleans() | st.sampled_from(["0.5", None, 10**400])
)
_notes = st.none() | st.text(max_size=3) | st.sampled_from(["\udc00", 3, b"m"])


def _checked(value: Any, confidence: Any, inference: Any, message_id: Any) -> tuple[Any, ...]:
    """The fields a candidate holds, as the checks one by one make them (or raise)."""
    if confidence.__class__ is not float or not 0.0 <= confidence <= 1.0:
        confidence = _check_confidence(confidence)
    check_json_value(value)
    if isinstance(value, tuple):
        value = list(value)
    for note, what in ((inference, "inference"), (message_id, "message_id")):
        if note is not None and not isinstance(note, str):
            raise TypeError(f"{what} must be a string or None")
    for note, what in ((inference, "inference"), (message_id, "message_id")):
        if note is not None:
            check_text(note, what)
    return value, confidence, inference, message_id


def _outcome(make: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "made", make(*args)
    except (StatevalError, TypeError) as exc:
        problem = getattr(exc, "problem", None)
        return "refused", problem if isinstance(problem, str) else str(exc).split(":")[0]


@given(_values, _confidences, _notes, _notes)
def test_a_candidate_holds_or_refuses_what_the_checks_one_by_one_do(
    value: Any, confidence: Any, inference: Any, message_id: Any
) -> None:
    built = _outcome(ValueConfidence, value, confidence, inference, message_id)
    checked = _outcome(_checked, value, confidence, inference, message_id)
    assert built[0] == checked[0]
    if built[0] == "made":
        candidate = built[1]
        fields = (candidate.value, candidate.confidence, candidate.inference, candidate.message_id)
        assert repr(fields) == repr(checked[1])  # -0.0 and 0.0 told apart
        assert type(candidate.confidence) is float


def test_a_candidate_pickles_copies_and_replaces_as_the_value_it_is() -> None:
    candidate = ValueConfidence(("a", 1), 1, "said so", "m1")
    assert candidate.value == ["a", 1]
    assert candidate.confidence == 1.0
    for again in (
        pickle.loads(pickle.dumps(candidate)),
        copy.copy(candidate),
        copy.deepcopy(candidate),
        dataclasses.replace(candidate),
    ):
        assert again == candidate
        assert again.to_dict() == candidate.to_dict()
    assert hash(ValueConfidence("x", 1)) == hash(ValueConfidence("x", 1.0))
    assert dataclasses.replace(candidate, confidence=0.5).confidence == 0.5
    with pytest.raises(StatevalError, match="invalid confidence"):
        dataclasses.replace(candidate, confidence=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        candidate.value = "y"  # type: ignore[misc]
    with pytest.raises(TypeError, match="confidence"):
        ValueConfidence("x")  # type: ignore[call-arg]


@pytest.mark.parametrize("path", ["", "a..b", ".a", "a.", "a b", "a\n", "a\x00b", "\ud800", 3])
def test_set_value_refuses_a_malformed_path_as_validate_path_does(path: Any) -> None:
    with pytest.raises(InvalidPathError) as expected:
        validate_path(path)
    for state in (InterpretiveState(), InterpretiveState.from_flat({"a": "x"})):
        state.set_value("a.b", ValueConfidence("ok", 1.0))  # a valid path, remembered
        with pytest.raises(InvalidPathError) as info:
            state.set_value(path, ValueConfidence("x", 1.0))
        assert info.value.problem == expected.value.problem
        assert path not in state


def test_set_value_takes_a_path_of_a_str_subclass_once_checked() -> None:
    class Path(str):
        pass

    state = InterpretiveState.from_flat({"a": "x"})
    state.set_value(Path("hotel.area"), ValueConfidence("north", 1.0))
    with pytest.raises(InvalidPathError):
        state.set_value(Path("hotel..area"), ValueConfidence("north", 1.0))
    assert state.to_flat() == {"a": "x", "hotel.area": "north"}
