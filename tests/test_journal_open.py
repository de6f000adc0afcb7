"""Opening a journal reads a first repetition's result line only up to its case id
(`plain_result_id`): what it knows is what parsing every line gives, and a broken line is
still named by its number, when it is read."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stateval.errors import JournalError
from stateval.run import CaseResult, Journal, RunHeader
from stateval.run import _journal as journal_module
from stateval.run._journal_file import parse_record, plain_result_id
from stateval.state import InterpretiveState

_IDS = st.text(min_size=0, max_size=8)  # quotes, backslashes, control and non-ASCII characters


def _header(case_ids: list[str]) -> RunHeader:
    return RunHeader(
        suite_path="/s.yaml", suite_name="s", suite_hash="h", cases_hash="c", case_ids=case_ids
    )


def _result(case_id: str, repetition: int, pre: bool, field: str) -> dict[str, object]:
    state = InterpretiveState.from_flat({field: "x"})
    made = CaseResult(
        case_id=case_id,
        post_state=state,
        error=None,
        error_type=None,
        time_used=0.5,
        repetition=repetition,
        pre_state=state if pre else None,
    )
    return made.to_dict()


@settings(max_examples=200, deadline=None)
@given(
    case_id=_IDS,
    repetition=st.integers(1, 3),
    pre=st.booleans(),
    field=st.sampled_from(["f", "repetition", "caf\u00e9", 'q"x']),
)
def test_a_line_read_by_its_head_names_the_case_parsing_it_names(
    case_id: str, repetition: int, pre: bool, field: str
) -> None:
    record = {"kind": "result", **_result(case_id, repetition, pre, field)}
    line = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    found = plain_result_id(line)
    parsed = parse_record(line, Path("j"), 1)
    if found is not None:  # only a first repetition without a pre-state of its own
        assert found == parsed["case_id"]
        assert "repetition" not in parsed
        assert "pre_state" not in parsed
    elif repetition == 1 and not pre and field != "repetition":
        # read by its head as the pipeline writes it, unless its id is written with an escape
        assert any(c in '"\\' or ord(c) < 0x20 for c in case_id)


@pytest.mark.parametrize(
    "line",
    [
        b'{"kind":"result","case_id":"a","repetition":2,"post_state":null}\n',  # hand-made order
        b'{"kind":"result","case_id":"a\\"b","post_state":null}\n',  # an escaped quote
        b'{"kind":"result","case_id":"a\\u00e9","post_state":null}\n',  # an escape
        b'{"kind":"result","case_id":"a"}\n',  # no comma after the id: parsed whole
        b'{"kind":"ack","case_id":"a","what":"run"}\n',
        b'{"kind": "result", "case_id": "a"}\n',  # written by another encoder
    ],
)
def test_other_lines_are_parsed_whole(line: bytes) -> None:
    assert plain_result_id(line) is None


def _journal(tmp_path: Path) -> Journal:
    ids = ["a", "b\u00e9", 'q"x', "c", "d", "e"]
    journal = Journal.create(tmp_path, _header(ids))
    journal.submit_result("a", _result("a", 1, False, "f")).result()
    journal.submit_result("b\u00e9", _result("b\u00e9", 1, False, "f")).result()
    journal.submit_result('q"x', _result('q"x', 1, False, "f")).result()
    journal.submit_result("a", _result("a", 2, False, "f")).result()
    journal.submit_result("c", _result("c", 1, True, "f")).result()
    journal.submit_result("d", _result("d", 1, False, "repetition")).result()  # parsed whole
    journal.append_ack("run", "a", run_id="R1")
    journal.submit_result("a", _result("a", 1, False, "g")).result()  # supersedes the first
    journal.flush()
    return journal


def test_opening_knows_what_parsing_every_line_knows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = _journal(tmp_path)
    heads = [plain_result_id(line) for line in written.path.read_bytes().splitlines(True)]
    assert [h for h in heads if h is not None] == ["a", "b\u00e9", "a"]  # 'q"x', c, d: whole
    fast = Journal.open(tmp_path, written.run_id)
    monkeypatch.setattr(journal_module, "plain_result_id", lambda raw: None)
    whole = Journal.open(tmp_path, written.run_id)
    assert fast.results.offsets() == whole.results.offsets()
    assert list(fast.results.offsets()) == ["b\u00e9", 'q"x', "c", "d", "a"]
    assert fast.repeated == whole.repeated
    assert set(fast.repeated) == {("a", 2)}
    assert fast.missing == whole.missing == ["e"]
    assert fast.acked("run") == whole.acked("run") == {}  # a's later result supersedes its ack
    assert dict(fast.results) == dict(whole.results)
    assert fast.results["a"]["post_state"]["fields"].keys() == {"g"}


def test_a_broken_result_line_is_named_by_its_number_when_read(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, _header(["a", "b"]))
    journal.submit_result("a", _result("a", 1, False, "f")).result()
    with journal.path.open("ab") as handle:
        handle.write(b'{"kind":"result","case_id":"b","post_state":{"fiel\n')  # not JSON
    opened = Journal.open(tmp_path, journal.run_id)
    assert opened.missing == []
    with pytest.raises(JournalError, match=r"journal\.jsonl:3: not a JSON record"):
        opened.results["b"]
    with pytest.raises(JournalError, match=r"journal\.jsonl:3: not a JSON record"):
        list(opened.results.read(["a", "b"]))
    assert opened.results["a"]["case_id"] == "a"


def test_a_header_from_a_newer_stateval_is_refused_in_words(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, _header(["a"]))
    journal.flush()
    lines = journal.path.read_bytes().splitlines(keepends=True)
    header = orjson.loads(lines[0])
    journal.path.write_bytes(orjson.dumps({**header, "zeta": 1, "alpha": 2}) + b"\n")
    with pytest.raises(JournalError) as raised:
        Journal.open(tmp_path, journal.run_id)
    assert str(raised.value) == (
        f"{journal.path}:1: the run header holds 'alpha', 'zeta', which this stateval does not "
        "know: the run was journaled by a newer stateval (upgrade to read it)"
    )
    # a header with a value of the wrong kind is still pydantic's one line
    journal.path.write_bytes(orjson.dumps({**header, "repetitions": 0}) + b"\n")
    with pytest.raises(JournalError, match=r":1: invalid run header: Input should be greater"):
        Journal.open(tmp_path, journal.run_id)
