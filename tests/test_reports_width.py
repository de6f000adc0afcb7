"""The per-field table at 80 columns: names readable, columns dropped in a stated order."""

from __future__ import annotations

import asyncio
import dataclasses
import io
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from stateval.mutators import PythonMutator, StructuredInput
from stateval.reports import print_summary
from stateval.run import RunSummary, start_journal
from stateval.state import InterpretiveState
from stateval.suite import load_suite
from stateval.upload import run_suite

PATHS = (
    "restaurant.book_people",
    "hotel.pricerange",
    "attraction.name",
    "RentalCars_1.pickup_time",
    "train.leaveat",
)


def _tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    return InterpretiveState.from_flat({p: input.prompt for p in PATHS[1:]})


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> RunSummary:
    folder = tmp_path_factory.mktemp("width")
    data = {
        "name": "width",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {
            "inline": [
                {
                    "id": f"c{i}",
                    "input": {"prompt": "x"},
                    "expected_post_state": dict.fromkeys(PATHS, "x" if i % 2 else "y"),
                }
                for i in range(4)
            ]
        },
        "slots": list(PATHS),
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(data))
    suite = dataclasses.replace(
        load_suite(folder / "suite.yaml", load_mutator=False), mutator=PythonMutator(_tracker)
    )
    journal = start_journal(folder / ".stateval", suite)
    return asyncio.run(run_suite(suite, journal, concurrency=1)).summary


def _table(summary: RunSummary, width: int) -> list[str]:
    console = Console(record=True, width=width, file=io.StringIO())
    print_summary(summary, console)
    text = console.export_text()
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("fields, worst first"))
    return lines[start : start + len(PATHS) + 4]


def test_at_80_columns_every_field_name_is_whole_and_lines_fit(summary: RunSummary) -> None:
    lines = _table(summary, 80)
    assert all(len(line) <= 80 for line in lines)
    body = "\n".join(lines)
    for path in PATHS:
        assert path in body, path  # not cut to 3-4 characters
    header = lines[1]
    for kept in ("field", "n", "F1", "accuracy"):
        assert kept in header.split()
    for number in ("4",):
        assert number in body
    # the dropped columns are named, in the order they go
    note = next(line for line in _full(summary, 80) if "left out at this width" in line)
    assert "matching" in note


def _full(summary: RunSummary, width: int) -> list[str]:
    console = Console(record=True, width=width, file=io.StringIO())
    print_summary(summary, console)
    return console.export_text().splitlines()


def test_a_wide_terminal_keeps_every_column(summary: RunSummary) -> None:
    lines = _table(summary, 200)
    header = lines[1].split()
    for column in ("matching", "mismatched", "missing", "extra", "precision", "recall", "F1"):
        assert column in header
    assert not any("left out at this width" in line for line in _full(summary, 200))


def test_mode_both_prints_both_experiments_with_their_modes(tmp_path: Path) -> None:
    from episodes_fixture import episode_suite

    suite = episode_suite(tmp_path)
    runs = {}
    for mode in ("teacher_forced", "free_running"):
        journal = start_journal(tmp_path / ".stateval", suite, mode=mode)
        done = asyncio.run(run_suite(suite, journal, concurrency=1)).summary
        runs[mode] = dataclasses.replace(done, experiment_url=f"http://phoenix/experiments/{mode}")
    both = dataclasses.replace(runs["free_running"], compared=runs["teacher_forced"])
    console = Console(record=True, width=200, file=io.StringIO())
    print_summary(both, console)
    text = console.export_text()
    assert "Phoenix experiment (teacher-forced): http://phoenix/experiments/teacher_forced" in text
    assert "Phoenix experiment (free-running): http://phoenix/experiments/free_running" in text


def test_each_mode_names_itself_in_its_experiment(tmp_path: Path) -> None:
    from episodes_fixture import episode_suite
    from stateval.upload._sink import run_experiment

    suite = episode_suite(tmp_path)
    for mode, words in (("teacher_forced", "teacher-forced"), ("free_running", "free-running")):
        spec = run_experiment(start_journal(tmp_path / ".stateval", suite, mode=mode))
        assert spec.description is not None
        assert spec.description.endswith(f", {words}")
        assert spec.metadata["mode"] == mode
