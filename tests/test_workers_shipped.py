"""A shard that runs in a Ray task (or a spawned worker) runs the suite the driver loaded: it
gets it pickled (`shipped`: the cases' ids, offsets and line checksums, the policies, the
hashes; not the mutator and the judge, which it builds), reads its cases from the case file at
the same path, and refuses a line that is not the one the driver's load validated."""

from __future__ import annotations

import asyncio
import io
import json
import pickle
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from rich.console import Console

import stateval.orchestrator._workers as workers
from stateval.errors import StatevalError, SuiteError
from stateval.orchestrator import RunRequest, carry_out, shipped
from stateval.reports import ReportRequest
from stateval.run import Journal, PhoenixTarget, RunOutcome, RunSummary
from stateval.suite import Suite, load_suite, with_mutator
from stateval.upload import run_suite

MUTATOR = """
from stateval.state import ValueConfidence


def track(state, input):
    i = int(input.prompt)
    out = state.copy()
    out.set_value("city", ValueConfidence("Centre" if i % 3 else "north", 0.9))
    out.set_value("n", ValueConfidence(input.prompt if i % 5 else "wrong", 1.0))
    return out
"""
N = 40


def _cases(gold: str = "center") -> bytes:
    return b"".join(
        orjson.dumps(
            {
                "id": f"s{i}",
                "input": {"prompt": str(i)},
                "expected_post_state": {"city": gold, "n": str(i)},
            }
        )
        + b"\n"
        for i in range(N)
    )


@pytest.fixture
def suite_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite of ``N`` cases in a JSONL case file, a Python mutator, and a policy with
    synonyms (a `MatchPolicy` keeps them in mapping proxies, which do not pickle as such)."""
    monkeypatch.chdir(tmp_path)
    name = "shipped_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    (tmp_path / "cases.jsonl").write_bytes(_cases())
    suite = {
        "name": "shipped",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"file": "cases.jsonl"},
        "policies": {"city": {"normalize": ["case"], "synonyms": {"center": "centre"}}},
        "thresholds": {"accuracy": 0.5},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    return tmp_path / "suite.yaml"


class _Quiet:
    """A view that shows nothing."""

    phoenix_hint = "no Phoenix here"
    console = Console(file=io.StringIO())

    def note(self, text: str, style: str | None = None) -> None:
        pass

    def summary(self, summary: RunSummary) -> None:
        pass

    def drive(
        self,
        suite: Suite,
        journal: Journal,
        target: PhoenixTarget | None,
        concurrency: int,
        finish: Callable[[RunSummary], None],
    ) -> RunOutcome:
        outcome = asyncio.run(run_suite(suite, journal, concurrency=concurrency, phoenix=target))
        finish(outcome.summary)
        return outcome

    def shards(self, name: str, total: int) -> AbstractContextManager[Callable[[int, int], None]]:
        @contextmanager
        def shown() -> Iterator[Callable[[int, int], None]]:
            yield lambda scored, failed: None

        return shown()


def _report(path: Path) -> dict[str, Any]:
    """A JSON report without what differs between two runs of the same cases."""
    report = json.loads(path.read_text())
    report.pop("run_id")
    report.pop("mean_time")
    for case in report["cases"]:
        case.pop("time_used", None)
    return dict(report)


def _run(suite: Suite, home: Path, report: Path, **options: Any) -> None:
    request = RunRequest(
        suite=suite,
        home=home,
        no_phoenix=True,
        reports=(ReportRequest("json", report),),
        **options,
    )
    carry_out(request, _Quiet())


def test_a_shipped_suite_unpickles_as_the_loaded_one_and_builds_its_mutator(
    suite_file: Path,
) -> None:
    loaded = load_suite(suite_file.name)  # a relative path: the shipped one is absolute
    data = pickle.dumps(shipped(loaded))
    there = pickle.loads(data)
    assert there.mutator is None
    assert there.path == suite_file.resolve()
    built = with_mutator(there)
    assert built.mutator is not None
    assert built.mutator_description == loaded.mutator_description
    assert built.cases_hash == loaded.cases_hash
    assert built.suite_hash == loaded.suite_hash
    assert built.policies == loaded.policies
    assert built.policies.for_path("city").canonical("Center") == "centre"
    assert list(built.cases) == list(loaded.cases)
    assert built.case("s7") == loaded.case("s7")


def test_a_shipped_suite_names_its_mutator_problem_as_load_suite_does(
    suite_file: Path,
) -> None:
    there = pickle.loads(pickle.dumps(shipped(load_suite(suite_file))))
    # where it runs, the mutator's module is not the driver's: the problem names the setting
    mutator = there.model.mutator.model_copy(update={"callable": "no_such_module_here:track"})
    model = there.model.model_copy(update={"mutator": mutator})
    with pytest.raises(SuiteError) as raised:
        with_mutator(replace(there, model=model))
    assert str(raised.value).startswith("suite.yaml:4: mutator.callable: ")


def test_a_shipped_suite_refuses_a_case_line_changed_after_the_load(suite_file: Path) -> None:
    there = pickle.loads(pickle.dumps(shipped(load_suite(suite_file))))
    (suite_file.parent / "cases.jsonl").write_bytes(_cases(gold="north"))
    with pytest.raises(SuiteError, match="the case file changed after the suite was loaded"):
        list(there.cases)


def test_ray_tasks_run_the_drivers_suite_without_loading_it_again(
    cluster: Any, suite_file: Path, tmp_path: Path
) -> None:
    suite = load_suite(suite_file)
    _run(suite, tmp_path / "home", tmp_path / "one.json")
    # a task loading the suite file again would now fail: the tasks run the driver's load
    suite_file.write_text("mutator: [not, a, suite\n")
    _run(suite, tmp_path / "home", tmp_path / "two.json", workers=2, backend="ray")
    assert _report(tmp_path / "two.json") == _report(tmp_path / "one.json")
    assert _report(tmp_path / "one.json")["n_cases"] == N


def test_a_ray_task_refuses_a_case_file_changed_since_the_driver_loaded_it(
    cluster: Any, suite_file: Path, tmp_path: Path
) -> None:
    suite = load_suite(suite_file)
    (suite_file.parent / "cases.jsonl").write_bytes(_cases(gold="north"))
    with pytest.raises(StatevalError) as raised:
        _run(suite, tmp_path / "home", tmp_path / "two.json", workers=2, backend="ray")
    message = str(raised.value)
    assert message.startswith("shard 1/2: ")
    assert "the case file changed after the suite was loaded" in message


def test_spawned_workers_run_the_drivers_suite_without_loading_it_again(
    suite_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = load_suite(suite_file)
    _run(suite, tmp_path / "home", tmp_path / "one.json")
    suite_file.write_text("mutator: [not, a, suite\n")
    monkeypatch.setattr(workers, "get_all_start_methods", lambda: ["spawn"])  # no fork here
    _run(suite, tmp_path / "home", tmp_path / "two.json", workers=2)
    assert _report(tmp_path / "two.json") == _report(tmp_path / "one.json")
