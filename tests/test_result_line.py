"""A result record's journal line made from encoded parts (`stateval.run._result_line`) is the
line the journal writes from the record's dict, byte for byte, and the run's pipeline journals
every case as before: first repetitions through their line, any other through its dict."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from stateval.compare import FieldPolicies, MatchPolicy
from stateval.mutators import StructuredInput
from stateval.run import SCORES_KEY, CaseResult, Journal, RunHeader, RunTally, Scoring
from stateval.run._compact_scores import compact_scores, compact_scores_json
from stateval.run._journal_file import encode_result
from stateval.run._pipeline import CasePipeline
from stateval.run._result_line import result_line, state_json
from stateval.run._scoring import score_case
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import Case

# what JSON escapes or orjson refuses: quotes, backslashes, control characters, the sequences
# the line is cut at, non-ASCII text and an unpaired surrogate
TEXTS = st.sampled_from(["x", "", 'a"b', "\\", 'c":"d', 'e","f', "\n\t\x00", "é✓", "\ud800"])
TEXTS = TEXTS | st.text(max_size=6)
PATHS = st.sampled_from(["a", "b.c", "d_e", "f0", "g.h.i"])
CONFIDENCES = st.sampled_from([1.0, 0.5, 0.0, 1e-7, 0.1 + 0.2])
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
    plain = flat is not None and all(
        isinstance(v, str) and '"' not in v and '"' not in p and v.isascii()
        for p, v in flat.values.items()
    )
    if made is None:
        assert not plain
    else:
        assert made == orjson.dumps(state.to_dict())
    if plain:  # the common state of a run: made here
        assert made is not None


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
