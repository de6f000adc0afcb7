"""A JSONL case file's lines: the cases hash made from them, and the cases read again in a run.

Journals record ``cases_hash``; resume, shard merges and score fingerprints compare it, so the
text it hashes must not change when the way it is written does (`example_json` writes each
state from one ``orjson.dumps`` of its values where it can). A run reads each case's line again
(`FileCases`) without validating it again: only a line that is the one validated is used.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stateval.errors import StateError, SuiteError
from stateval.mutators import StructuredInput
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import Case, load_suite
from stateval.suite._case_file import read_case_file
from stateval.suite._case_line import validate_line
from stateval.suite._cases import PLAIN_LINE, POST_STRINGS, PRE_STRINGS
from stateval.suite._documents import parse_json_line
from stateval.suite._source import FileCases, canonical_json, example_json

# Cases the hash was taken of on main before `example_json` (0.x, 2533985): nested values,
# the candidate form, numbers orjson and the standard library write differently, big
# integers, unicode, quotes and backslashes, strings that look like numbers.
_ROWS: list[dict[str, Any]] = [
    {
        "id": "plain",
        "pre_state": {"a": "x", "b.c": "y"},
        "input": {"prompt": "hi"},
        "expected_post_state": {"a": "z", "b.c": "y"},
    },
    {
        "id": "numbers",
        "pre_state": {"n": 1e-05, "big": 2**70, "f": 1e16, "neg": -0.0, "i": 3},
        "input": {"prompt": "p", "message_id": "m", "metadata": {"t": 2.5e-07}},
        "expected_post_state": {"n": 0.1, "big": -(2**65)},
        "metadata": {"x": 1e22},
    },
    {
        "id": "unicode é",
        "pre_state": {
            "ключ": "значение \u2028",
            "emoji": "😀",
            "q": 'say "hi"',
            "bs": "a\\b",
            "nl": "line\nbreak",
        },
        "input": {"prompt": "ü"},
        "expected_post_state": {"ключ": "e-mail one-way 0.00001 e+5"},
    },
    {
        "id": "nested",
        "pre_state": {"hotel": {"name": "A", "stars": 4, "tags": ["x", {"y": None}]}},
        "input": {"prompt": "p"},
        "expected_post_state": {"hotel": {"name": "B"}},
        "metadata": {"split": "test", "list": [1, 2.0, True]},
    },
    {
        "id": "candidates",
        "pre_state": {
            "fields": {
                "a": [
                    {"value": "x", "confidence": 0.5, "message_id": "m1"},
                    {"value": "y", "confidence": 0.25, "inference": "why"},
                ]
            }
        },
        "input": {"prompt": "p"},
        "expected_post_state": {
            "fields": {
                "a": [{"value": "x", "confidence": 0.75, "message_id": 'm"2'}],
                "b": [{"value": "z", "confidence": 0.75, "message_id": 'm"2'}],
            }
        },
    },
    {
        "id": "compact candidates",
        "pre_state": {"fields": {"a": [{"value": "x", "confidence": 1e-05, "message_id": "m1"}]}},
        "input": {"prompt": "p"},
        "expected_post_state": {
            "fields": {
                "a": [{"value": ":", "confidence": 0.5}],
                "b": [{"value": ",", "confidence": 0.5}],
            }
        },
    },
    {"id": "empty", "input": {"prompt": ""}, "expected_post_state": {}},
    {
        "id": "mixed",
        "pre_state": {"a": "s", "b": True, "c": None, "d": 12345678901234567890},
        "input": {"prompt": "p"},
        "expected_post_state": {"a": "s", "b": False},
    },
]

_HASHES = {  # cases_hash of `_ROWS` on main at 2533985, before `example_json`
    "flat": "95f04f88f55f4f5b40728efba2922b7a1f3775fe9fe0e4fb709626a35483d5ca",
    "nested": "283556d887602d9885aaa548e294d6e048cf99417bc7fecd2016fdada20e68c6",
}


def _suite(folder: Path, fmt: str, suffix: str = "jsonl") -> Path:
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for row in _ROWS:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    (folder / "cases.json").write_text(json.dumps(_ROWS, ensure_ascii=False), encoding="utf-8")
    path = folder / f"{fmt}-{suffix}.yaml"
    path.write_text(
        'mutator: {type: python, callable: "builtins:print"}\n'
        f"cases: {{file: cases.{suffix}, format: {fmt}}}\n"
    )
    return path


def test_the_cases_hash_is_the_one_journals_recorded_before(tmp_path: Path) -> None:
    for fmt, expected in _HASHES.items():
        suite = load_suite(_suite(tmp_path, fmt), load_mutator=False)
        assert len(suite.cases) == len(_ROWS)
        assert suite.cases_hash == expected, fmt


def _reference(case: Case) -> bytes:
    """The example's text as the standard library writes it (what the hash is defined by)."""
    text = json.dumps(case.to_example(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode()


# paths and strings made of what could fool a text made by replacing separators
_TEXT = st.text(alphabet=st.sampled_from(':,"\\ab.é😀\n0e-+ '), max_size=6)
_PATH = st.text(alphabet=st.sampled_from(':,"\\ab_é😀0e-+'), min_size=1, max_size=5)
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_CONFIDENCE = st.sampled_from([1.0, 0.5, 0.0, 1e-05, 0.0001, 0.123456789]) | st.floats(0.0, 1.0)


def _state(values: dict[str, Any], confidence: float, message_id: str | None) -> InterpretiveState:
    try:
        return InterpretiveState.from_flat(values, confidence, message_id)
    except StateError:  # a path the state refuses: the case could not be loaded either
        return InterpretiveState()


@given(
    pre=st.dictionaries(_PATH, _TEXT, max_size=6) | st.dictionaries(_PATH, _VALUE, max_size=4),
    post=st.dictionaries(_PATH, _TEXT, max_size=6),
    confidence=_CONFIDENCE,
    message_id=st.none() | _TEXT,
    metadata=st.dictionaries(_TEXT, _VALUE, max_size=3),
    case_id=_TEXT,
)
def test_the_example_text_is_the_standard_librarys(
    pre: dict[str, Any],
    post: dict[str, Any],
    confidence: float,
    message_id: str | None,
    metadata: dict[str, Any],
    case_id: str,
) -> None:
    case = Case(
        case_id,
        _state(pre, confidence, message_id),
        StructuredInput("p", "m", {"k": [1.5, "v"]}),
        _state(post, confidence, message_id),
        metadata,
    )
    expected = _reference(case)
    assert example_json(case) == expected
    assert canonical_json(case.to_example()) == expected


@pytest.mark.parametrize(
    ("pre", "post", "message_id"),
    [
        ({":": "x", "a": "y"}, {"a": "z"}, None),  # a path that is ":" alone
        ({",": "x", "a": "y"}, {"a": "z"}, None),  # a path that is "," alone
        ({"a": ":", "b": "y"}, {"a": "z"}, None),  # a value that is ":" alone
        ({"a": ",", "b": "y"}, {"a": "z"}, None),  # a value that is "," alone
        ({"a": "x", "b": "y"}, {"a": "z", "b": "w"}, 'm","value":"'),  # separators in the id
        ({"a": "x:y", "b": "y,z"}, {"é😀": '",'}, "m"),
        ({"a": "0.00001", "b": "1e+16"}, {"a": "e-5"}, None),  # strings that look like numbers
    ],
)
@pytest.mark.parametrize("confidence", [1.0, 0.5, 1e-05])
def test_the_example_text_of_string_states_is_the_standard_librarys(
    pre: dict[str, Any], post: dict[str, Any], message_id: str | None, confidence: float
) -> None:
    case = Case(
        "c",
        InterpretiveState.from_flat(pre, confidence, message_id),
        StructuredInput("p", "m"),
        InterpretiveState.from_flat(post, confidence, message_id),
        {"x": 1e-05, "big": 2**70} if confidence == 0.5 else {},
    )
    assert example_json(case) == _reference(case)


def test_a_changed_state_is_written_as_it_now_is() -> None:
    state = InterpretiveState.from_flat({"a": "x", "b": "y"}, 0.5, "m")
    state.remove("b")
    state.set_value("c", ValueConfidence(3, 0.5, message_id="m"))
    state.set_value("a", ValueConfidence("z", 0.5, message_id="m"))
    case = Case("c", state, StructuredInput("p", "m"), InterpretiveState())
    assert example_json(case) == _reference(case)


@pytest.mark.parametrize("fmt", ["flat", "nested"])
def test_a_case_read_again_is_the_case_validated(tmp_path: Path, fmt: str) -> None:
    # the JSON file's cases are held as validated; the JSONL file's are read again unchecked
    held = load_suite(_suite(tmp_path, fmt, "json"), load_mutator=False)
    again = load_suite(_suite(tmp_path, fmt), load_mutator=False)
    assert list(again.cases) == list(held.cases)
    assert [c.to_example() for c in again.cases] == [c.to_example() for c in held.cases]
    assert again.cases_hash == held.cases_hash
    # each reading makes states of its own
    first, second = again.cases[0], again.cases[0]
    first.pre_state.set_value("a", ValueConfidence("changed", 1.0))
    assert second.pre_state.to_flat()["a"] == "x"
    assert again.cases[0].pre_state.to_flat()["a"] == "x"


def test_a_case_of_an_episode_read_again_is_the_case_validated(tmp_path: Path) -> None:
    # a plain line read again takes its own path: episode keys, a recorded post-state, a
    # message id and metadata of the input come out as the load made them
    rows = [
        {
            "id": f"t{turn}",
            "pre_state": {"a": str(turn)},
            "input": {"prompt": "p", "message_id": f"m{turn}", "metadata": {"k": [turn]}},
            "expected_post_state": {"a": str(turn + 1)},
            "actual_post_state": {"a": "recorded"} if turn else None,
            "metadata": {"dialogue": "d1", "turn": turn},
        }
        for turn in range(3)
    ]
    for suffix in ("jsonl", "json"):
        text = "\n".join(json.dumps(row) for row in rows) if suffix == "jsonl" else json.dumps(rows)
        (tmp_path / f"cases.{suffix}").write_text(text + "\n", encoding="utf-8")
        (tmp_path / f"{suffix}.yaml").write_text(
            'mutator: {type: python, callable: "builtins:print"}\n'
            f"cases: {{file: cases.{suffix}}}\n"
            "episodes: {by: metadata.dialogue, order: metadata.turn}\n"
        )
    held = load_suite(tmp_path / "json.yaml", load_mutator=False)
    again = load_suite(tmp_path / "jsonl.yaml", load_mutator=False)
    assert list(again.cases) == list(held.cases)
    assert [(c.episode_id, c.turn_index) for c in again.cases] == [("d1", t) for t in range(3)]
    assert [c.actual_post_state for c in again.cases] == [r["actual_post_state"] for r in rows]
    assert again.cases[1].input == StructuredInput("p", "m1", {"k": [1]})


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('"prompt": "hi"', '"prompt": "ho"'),  # same id, same length: the content changed
        ('"a": "z"', '"a": NaN'),  # same id, now a value the load refuses
        ('"plain"', '"other"'),  # another id
    ],
)
def test_a_line_changed_after_loading_is_not_used(tmp_path: Path, before: str, after: str) -> None:
    suite = load_suite(_suite(tmp_path, "flat"), load_mutator=False)
    cases_file = tmp_path / "cases.jsonl"
    text = cases_file.read_text(encoding="utf-8")
    assert before in text
    cases_file.write_text(text.replace(before, after, 1), encoding="utf-8")
    for read in (lambda: list(suite.cases), lambda: suite.cases.get("plain")):
        with pytest.raises(SuiteError, match=r"changed after the suite was loaded \(case 1, "):
            read()
    assert suite.cases.get("nested") is not None  # the other lines are as they were


# mostly lines that are plain (ASCII, no number orjson writes otherwise), some that are not
_LINE_TEXT = st.text(alphabet=st.sampled_from(':,"\\ab.\n0e-+ '), max_size=5)
_LINE_PATH = st.sampled_from(["a", "b.c", ":", ",", "d e", "", "x.", "fields", "é"])
_LINE_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-9, 99) | st.just(2.5) | st.just(2**64) | _LINE_TEXT,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_LINE_TEXT, inner, max_size=2),
    max_leaves=4,
)
_LINE_STATE = st.dictionaries(_LINE_PATH, _LINE_TEXT, min_size=1, max_size=4) | st.dictionaries(
    _LINE_PATH, _LINE_VALUE, max_size=3
)
_ROW = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["a", "b", "c", ""]),
        "pre_state": _LINE_STATE,
        "input": st.fixed_dictionaries(
            {"prompt": _LINE_TEXT},
            optional={
                "message_id": st.none() | _LINE_TEXT,
                "metadata": st.dictionaries(_LINE_TEXT, _LINE_VALUE, max_size=2),
            },
        ),
        "expected_post_state": _LINE_STATE,
    },
    optional={"metadata": st.dictionaries(_LINE_TEXT, _VALUE, max_size=2)},
)


@given(
    rows=st.lists(_ROW, max_size=4),
    confidence=st.sampled_from([1.0, 0.5, 1e-05]),
    ascii_only=st.booleans(),
)
def test_a_plain_line_is_checked_and_hashed_as_the_case_built_from_it(
    rows: list[dict[str, Any]], confidence: float, ascii_only: bool
) -> None:
    # each line validated twice: built into a case (as any line that is not plain is), then
    # from its parse alone (its paths now known): the same problems, ids, examples, audit parts
    lines = [json.dumps(row, ensure_ascii=ascii_only).encode() for row in rows]
    found = []
    for plain_allowed in (False, True):
        problems: list[str] = []
        seen: dict[str, int | None] = {}
        valid = []
        for number, raw in enumerate(lines, 1):
            data, plain = parse_json_line(raw)
            got = validate_line(
                data, plain and plain_allowed, number, "c.jsonl", "flat", confidence, problems, seen
            )
            if got is not None:
                valid.append((*got[:4], list(got.human), dict(got.metadata)))
        found.append((problems, seen, valid))
    assert found[0] == found[1]
    for _, example, *_ in found[1][2]:
        assert json.loads(example) is not None  # the text is JSON


# rows that are mostly valid cases, many of them plain lines
_VALID_PATH = st.sampled_from(["a", "b.c", ":", ",", "fields", "é", "x_1"])
_VALID_STATE = st.dictionaries(_VALID_PATH, _LINE_TEXT, min_size=1, max_size=4) | (
    st.dictionaries(_VALID_PATH, _LINE_VALUE, max_size=3)
)
_VALID_ROW = st.fixed_dictionaries(
    {
        "id": st.text(alphabet="abc", min_size=1, max_size=3),
        "pre_state": _VALID_STATE,
        "input": st.fixed_dictionaries(
            {"prompt": _LINE_TEXT},
            optional={
                "message_id": st.none() | _LINE_TEXT,
                "metadata": st.dictionaries(_LINE_TEXT, _LINE_VALUE, max_size=2),
            },
        ),
        "expected_post_state": _VALID_STATE,
    },
    optional={
        "metadata": st.dictionaries(_LINE_TEXT, _VALUE, max_size=2),
        "actual_post_state": st.none() | _VALID_STATE,
    },
)


@given(
    rows=st.lists(_VALID_ROW, max_size=4, unique_by=lambda row: str(row["id"])),
    confidence=st.sampled_from([1.0, 0.5, 1e-05]),
    ascii_only=st.booleans(),
)
def test_a_plain_line_read_again_is_the_case_built_from_it(
    rows: list[dict[str, Any]], confidence: float, ascii_only: bool
) -> None:
    # a line the load found plain is read again without its checks (PLAIN_LINE): the case is
    # the one a JSON case file holds, built and checked, its states' all_strings included
    with tempfile.TemporaryDirectory() as folder:
        jsonl, held = Path(folder) / "c.jsonl", Path(folder) / "c.json"
        jsonl.write_text("".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in rows))
        held.write_text(json.dumps(rows, ensure_ascii=ascii_only))
        problems: list[str] = []
        built = read_case_file(held, "c.json", "flat", confidence, problems)
        if problems:
            return
        for _ in range(2):  # the second load knows every path: its plain lines are plain
            again = read_case_file(jsonl, "c.jsonl", "flat", confidence, problems)
        assert not problems
        assert again.hash == built.hash
        read, want = list(again), list(built)
        assert read == want
        for case, other in zip(read, want, strict=True):
            assert case.input.to_dict() == other.input.to_dict()
            assert type(case.input.metadata) is type(other.input.metadata)
            for state, wanted in (
                (case.pre_state, other.pre_state),
                (case.expected_post_state, other.expected_post_state),
            ):
                flat, flat_wanted = state.flat_values, wanted.flat_values
                assert (flat is None) == (flat_wanted is None)
                if flat is not None and flat_wanted is not None:
                    assert flat.all_strings == flat_wanted.all_strings


def test_a_plain_line_is_read_again_as_plain(tmp_path: Path) -> None:
    rows = [
        {
            "id": "s",
            "pre_state": {"a": "x"},
            "input": {"prompt": "p"},
            "expected_post_state": {"a": "y"},
        },
        {
            "id": "n",
            "pre_state": {"a": 1},
            "input": {"prompt": "p"},
            "expected_post_state": {"a": "y"},
        },
        {
            "id": "m",
            "pre_state": {"a": "x"},
            "input": {"prompt": "p"},
            "expected_post_state": {"a": None},
        },
        {"id": "e", "pre_state": {}, "input": {"prompt": "p"}, "expected_post_state": {"a": "y"}},
    ]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for _ in range(2):
        cases = read_case_file(path, "c.jsonl", "flat", 1.0, [])
    assert isinstance(cases, FileCases)
    kinds = [kind for kind in cases._kinds or b""]
    assert kinds == [
        PLAIN_LINE | PRE_STRINGS | POST_STRINGS,
        PLAIN_LINE | POST_STRINGS,
        PLAIN_LINE | PRE_STRINGS,
        0,  # an empty state: built as any other line
    ]
    strings = [
        (c.pre_state.flat_values.all_strings, c.expected_post_state.flat_values.all_strings)
        for c in list(cases)[:3]
        if c.pre_state.flat_values and c.expected_post_state.flat_values
    ]
    assert strings == [(True, True), (False, True), (True, False)]


def test_a_plain_line_is_hashed_without_building_its_case(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"c{i}",
            "pre_state": {"plain.a": "x", "plain.b": i},
            "input": {"prompt": "p"},
            "expected_post_state": {"plain.a": "y", "plain.b": [i, "z"]},
            "metadata": {"n": i},
        }
        for i in range(3)
    ]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "cases.json").write_text(json.dumps(rows))
    suites = []
    for suffix in ("jsonl", "json"):  # the JSON file's cases are built and held
        path = tmp_path / f"{suffix}.yaml"
        mutator = 'mutator: {type: python, callable: "builtins:print"}\n'
        path.write_text(mutator + f"cases: {{file: cases.{suffix}}}\n")
        suites.append(load_suite(path, load_mutator=False))
    assert suites[0].cases_hash == suites[1].cases_hash
    data, plain = parse_json_line(json.dumps(rows[1]).encode())
    assert plain
    case = suites[1].cases[1]
    seen: dict[str, int | None] = {}
    got = validate_line(data, plain, 2, "c.jsonl", "flat", 1.0, [], seen)
    assert got is not None
    assert got.example == example_json(case) == _reference(case)
