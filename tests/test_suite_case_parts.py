"""A JSONL case file validated in byte ranges (``load_suite(parts=N)``, what ``stateval run
--workers N`` does side by side in forked processes) is the suite of a whole load: the same
case ids, offsets, cases hash, drafts, episodes and warnings, and, for a file with mistakes,
the same problem lines (line numbers, duplicates across the ranges) in the same order."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.errors import SuiteProblemsError
from stateval.orchestrator import forked_parts
from stateval.suite import CasesPart, PartsMap, Suite, load_suite
from stateval.suite._case_file import run_in_turn

SCHEMA = [
    {
        "service_name": "Restaurants_1",
        "slots": [
            {"name": "city", "is_categorical": False, "possible_values": []},
            {
                "name": "price_range",
                "is_categorical": True,
                "possible_values": ["cheap", "moderate", "pricey"],
            },
        ],
    },
]
_HELD: list[Callable[[int], CasesPart]] = []


def _load_held(part: int) -> CasesPart:
    return _HELD[-1](part)


def _every_part_forked(load: Callable[[int], CasesPart], parts: int) -> list[CasesPart]:
    """Every part in another process, the last first (the first part hashed there too)."""
    _HELD.append(load)
    try:
        with ProcessPoolExecutor(max_workers=parts, mp_context=get_context("fork")) as pool:
            futures = [pool.submit(_load_held, part) for part in reversed(range(parts))]
            return [future.result() for future in reversed(futures)]
    finally:
        _HELD.pop()


RUNS = (
    [("in turn", run_in_turn, n) for n in (2, 3, 5, 8, 13)]
    + [("forked", forked_parts, n) for n in (2, 3)]
    + [("every part forked", _every_part_forked, 3)]
)


def _case(i: int, **extra: Any) -> dict[str, Any]:
    price = ["cheap", "moderate", "pricey"][i % 3]
    case: dict[str, Any] = {
        "id": f"c{i}",
        "pre_state": {"Restaurants_1.city": f"town {i}"} if i % 4 else {},
        "input": {"prompt": f"turn {i} é", "metadata": {"n": i}},
        "expected_post_state": {"Restaurants_1.city": f"city {i}",
                                "Restaurants_1.price_range": price, "notes": f"n{i % 5}"},
        "metadata": {"dialogue": f"d{i // 4}", "turn": i % 4, "services": ["Restaurants_1"]},
    }  # fmt: skip
    if i % 7 == 3:  # a list gold, a plain value elsewhere: a warning
        case["expected_post_state"]["notes"] = [f"n{i}"]
    return {**case, **extra}


def _write(folder: Path, lines: list[str]) -> Path:
    (folder / "schema.json").write_text(json.dumps(SCHEMA))
    (folder / "cases.jsonl").write_text("".join(line + "\n" for line in lines))
    suite = {
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"file": "cases.jsonl"},
        "slots": {"file": "schema.json", "services_key": "metadata.services"},
        "metrics": {"convention": "sgd"},
        "episodes": {"by": "metadata.dialogue", "order": "metadata.turn"},
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _good_lines() -> list[str]:
    lines = [json.dumps(_case(i)) for i in range(60)]
    draft = _case(61, metadata={"dialogue": "d99", "turn": 0, "review": {"status": "unreviewed"}})
    del draft["expected_post_state"]
    lines[17:17] = ["", json.dumps(draft), "   "]  # blank lines and a draft inside
    return lines


def _facts(suite: Suite) -> dict[str, Any]:
    assert suite.episodes is not None
    return {
        "ids": suite.cases.ids,
        "cases_hash": suite.cases_hash,
        "suite_hash": suite.suite_hash,
        "cases": [case.to_example() for case in suite.cases],
        "last": suite.cases[-1].to_example(),
        "drafts": suite.drafts,
        "warnings": suite.warnings,
        "episodes": dict(suite.episodes.index),
    }


@pytest.mark.parametrize(("how", "run_parts", "parts"), RUNS)
def test_a_case_file_loaded_in_parts_is_the_whole_load(
    tmp_path: Path, how: str, run_parts: PartsMap, parts: int
) -> None:
    path = _write(tmp_path, _good_lines())
    whole = load_suite(path, load_mutator=False)
    split = load_suite(path, load_mutator=False, parts=parts, run_parts=run_parts)
    assert _facts(split) == _facts(whole)
    assert len(whole.cases) == 60
    assert whole.drafts == ("c61",)
    assert whole.warnings  # the list gold's warning is there to compare


def _problems(path: Path, parts: int = 1, run_parts: PartsMap = run_in_turn) -> list[str]:
    with pytest.raises(SuiteProblemsError) as raised:
        load_suite(path, load_mutator=False, parts=parts, run_parts=run_parts)
    return raised.value.problems


@pytest.mark.parametrize(("how", "run_parts", "parts"), RUNS)
def test_a_case_file_with_mistakes_reads_as_in_a_whole_load(
    tmp_path: Path, how: str, run_parts: PartsMap, parts: int
) -> None:
    lines = [json.dumps(_case(i)) for i in range(40)]
    lines[3] = json.dumps(_case(3, id="c30"))  # c30 at lines 4, 31 and 36
    lines[35] = json.dumps(_case(35, id="c30"))
    lines[9] = '{"id": "c9", "input": '  # not JSON
    lines[20] = json.dumps(_case(20, expected_post_state="north"))  # a field's mistake
    lines[21] = json.dumps(_case(21, metadata={"turn": 1, "services": []}))  # no episode
    lines[31] = json.dumps({**_case(31), "pre_state": 7})
    path = _write(tmp_path, lines)
    whole = _problems(path)
    assert [p.split(":")[1] for p in whole] == ["10", "21", "22", "31", "32", "36"]
    assert whole[3].endswith("id: duplicate case id (first at line 4)")
    assert whole[5].endswith("id: duplicate case id (first at line 4)")
    assert _problems(path, parts, run_parts) == whole


def _audited(mistakes: bool) -> list[str]:
    lines = []
    for i in range(50):
        case = _case(i)
        if mistakes and i % 2:  # 25 values outside the slot's: the first 20, then how many more
            case["expected_post_state"]["Restaurants_1.price_range"] = f"chep{i}"
        if mistakes and i % 9 == 0:  # under frame scope, a case that names no services
            del case["metadata"]["services"]
        if i % 11 == 5:  # a human verdict on a field no LLM judges
            case["human"] = {"Restaurants_1.city": "same"}
        lines.append(json.dumps(case))
    return lines


@pytest.mark.parametrize(("how", "run_parts", "parts"), RUNS)
def test_the_suites_checks_of_every_case_read_as_in_a_whole_load(
    tmp_path: Path, how: str, run_parts: PartsMap, parts: int
) -> None:
    path = _write(tmp_path, _audited(mistakes=True))
    whole = _problems(path)
    assert sum("is not one of the slot's possible values" in p for p in whole) == 20
    assert whole[20].endswith("... and 5 more")
    assert "6 of 50 cases name none" in whole[21]
    assert _problems(path, parts, run_parts) == whole
    path = _write(tmp_path, _audited(mistakes=False))
    whole = _problems(path)
    assert len(whole) == 5
    assert all("a human verdict on a field no LLM" in p for p in whole)
    assert _problems(path, parts, run_parts) == whole


def test_an_unreadable_case_file_reads_as_in_a_whole_load(tmp_path: Path) -> None:
    path = _write(tmp_path, _good_lines())
    (tmp_path / "cases.jsonl").unlink()
    (tmp_path / "cases.jsonl").mkdir()  # open() fails: the suite's cases.file is named
    whole = _problems(path)
    assert len(whole) == 1
    assert "cases.file: cannot read cases.jsonl" in whole[0]
    assert _problems(path, 2, forked_parts) == whole


def test_run_with_workers_words_a_bad_case_file_as_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    lines = [json.dumps(_case(i)) for i in range(30)]
    lines[25] = json.dumps(_case(25, id="c2"))
    lines[4] = "{nope"
    _write(tmp_path, lines)
    outputs = []
    for workers in ("1", "2"):
        args = ["run", "suite.yaml", "--no-phoenix", "--workers", workers]
        result = CliRunner().invoke(app, args)
        assert result.exit_code != 0
        assert "Traceback" not in result.output
        outputs.append(result.output)
    assert outputs[0] == outputs[1]
    assert "cases.jsonl:5: " in outputs[0]
    assert "cases.jsonl:26: case 'c2': id: duplicate case id (first at line 3)" in outputs[0]


def test_the_parts_split_one_size_of_the_file(tmp_path: Path) -> None:
    """Lines appended while the parts are read are read by the last part: the ranges are cut
    from one size, so no line falls between two parts or is read by both."""
    path = _write(tmp_path, [json.dumps(_case(i)) for i in range(40)])
    more = "".join(json.dumps(_case(i)) + "\n" for i in range(40, 120))

    def growing(load: Callable[[int], CasesPart], parts: int) -> list[CasesPart]:
        first = load(0)
        with (tmp_path / "cases.jsonl").open("a") as handle:
            handle.write(more)
        return [first, *(load(part) for part in range(1, parts))]

    suite = load_suite(path, load_mutator=False, parts=2, run_parts=growing)
    assert suite.cases.ids == tuple(f"c{i}" for i in range(120))
    assert suite.cases_hash == load_suite(path, load_mutator=False).cases_hash
