"""The run journal: durable appends, reading back, torn lines, acknowledgements."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stateval.errors import JournalError
from stateval.run import Journal, RunHeader, list_runs
from stateval.run._journal_file import encode_record, encode_result, parse_record


def _header(**kwargs: object) -> RunHeader:
    data: dict[str, object] = {
        "suite_path": "/s.yaml",
        "suite_name": "s",
        "suite_hash": "h",
        "cases_hash": "c",
        "case_ids": ["a", "b", "c"],
    }
    data.update(kwargs)
    return RunHeader.model_validate(data)


def test_results_and_acks_survive_reopening(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, _header())
    journal.append_result("a", {"post_state": None, "error": "boom", "time_used": 0.1})
    journal.append_ack("dataset", dataset_id="D", example_ids={"a": "E1"})
    journal.append_ack("run", "a", run_id="R1")
    again = Journal.open(tmp_path, journal.run_id)
    assert again.header == journal.header
    assert again.results["a"]["error"] == "boom"
    assert again.ack("dataset") is not None
    assert again.ack("dataset")["example_ids"] == {"a": "E1"}  # type: ignore[index]
    assert again.ack("run", "a")["run_id"] == "R1"  # type: ignore[index]
    assert again.acked("run") == {"a": again.ack("run", "a")}
    assert again.missing == ["b", "c"]
    assert not again.complete


@pytest.mark.parametrize(
    "value",
    [
        2**70,
        10**30 + 7,
        -(2**63) - 1,  # 19 digits, under 64 bits signed: orjson would read a float
        [-(10**19) + 1, 2**64 - 1, -(2**63)],
        "caf\u00e9 \U0001f600",
        "\ud800 unpaired",
        [1.5e-7, -0.0, True, None],
    ],
)
def test_a_result_reads_back_as_it_was_recorded(tmp_path: Path, value: object) -> None:
    # whichever encoder writes it (a wide integer or an unpaired surrogate takes the slow one)
    journal = Journal.create(tmp_path, _header())
    result = {"post_state": None, "error": "boom", "raw_output": value, "time_used": 0.25}
    journal.append_result("a", result)
    again = Journal.open(tmp_path, journal.run_id)
    assert again.results["a"] == {"kind": "result", **result, "case_id": "a"}


def test_latest_is_the_newest_run(tmp_path: Path) -> None:
    first = Journal.create(tmp_path, _header(run_id="20250101-000000-aaaaaa"))
    second = Journal.create(tmp_path, _header(run_id="20250102-000000-bbbbbb"))
    assert list_runs(tmp_path) == [first.run_id, second.run_id]
    assert Journal.open(tmp_path, "latest").run_id == second.run_id


def test_runs_started_in_the_same_second_keep_their_order(tmp_path: Path) -> None:
    # the random suffixes sort against the start order: the headers' times decide
    first = Journal.create(
        tmp_path,
        _header(run_id="20250101-000000-ffffff", created_at="2025-01-01T00:00:00.100000+00:00"),
    )
    second = Journal.create(
        tmp_path,
        _header(run_id="20250101-000000-000000", created_at="2025-01-01T00:00:00.900000+00:00"),
    )
    assert list_runs(tmp_path) == [first.run_id, second.run_id]
    assert Journal.open(tmp_path, "latest").run_id == second.run_id


def test_end_marks_the_run_complete(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, _header(case_ids=["a"]))
    journal.append_result("a", {"post_state": None, "error": None, "time_used": 0})
    journal.append_end()
    reopened = Journal.open(tmp_path)
    assert reopened.complete
    assert reopened.missing == []


def test_a_torn_last_line_is_skipped_and_the_next_append_starts_a_new_line(
    tmp_path: Path,
) -> None:
    journal = Journal.create(tmp_path, _header())
    journal.append_result("a", {"post_state": None, "time_used": 0})
    with journal.path.open("a") as handle:
        handle.write('{"kind": "result", "case_id": "b", "post_st')  # crash mid-write
    reopened = Journal.open(tmp_path)
    assert list(reopened.results) == ["a"]
    reopened.append_result("c", {"post_state": None, "time_used": 0})
    final = Journal.open(tmp_path)
    assert sorted(final.results) == ["a", "c"]


def test_a_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, _header())
    with journal.path.open("a") as handle:
        handle.write("garbage\n")
    journal.append_result("a", {"post_state": None, "time_used": 0})
    with pytest.raises(JournalError, match=r"journal\.jsonl:2: not a JSON record"):
        Journal.open(tmp_path)


def test_unknown_run_names_the_known_ones(tmp_path: Path) -> None:
    Journal.create(tmp_path, _header(run_id="20250101-000000-aaaaaa"))
    with pytest.raises(JournalError, match="20250101-000000-aaaaaa"):
        Journal.open(tmp_path, "nope")
    with pytest.raises(JournalError, match="no runs under"):
        Journal.open(tmp_path / "empty")


def test_grouped_results_are_all_durable_after_flush_and_an_fsync_covers_at_most_the_window(
    tmp_path: Path,
) -> None:
    ids = [f"c{i}" for i in range(200)]
    journal = Journal.create(tmp_path, _header(case_ids=ids), window=8)
    pending = [
        journal.submit_result(c, {"post_state": None, "time_used": i}) for i, c in enumerate(ids)
    ]
    journal.flush()
    assert all(done.done() and done.exception() is None for done in pending)
    assert journal.fsyncs >= 1 + len(ids) // 8  # the header, then batches of at most 8
    reopened = Journal.open(tmp_path)
    assert list(reopened.results) == ids
    assert reopened.results["c17"]["time_used"] == 17
    assert reopened.missing == []


def test_results_are_read_back_from_the_file_not_kept_in_memory(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, _header())
    journal.append_result("b", {"post_state": None, "error": "first", "time_used": 0})
    journal.append_result("a", {"post_state": None, "error": None, "time_used": 0})
    journal.path.write_bytes(journal.path.read_bytes().replace(b'"first"', b'"later"'))
    assert journal.results["b"]["error"] == "later"  # read from disk when asked for
    assert [case_id for case_id, _ in journal.results.read(["a", "x"])] == ["a", "x"]
    assert dict(journal.results.read(["x"])) == {"x": None}


def test_later_repetitions_are_read_back_from_the_file_not_kept_in_memory(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, _header(case_ids=["a", "b"], repetitions=3))
    for case_id in ("a", "b"):
        for repetition in (1, 2, 3):
            record = {"post_state": None, "error": f"{case_id}{repetition}", "time_used": 0}
            journal.append_result(case_id, {**record, "repetition": repetition})
    assert journal.missing_repetitions == []
    assert list(journal.repeated) == [("a", 2), ("a", 3), ("b", 2), ("b", 3)]
    offsets = journal.index().repeated  # what a worker ships: offsets, not records
    assert sorted(offsets) == sorted(journal.repeated)
    assert all(type(offset) is int for offset in offsets.values())
    journal.path.write_bytes(journal.path.read_bytes().replace(b'"b3"', b'"B3"'))
    assert journal.repeated[("b", 3)]["error"] == "B3"  # read from disk when asked for
    assert [r["error"] for r in journal.repeated.values()] == ["a2", "a3", "b2", "B3"]
    assert [r["error"] for r in journal.repetitions_of("b")] == ["b1", "b2", "B3"]
    reopened = Journal.from_index(tmp_path, journal.index())
    assert dict(reopened.repeated.items()) == dict(journal.repeated.items())
    with pytest.raises(KeyError):
        journal.repeated[("c", 2)]
    # a record that is no longer the one written there is refused, not read as another's
    data = journal.path.read_bytes()
    at = offsets[("a", 2)]
    swapped = data[:at] + data[at:].replace(b'"repetition":2', b'"repetition":5', 1)
    journal.path.write_bytes(swapped)
    with pytest.raises(JournalError, match="changed while the run was open"):
        journal.repeated[("a", 2)]


def _view(journal: Journal) -> dict[str, object]:
    """What a reader of ``journal`` sees of it."""
    return {
        "header": journal.header,
        "results": dict(journal.results),
        "repeated": journal.repeated,
        "acks": journal.current_acks(),
        "missing": journal.missing,
        "missing_repetitions": journal.missing_repetitions,
        "complete": journal.complete,
        "spans": journal.kept_spans(),
        "delivered": journal.delivered_spans,
        "lines": list(journal.results.lines()),
    }


def test_a_journal_opened_from_its_index_reads_as_one_opened_from_its_file(
    tmp_path: Path,
) -> None:
    # a worker hands its journal's index to the driver, which opens it without reading it
    journal = Journal.create(tmp_path, _header(repetitions=2))
    journal.append_result("a", {"post_state": {"x": 1}, "error": None})
    journal.append_ack("run", "a", run_id="R1")
    journal.append_result("a", {"post_state": None, "error": "boom", "repetition": 2})
    journal.append_result("b", {"post_state": {"x": 2}, "error": None})
    journal.append_result("b", {"post_state": {"x": 3}, "error": None})  # supersedes
    journal.append_spans(b"otlp", 2)
    journal.append_delivered(["s1"])
    journal.append_end()
    index = pickle.loads(pickle.dumps(journal.index()))  # as it crosses to another process
    opened = Journal.from_index(tmp_path, index)
    assert _view(opened) == _view(Journal.open(tmp_path, journal.run_id)) == _view(journal)
    assert opened.ack("run", "a") is not None
    opened.append_result("c", {"post_state": None, "error": "late"})  # appends where it ended
    assert Journal.open(tmp_path, journal.run_id).results["c"]["error"] == "late"


def test_an_index_of_another_state_of_the_file_is_refused(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, _header())
    index = journal.index()
    journal.append_result("a", {"post_state": None, "error": "boom"})
    with pytest.raises(JournalError, match=r"bytes, not the \d+ its run wrote"):
        Journal.from_index(tmp_path, index)


NUMBERS = (
    st.integers()
    | st.integers(min_value=2**63 - 5, max_value=2**64 + 5)
    | st.integers(min_value=-(2**63) - 5, max_value=-(2**63) + 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1.2345678901234567e-05, 0.00012345678901234567, 1e22, -1e-300, 10**20])
)
VALUES = st.recursive(
    NUMBERS | st.text(alphabet='0123456789-.eE x\\"', max_size=30) | st.none(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_a_record_line_reads_back_as_the_json_module_reads_it(value: object) -> None:
    # orjson reads what it reads alike; a wide integer goes to the json module, a float's
    # many digits (a fast mutator's time_used) do not
    record = {"kind": "result", "case_id": "a", "raw_output": value}
    for line in (encode_result(record), encode_record(record)):
        assert parse_record(line, Path("j"), 1) == json.loads(line)
