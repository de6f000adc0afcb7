"""Suite files within limits (issue 11, defect 8): every hostile document is a problem line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stateval.errors import SuiteProblemsError
from stateval.suite import load_suite
from stateval.suite._documents import DocumentError, parse_json, parse_json_line

_HEAD = 'mutator: {type: python, callable: "builtins:print"}\n'
_CASE = "cases:\n  inline:\n    - {id: c1, input: {prompt: x}, expected_post_state: {n: VALUE}}\n"


def _bomb(levels: int = 9, width: int = 10) -> str:
    lines = ["l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (_HEAD + _CASE.replace("VALUE", "9" * 5000), "an integer with 5000 digits"),
        (_HEAD + _CASE.replace("VALUE", '"\\ud800"'), "unpaired surrogate"),
        (_HEAD + _CASE.replace("VALUE", "!!timestamp 2024-01-01"), "unsupported YAML tag"),
        (_HEAD + _CASE.replace("VALUE", "!!binary aGk="), "unsupported YAML tag"),
        (_HEAD + _CASE.replace("VALUE", "[" * 150 + "]" * 150), "nests deeper than 100"),
        (_HEAD + _CASE.replace("VALUE", "&x [*x]"), "refers to a value that contains it"),
        (_HEAD + _bomb() + _CASE.replace("VALUE", "1"), "expands to more than 1,000,000"),
    ],
)
def test_a_hostile_suite_is_one_problem_line(tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / "suite.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(SuiteProblemsError) as caught:
        load_suite(tmp_path / "suite.yaml", load_mutator=False)
    assert problem in str(caught.value)
    assert "suite.yaml:" in str(caught.value)


def test_an_unquoted_date_stays_a_string_and_aliases_within_limits_work(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        _HEAD + "x-common: &day 2024-05-01\n" + _CASE.replace("VALUE", "*day"), encoding="utf-8"
    )
    with pytest.raises(SuiteProblemsError, match="x-common"):  # unknown key, not a crash
        load_suite(tmp_path / "suite.yaml", load_mutator=False)
    (tmp_path / "suite.yaml").write_text(
        _HEAD + _CASE.replace("VALUE", "2024-05-01"), encoding="utf-8"
    )
    suite = load_suite(tmp_path / "suite.yaml", load_mutator=False)
    assert suite.cases[0].expected_post_state.best("n").value == "2024-05-01"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            '{"id": "c1", "input": {"prompt": "x"}, "expected_post_state": {"n": '
            + "9" * 5000
            + "}}",
            "Exceeds the limit",
        ),
        ('{"id": "c1", "input": {"prompt": "\\ud800"}}', "unpaired surrogate"),
        ("[" * 100_000, "nests deeper than 100"),
        (
            '{"id": "c1", "input": {"prompt": "x"}, "expected_post_state": {"n": '
            + "[" * 100
            + "]" * 100
            + "}}",
            "nests deeper than 100",
        ),
    ],
)
def test_a_hostile_case_line_is_a_problem_naming_its_line(
    tmp_path: Path, line: str, problem: str
) -> None:
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "ok", "input": {"prompt": "x"}, "expected_post_state": {"n": 1}}\n' + line + "\n"
    )
    (tmp_path / "suite.yaml").write_text(_HEAD + "cases: {file: cases.jsonl}\n")
    with pytest.raises(SuiteProblemsError) as caught:
        load_suite(tmp_path / "suite.yaml", load_mutator=False)
    assert "cases.jsonl:2:" in str(caught.value)
    assert problem in str(caught.value)


def test_a_case_line_with_a_raw_unpaired_surrogate_is_a_problem(tmp_path: Path) -> None:
    # UTF-8 bytes of U+D800, which JSON reads through (no escape in the text)
    line = b'{"id": "c1", "input": {"prompt": "\xed\xa0\x80"}}'
    (tmp_path / "cases.jsonl").write_bytes(line + b"\n")
    (tmp_path / "suite.yaml").write_text(_HEAD + "cases: {file: cases.jsonl}\n")
    with pytest.raises(SuiteProblemsError, match=r"cases.jsonl:1:.*unpaired surrogate"):
        load_suite(tmp_path / "suite.yaml", load_mutator=False)


# -- parse_json reads with orjson what it can, the standard library the rest (issue 25) -----------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=12,
)


@given(_JSON)
def test_parse_json_gives_the_standard_librarys_values(value: object) -> None:
    # the same values of the same types (an integer past 64 bits stays an integer, not a float)
    text = json.dumps(value)
    assert repr(parse_json(text)) == repr(json.loads(text))
    assert repr(parse_json(text.encode())) == repr(json.loads(text.encode()))
    for line in (text.encode(), json.dumps(value, ensure_ascii=False).encode()):
        assert repr(parse_json_line(line)[0]) == repr(json.loads(line))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN, "b": -Infinity}',
        '{"n": 18446744073709551616}',
        '{"n": -9223372036854775809, "m": -9999999999999999999}',  # under -2**63: 19 digits
        '{"n": 123456789012345678901234567890, "m": 1.5}',
        '{"a": 1, "b": 2, "a": 3}',
        "[1e400, -0.0, 0.1e-400]",
    ],
)
def test_parse_json_reads_what_orjson_refuses_or_reads_otherwise(text: str) -> None:
    for given_text in (text, text.encode(), b"\xef\xbb\xbf" + text.encode()):
        assert repr(parse_json(given_text)) == repr(json.loads(given_text))


@pytest.mark.parametrize("text", ['{"a": 1,}', '{"a"', "[1] x", "", "\ufeff{}", '{"a": 01}'])
def test_parse_json_words_a_syntax_error_as_the_standard_library(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(DocumentError) as caught:
        parse_json(text)
    assert caught.value.message == f"invalid JSON: {expected.value.msg}"
    assert caught.value.line == expected.value.lineno


@pytest.mark.parametrize(
    ("line", "plain"),
    [
        (b'{"a": "x", "b": [1, 2.5, null]}', True),
        ('{"a": "\u00e9\U0001f600\u2028"}'.encode(), True),  # UTF-8 beyond ASCII
        (b'{"a": "\\u00e9"}', False),  # an escape
        (b'{"a": "\\ud800"}', False),  # a lone surrogate: refused by the limits
        (b'{"a": "\xed\xa0\x80"}', False),  # a surrogate's bytes: not UTF-8
        (b'{"a": NaN}', False),
        (b'{"n": 18446744073709551616}', False),
        (b'{"n": -9223372036854775809}', False),
        (b"[" * 101 + b"]" * 101, False),  # nests too deep
        (b"[" * 100 + b"]" * 100, True),
        (b"[" + b"[]," * 99 + b"{}]", False),  # 101 brackets, shallow: told by the count
        (b'{"a": "x\\\\y \\" \\n\\t"}', True),  # escapes, none of them \\u
        (b'{"a": "\\\\u"}', False),  # an escaped backslash, then u: told by the text alone
        (b'{"n": 1234567890123456789, "s": "-123456789012345678"}', True),  # 19 digits
        (b'{"s": "12345678901234567890"}', False),  # 20 digits, in a string: parsed again
        (('{"a": "' + "[" * 101 + '\u00e9"}').encode(), False),  # brackets in a string count
    ],
)
def test_a_case_line_is_plain_only_where_its_value_needs_no_check(line: bytes, plain: bool) -> None:
    # a plain line's value is what parse_json reads, and nothing in it needs checking again
    try:
        expected: object = parse_json(line)
    except (DocumentError, UnicodeDecodeError) as exc:
        expected = exc
    if isinstance(expected, Exception):
        with pytest.raises(type(expected), match=re.escape(str(expected))):
            parse_json_line(line)
        assert not plain
        return
    value, got = parse_json_line(line)
    assert repr(value) == repr(expected)
    assert got is plain
