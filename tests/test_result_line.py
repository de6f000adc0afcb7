"""A result record's journal line made from encoded parts (`stateval.run._result_line`) is the
line the journal writes from the record's dict, byte for byte, and the run's pipeline journals
every case as before: first repetitions through their line, any other through its dict. Read
back off its bytes (`read_result_line`), a line gives what the checked path (`parse_record`,
`CaseResult.from_dict`) gives, or nothing: then the checked path reads it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stateval.compare import FieldPolicies, MatchPolicy
from stateval.errors import JournalError
from stateval.mutators import StructuredInput
from stateval.run import SCORES_KEY, CaseResult, Journal, Judgement, RunHeader, RunTally, Scoring
from stateval.run._compact_scores import compact_scores, compact_scores_json
from stateval.run._journal_file import encode_result, parse_record
from stateval.run._pipeline import CasePipeline
from stateval.run._result_line import read_result_line, result_line, state_json
from stateval.run._scoring import score_case
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import Case

# what JSON escapes or orjson refuses: quotes, backslashes, control characters, the sequences
# the line is cut at, non-ASCII text and an unpaired surrogate
TEXTS = st.sampled_from(
    ["x", "", 'a"b', "\\", 'c":"d', 'e","f', "\n\t\x00", "é✓", "\ud800", ",", ":", ",:", "x:"]
)
TEXTS = TEXTS | st.text(max_size=6)
PATHS = st.sampled_from(["a", "b.c", "d_e", "f0", "g.h.i", ",", ":", "a,"])
CONFIDENCES = st.sampled_from([1.0, 0.5, 0.0, -0.0, 1e-7, 0.1 + 0.2])
VALUES = TEXTS | st.integers(-3, 3) | st.just(2**70) | st.lists(TEXTS, max_size=2)


@st.composite
def states(draw: st.DrawFn) -> InterpretiveState:
    """A flat state (of strings mostly; a message id sometimes) or a state of candidates."""
    values = draw(st.dictionaries(PATHS, TEXTS if draw(st.booleans()) else VALUES, max_size=5))
    confidence = draw(CONFIDENCES)
    message_id = draw(st.none() | TEXTS)
    try:
        if draw(st.integers(0, 4)):
            return InterpretiveState.from_flat(values, confidence=confidence, message_id=message_id)
        state = InterpretiveState()
        for path, value in values.items():
            state.add_value(path, ValueConfidence(value, confidence, message_id))
            state.add_value(path, ValueConfidence("other", 0.25))
        return state
    except Exception:  # a value a state refuses (an unpaired surrogate)
        return InterpretiveState.from_flat({}, confidence=confidence)


@st.composite
def results(draw: st.DrawFn) -> CaseResult:
    failed = draw(st.integers(0, 4)) == 0
    return CaseResult(
        draw(st.sampled_from(["c1", "c\u00e9", 'c"2'])),
        None if failed else draw(states()),
        draw(TEXTS) if failed else None,
        "ValueError" if failed else None,
        draw(st.sampled_from([0.0, 0.001, 12.5])),
        trace_id=draw(st.none() | st.just("ab" * 16)),
        raw_output=draw(st.none() | TEXTS),
        started_at=draw(st.none() | st.just("2026-12-02T06:00:00+00:00")),
        span_id=draw(st.none() | st.just("cd" * 8)),
        repetition=draw(st.sampled_from([1, 1, 1, 2])),
        pre_state=draw(st.none() | st.just(InterpretiveState.from_flat({"a": "x"}))),
    )


SCORES = st.none() | st.fixed_dictionaries(
    {"s": st.dictionaries(st.text(max_size=4), st.floats(0, 1), max_size=3)},
    optional={"ops": st.just({"keep": [1, 2, {"stale": 1}]}), "x": st.lists(TEXTS, max_size=2)},
)


def _from_dict(result: CaseResult, case_id: str, scores: dict[str, Any] | None) -> bytes:
    """The line `Journal.submit_result` writes for the result's record."""
    record = result.to_dict()
    if scores is not None:
        record[SCORES_KEY] = scores
    return encode_result({"kind": "result", **record, "case_id": case_id})


@settings(max_examples=400, deadline=None)
@given(results(), SCORES)
def test_a_result_line_is_the_line_of_the_results_record(
    result: CaseResult, scores: dict[str, Any] | None
) -> None:
    try:
        encoded = None if scores is None else orjson.dumps(scores)
    except TypeError:  # orjson refuses them: the pipeline encodes the record's dict
        return
    line = result_line(result, result.case_id, encoded)
    if line is None:  # only what it is not for, or what orjson refuses
        first = result.repetition == 1 and result.pre_state is None
        refused = False
        try:
            orjson.dumps(result.to_dict())
        except TypeError:
            refused = True
        assert not first or refused
        return
    assert line == _from_dict(result, result.case_id, scores)
    assert orjson.loads(line)["post_state"] == (
        None if result.post_state is None else result.post_state.to_dict()
    )


@settings(max_examples=300, deadline=None)
@given(states())
def test_a_states_json_is_orjsons_of_its_dict(state: InterpretiveState) -> None:
    made = state_json(state)
    flat = state.flat_values
    plain = flat is not None and all(  # nor a path or value a separator alone
        isinstance(v, str)
        and '"' not in v
        and '"' not in p
        and v.isascii()
        and p not in (",", ":")
        and v not in (",", ":")
        for p, v in flat.values.items()
    )
    if made is None:
        assert not plain
    else:
        assert made == orjson.dumps(state.to_dict())
    if plain:  # the common state of a run: made here
        assert made is not None


@pytest.mark.parametrize(
    "values",
    [
        {"a": ",", "b": "x"},  # its quotes and comma were taken for the splice between values
        {"a": "x", "b": ","},
        {",": "x", "b": "y"},
        {":": "x"},
        {"a": ":", "b": ":", "c": "x:"},
        {"a,": ",x", "b": "y,", "c": ":,"},
    ],
)
def test_a_path_or_value_of_a_separator_is_journaled_as_its_dict_is(
    values: dict[str, str],
) -> None:
    state = InterpretiveState.from_flat(values)
    made = state_json(state)
    assert made is None or made == orjson.dumps(state.to_dict())
    result = CaseResult("c1", state, None, None, 0.5)
    line = result_line(result, "c1", None)
    assert line == _from_dict(result, "c1", None)
    assert _checked(line) == result
    read = read_result_line(line, "c1")
    if read is not None:
        _assert_same(read, _checked(line))


def _case(i: int, pre: dict[str, Any], expected: dict[str, Any]) -> Case:
    return Case(
        f"c{i}",
        InterpretiveState.from_flat(pre),
        StructuredInput(str(i), "m"),
        InterpretiveState.from_flat(expected),
    )


def test_the_pipeline_journals_each_record_as_its_dict_is_encoded(tmp_path: Path) -> None:
    # strict flat cases (compact scores made once per distinct outcome), a failed call with an
    # unpaired surrogate in its error (orjson refuses the line), a repetition, a turn given
    # its own pre-state, a state of candidates and one with a number
    scoring = Scoring(FieldPolicies(default=MatchPolicy(confidence="ignore")))
    candidates = InterpretiveState()
    candidates.add_value("a", ValueConfidence("x", 0.5))
    candidates.add_value("a", ValueConfidence("y", 0.25))
    cases, results = [], []
    for i in range(8):
        case = _case(i, {"a": "x", "b": "y"}, {"a": "x", "b": f"v{i % 2}"})
        actual = InterpretiveState.from_flat({"a": "x", "b": "v0", "c": 'q"'})
        cases.append(case)
        results.append(CaseResult(case.id, actual, None, None, 0.5, started_at="t"))
    results[2] = CaseResult("c2", None, "bad \ud800 text", "ValueError", 0.5)
    results[3] = CaseResult("c3", InterpretiveState.from_flat({"b": 7}), None, None, 0.5)
    results[4] = CaseResult("c4", candidates, None, None, 0.5, repetition=2)
    results[5] = CaseResult("c5", candidates, None, None, 0.5)
    given = InterpretiveState.from_flat({"a": "z"})
    results[6] = CaseResult("c6", InterpretiveState.from_flat({"a": "x"}), None, None, 0.5)
    results[6] = CaseResult("c6", results[6].post_state, None, None, 0.5, pre_state=given)
    header = RunHeader(
        suite_path="s.yaml",
        suite_name="s",
        suite_hash="h",
        cases_hash="c",
        case_ids=[c.id for c in cases],
    )
    journal = Journal.create(tmp_path, header)
    tally = RunTally(scoring)
    index = {c.id: i for i, c in enumerate(cases)}
    pipeline = CasePipeline(journal, scoring, tally, index, mutator=None, figures=None)  # type: ignore[arg-type]
    pipeline.figures = scoring.accumulator()
    expected = []
    for case, result in zip(cases, results, strict=True):
        asyncio.run(pipeline.record(case, result))
        score = score_case(case, result, scoring)
        scores = compact_scores(case, score, scoring, scoring.accumulator())
        expected.append(_from_dict(score.result, case.id, scores))
        made = compact_scores_json(case, score, scoring, scoring.accumulator())
        assert made == (None if scores is None else orjson.dumps(scores))
    journal.flush()
    lines = [
        line for line in journal.path.read_bytes().splitlines(True) if b'"kind":"result"' in line
    ]
    assert lines == expected
    assert set(journal.results) == {c.id for c in cases} - {"c4"}  # c4: a second repetition
    assert journal.results["c0"]["post_state"] == results[0].post_state.to_dict()  # type: ignore[union-attr]


def _checked(line: bytes) -> CaseResult:
    """The result the checked path reads from ``line`` (`parse_record`, `from_dict`)."""
    return CaseResult.from_dict(parse_record(line, Path("journal.jsonl"), None))


def _assert_same(read: CaseResult, checked: CaseResult) -> None:
    """``read`` is ``checked`` to the last detail a later step may look at: every field (floats
    by their bits), and a post-state in the same form (compact or not, values in order)."""
    assert read == checked
    assert repr(read) == repr(checked)  # -0.0 and 0.0, 1 and 1.0 told apart
    assert type(read.time_used) is type(checked.time_used)
    mine, theirs = read.post_state, checked.post_state
    if mine is None or theirs is None:
        assert mine is theirs
        return
    assert mine.to_dict() == theirs.to_dict()
    assert orjson.dumps(mine.to_dict()) == orjson.dumps(theirs.to_dict())
    flat, other = mine.flat_values, theirs.flat_values
    assert (flat is None) == (other is None)
    if flat is not None and other is not None:
        assert list(flat.values.items()) == list(other.values.items())
        assert repr(flat.confidence) == repr(other.confidence)
        assert flat.message_id == other.message_id
        assert flat.all_strings == other.all_strings


def _written(result: CaseResult, scores: dict[str, Any] | None) -> bytes | None:
    """The line the pipeline journals for ``result`` (None: scores orjson refuses)."""
    try:
        encoded = None if scores is None else orjson.dumps(scores)
    except TypeError:
        return None
    made = result_line(result, result.case_id, encoded)
    return made if made is not None else _from_dict(result, result.case_id, scores)


@settings(max_examples=500, deadline=None)
@given(results(), SCORES)
def test_a_line_read_off_its_bytes_is_what_the_checked_path_reads(
    result: CaseResult, scores: dict[str, Any] | None
) -> None:
    line = _written(result, scores)
    if line is None:
        return
    read = read_result_line(line, result.case_id)
    if read is not None:
        _assert_same(read, _checked(line))
    post = result.post_state
    flat = None if post is None else post.flat_values
    common = (  # a run's usual line: read here, never left to the checked path
        result.repetition == 1
        and result.pre_state is None
        and (post is None or (flat is not None and flat.values and state_json(post) is not None))
        and result_line(result, result.case_id, None) is not None
    )
    if common:
        assert read is not None
    assert read_result_line(line, result.case_id + "x") is None  # another case's line


# what a changed line may hold: escapes, numbers orjson reads otherwise than the json module,
# another member, whitespace, the sequences the line is cut at
SPLICES = st.sampled_from(
    [
        b"",
        b" ",
        b"\\u0041",
        b"\\",
        b'"',
        b"1e400",
        b"123456789012345678901234",
        b"-9223372036854775809",
        b"-0.0",
        b"1",
        b',"x":1',
        b'"}]}},"error":',
        b',"judgements":[]',
        b'","confidence":1.0}],"',
        b'":[{"value":"',
        b"null",
        b"\xff",
        b"\n",
    ]
)


@settings(max_examples=2000, deadline=None)
@given(results(), SCORES, st.data())
def test_a_changed_line_is_refused_or_read_as_the_checked_path_reads_it(
    result: CaseResult, scores: dict[str, Any] | None, data: st.DataObject
) -> None:
    line = _written(result, scores)
    if line is None:
        return
    for _ in range(data.draw(st.integers(1, 3))):
        # anywhere, or in the post-state or the members after it (where the line is cut)
        low = data.draw(st.sampled_from([0, line.find(b'"post_state"'), line.find(b'"error"')]))
        start = data.draw(st.integers(max(low, 0), len(line)))
        if data.draw(st.booleans()):
            start = min(start, max(low, 0) + 24)
        end = data.draw(st.integers(start, min(len(line), start + 4)))
        splice = data.draw(SPLICES | st.binary(min_size=1, max_size=2))
        line = line[:start] + splice + line[end:]
    read = read_result_line(line, result.case_id)
    if read is None:
        return  # the checked path reads it (or refuses it)
    _assert_same(read, _checked(line))


def test_a_line_with_judgements_or_a_repetition_is_left_to_the_checked_path() -> None:
    state = InterpretiveState.from_flat({"a": "x"})
    judged = CaseResult(
        "c1", state, None, None, 0.5, judgements=(Judgement("a", None, "x", "x", "equivalent", ""),)
    )
    for result in (judged, CaseResult("c1", state, None, None, 0.5, repetition=2)):
        line = _from_dict(result, "c1", None)
        assert read_result_line(line, "c1") is None
        assert _checked(line) == result
    plain = CaseResult("c1", state, None, None, 0.5)
    assert read_result_line(_from_dict(plain, "c1", None), "c1") == plain


def test_a_state_of_confidence_minus_zero_is_written_with_its_sign() -> None:
    # 0.0 and -0.0 are one key of a cache: a state of one written after one of the other
    for confidence in (0.0, -0.0, 0.0):
        result = CaseResult(
            "c1", InterpretiveState.from_flat({"a": "x"}, confidence), None, None, 0.5
        )
        line = result_line(result, "c1", None)
        assert line == _from_dict(result, "c1", None)
        read = read_result_line(line, "c1")
        assert read is not None
        _assert_same(read, result)


def test_journal_results_read_plain_lines_and_others_alike(tmp_path: Path) -> None:
    header = RunHeader(
        suite_path="s.yaml", suite_name="s", suite_hash="h", cases_hash="c", case_ids=["a", "b"]
    )
    journal = Journal.create(tmp_path, header)
    plain = CaseResult("a", InterpretiveState.from_flat({"f": "v"}), None, None, 0.25)
    candidates = InterpretiveState()
    candidates.add_value("f", ValueConfidence("x", 0.5))
    candidates.add_value("f", ValueConfidence("y", 0.25))
    other = CaseResult("b", candidates, None, None, 0.5, raw_output='q"')
    line = result_line(plain, "a", None)
    assert line is not None
    journal.submit_result_line("a", line)
    journal.submit_result("b", other.to_dict())
    journal.flush()
    read = dict(journal.results.results(["b", "a", "missing"]))
    assert read == {"a": plain, "b": other, "missing": None}
    assert read == {
        c: None if r is None else CaseResult.from_dict(r)
        for c, r in journal.results.read(["b", "a", "missing"])
    }


_PLAIN = (
    b'{"kind":"result","case_id":"c1","post_state":{"fields":{"a":[{"value":"x","confidence":1.0}],'
    b'"b":[{"value":"y","confidence":1.0}]}},"error":null,"error_type":null,"time_used":0.5,'
    b'"trace_id":null,"span_id":null,"raw_output":null,"started_at":null,"judgements":[],'
    b'"scores":{"s":{"field:a":1.0}}}\n'
)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"", b""),  # the line as written: read here
        (b'{"fields"', b'{"fie1ds"'),  # not a state: the checked path refuses it
        (b'"error":null', b'"error":123456789012345678901234'),  # the json module reads it
        (b'"time_used":0.5', b'"time_used":123456789012345678901234'),
        (b'"time_used":0.5', b'"time_used":"fast"'),  # `from_dict` refuses it
        (b'"time_used":0.5', b'"time_used":[]'),  # `from_dict` reads 0.0
        (b'"x","confidence":1.0}', b'"x","confidence":0.5}'),  # another confidence
        (b'"confidence":1.0}],"b"', b'"confidence":1.0,"inference":"i"}],"b"'),
        (b'"value":"x"', b'"value":"\\u0078"'),  # an escape the writer does not write
        (b'"b":[{', b'"a":[{'),  # a path twice
        (b'"a":[', b'"a b":['),  # a path a state refuses
        (b'"confidence":1.0}]}}', b'"confidence":1.5}]}}'),
        (b',"scores":{"s":{"field:a":1.0}}', b""),  # no compact scores
        (b'{"s":{"field:a":1.0}}', b'{"s":{"field:a":1.0}'),  # broken scores
        (b'"judgements":[]', b'"judgements":[ ]'),
        (b'"started_at":null,', b'"started_at":null,"x":1,'),  # another member
        (b"}\n", b"}"),  # no newline
        (b'"error":null,', b'"error" : null ,'),  # whitespace between the members
        (b'"judgements":[]', b'"judgements":null'),  # `from_dict` reads no judgements
        (b'"judgements":[]', b'"judgements":0'),
        (b'"judgements":[]', b'"judgements":[1]'),
        (b'"time_used":0.5', b'"time_used":"0.5"'),  # `from_dict` reads 0.5
        (b'"time_used":0.5', b'"time_used":18446744073709551615'),  # 64 bits: an int to both
        (b'"time_used":0.5', b'"time_used":18446744073709551616'),  # past them: the json module
        (b'"time_used":0.5', b'"time_used":-9223372036854775809'),
        (b'"time_used":0.5', b'"time_used":1e19'),
        (b'"time_used":0.5', b'"time_used":-0.0'),
        (b'"error":null', b'"error":["x"]'),  # a member `from_dict` takes as it is
        (b'"error":null', b'"error":{"n":123456789012345678901234}'),
        (b'"started_at":null', b'"started_at":null,"error":"x"'),  # a member twice: the last
        (b'"raw_output":null', b'"raw_output":"\\u00e9 \\n"'),
        (b'"scores":{"s":{"field:a":1.0}}', b'"scores":{"s":123456789012345678901234}'),
        (b'"scores":{"s":{"field:a":1.0}}', b'"scores":NaN'),
        (b'"scores":{"s":{"field:a":1.0}}}', b'"scores":{}} x'),
        (b'"confidence":1.0}', b'"confidence":-0.0}'),  # a confidence of -0.0 for both paths
        # splices undone where `state_json` would not make them: the counts of what was
        # undone, and the values' text (a `":"` or `","` of their own), tell them apart
        (b'"a":[{"value":"x","confidence":1.0}],', b'"a":"x",'),  # one path not spliced
        (b'"a":[{"value":"x"', b'"a":":[{"value":"'),  # undone to {"a": ":", "b": "y"}
        (b'"value":"x","confidence":1.0}],"b"', b'"value":","confidence":1.0}],","b"'),
        (b'{"fields":{"a":', b'{"fields":{":[{"value":"a",":'),
        (b'"x","confidence":1.0}]', b'"x","confidence":1.0}],"c":"z"'),  # one path more
        (b'"x","confidence":1.0}]', b'"x","confidence":1.0}]","confidence":1.0}]'),
        (b'"b":[{"value":"y"', b'"b":"y","a":[{"value":"z"'),  # a path twice, once not spliced
        (b'"a":[{"value":"x","confidence":1.0}],', b'"a":"x\\":[{"value":","confidence":1.0}],'),
        (b'"value":"x"', b'"value":"x\\\\"'),  # escapes: the quotes counted
        (b'"value":"x"', b'"value":"x\\"q"'),
        (b'"value":"x"', b'"value":"x\\u0022"'),
    ],
)
def test_a_hand_changed_line_is_refused_or_read_as_the_checked_path_reads_it(
    old: bytes, new: bytes
) -> None:
    line = _PLAIN.replace(old, new, 1)
    assert old in _PLAIN
    assert line != _PLAIN or not old
    read = read_result_line(line, "c1")
    try:
        checked = _checked(line)
    except JournalError:
        assert read is None
        return
    if read is not None:
        _assert_same(read, checked)
    if not old:
        assert read is not None
