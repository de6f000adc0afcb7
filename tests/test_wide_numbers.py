"""`stateval._wide_numbers`: a text it lets orjson read is read by orjson as the json module
reads it (the case files' and the journal's one test of it), and a float's many digits do not
send a text to the slow parser."""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from stateval._wide_numbers import wide_integer_in
from stateval.suite._documents import parse_json_line

_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet="0123456789.-eE x", max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=12,
)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and json.dumps(a) == json.dumps(b)


@settings(max_examples=400, deadline=None)
@given(value=_VALUES, writer=st.sampled_from(["json", "orjson"]))
def test_a_text_left_to_orjson_reads_as_the_json_module_reads_it(value: Any, writer: str) -> None:
    try:
        text = orjson.dumps(value) if writer == "orjson" else json.dumps(value).encode()
    except TypeError:  # an integer orjson does not write
        text = json.dumps(value).encode()
    if not wide_integer_in(text):
        assert _same(orjson.loads(text), json.loads(text))


def test_an_integer_past_64_bits_is_found_and_a_floats_digits_are_not() -> None:
    assert wide_integer_in(b"[18446744073709551616]")
    assert wide_integer_in(b'{"a":-9223372036854775809}')
    assert not wide_integer_in(b"[-922337203685477580, 1844674407370955161]")  # 19 places
    assert not wide_integer_in(orjson.dumps([1.2345678901234568e-05, 0.12345678901234567890]))
    assert not wide_integer_in(b"[123456789012345678901.5, 12345678901234567890e3]")


def test_a_case_line_with_small_floats_is_plain() -> None:
    line = orjson.dumps({"id": "c1", "pre_state": {"p": 1.2345678901234568e-05}})
    value, plain = parse_json_line(line)
    assert plain
    assert value == json.loads(line)
