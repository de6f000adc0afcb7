"""Datasets: loading from JSON, JSON Lines, CSV and lists, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stateval.errors import DatasetError
from stateval.harness import EvaluationDataset, EvaluationSample


def test_from_list_builds_samples_with_generated_ids() -> None:
    ds = EvaluationDataset.from_list(
        [
            {"input": "2+2?", "reference": "4"},
            {"id": 7, "input": "capital?", "reference": "Paris", "output": "Paris"},
            EvaluationSample("s3", "q", "r"),
        ],
        name="mixed",
        metadata={"owner": "qa"},
    )
    assert [s.id for s in ds] == ["sample-1", "7", "s3"]
    assert ds.samples[1].output == "Paris"
    assert ds.metadata == {"owner": "qa"}


def test_non_string_fields_become_canonical_json() -> None:
    ds = EvaluationDataset.from_list(
        [{"input": {"q": 1}, "reference": {"b": 2, "a": 1}, "output": ["x"]}]
    )
    assert ds.samples[0].input == '{"q": 1}'
    assert ds.samples[0].reference == '{"a": 1, "b": 2}'
    assert ds.samples[0].output == '["x"]'


def test_duplicate_ids_are_rejected() -> None:
    with pytest.raises(DatasetError, match="duplicate sample id 'a'"):
        EvaluationDataset.from_list([{"id": "a", "input": "x"}, {"id": "a", "input": "y"}])


def test_from_list_names_the_bad_sample() -> None:
    with pytest.raises(DatasetError, match=r"sample 2: input: Field required"):
        EvaluationDataset.from_list([{"input": "x"}, {"reference": "y"}])
    with pytest.raises(DatasetError, match=r"sample 1: answer: Extra inputs"):
        EvaluationDataset.from_list([{"input": "x", "answer": "y"}])


def test_from_json_list_and_object_forms(tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps([{"input": "a", "reference": "b"}]), encoding="utf-8")
    ds = EvaluationDataset.from_json(plain)
    assert (ds.name, len(ds)) == ("plain", 1)
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(
        json.dumps({"name": "geo", "metadata": {"v": 2}, "samples": [{"input": "é", "id": "x"}]}),
        encoding="utf-8",
    )
    ds = EvaluationDataset.from_json(wrapped)
    assert (ds.name, ds.metadata, ds.samples[0].input) == ("geo", {"v": 2}, "é")


def test_from_json_errors_name_file_and_position(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"input": "a"},\n  {"input": }\n]', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"broken\.json line 3 column 13: invalid JSON"):
        EvaluationDataset.from_json(broken)
    bad_sample = tmp_path / "bad.json"
    bad_sample.write_text('[{"input": "a"}, {"input": "b", "refrence": "c"}]', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad\.json sample 2: refrence: Extra inputs"):
        EvaluationDataset.from_json(bad_sample)
    scalar = tmp_path / "scalar.json"
    scalar.write_text("3", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"scalar\.json: expected a list"):
        EvaluationDataset.from_json(scalar)
    with pytest.raises(DatasetError, match="cannot read dataset"):
        EvaluationDataset.from_json(tmp_path / "absent.json")


def test_from_jsonl_skips_blank_lines_and_names_bad_lines(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text('{"input": "a"}\n\n{"input": "b", "output": "c"}\n', encoding="utf-8")
    ds = EvaluationDataset.from_jsonl(good)
    assert [s.input for s in ds] == ["a", "b"]
    assert [s.id for s in ds] == ["sample-1", "sample-2"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"input": "a"}\n{"input": "b"\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad\.jsonl line 2 column 14: invalid JSON"):
        EvaluationDataset.from_jsonl(bad)
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text('{"input": "a"}\n\n["not", "an", "object"]\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"wrong\.jsonl line 3: a sample is an object"):
        EvaluationDataset.from_jsonl(wrong)


def test_from_csv_maps_columns_and_extra_columns_to_metadata(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text(
        "id,input,reference,output,topic,metadata\n"
        'q1,"Capital of France?",Paris,,geo,"{""level"": 1}"\n'
        'q2,"Line one\nline two",x,y,misc,\n',
        encoding="utf-8",
    )
    ds = EvaluationDataset.from_csv(path)
    first, second = ds.samples
    assert (first.id, first.reference, first.output) == ("q1", "Paris", None)
    assert first.metadata == {"level": 1, "topic": "geo"}
    assert second.input == "Line one\nline two"
    assert second.output == "y"


def test_from_csv_errors_name_file_and_line(tmp_path: Path) -> None:
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("input,reference\na,b\nc\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"ragged\.csv line 3: 1 fields, the header has 2"):
        EvaluationDataset.from_csv(ragged)
    no_input = tmp_path / "noinput.csv"
    no_input.write_text("question,reference\na,b\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"noinput\.csv line 1: the header has no 'input'"):
        EvaluationDataset.from_csv(no_input)
    bad_meta = tmp_path / "meta.csv"
    bad_meta.write_text("input,metadata\na,{}\nb,[1]\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"meta\.csv line 3: metadata must be a JSON object"):
        EvaluationDataset.from_csv(bad_meta)
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DatasetError, match="no header row"):
        EvaluationDataset.from_csv(empty)
    dup = tmp_path / "dup.csv"
    dup.write_text("id,input\na,x\na,y\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"dup\.csv: dataset 'dup': duplicate sample id 'a'"):
        EvaluationDataset.from_csv(dup)
