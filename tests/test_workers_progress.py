"""``--workers N`` shows the single run's progress: the driver adds up the counters its forked
workers keep in shared memory (each its own, without a lock), and the last count it shows is
every case scored and every case that failed."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from stateval.orchestrator import RunRequest, carry_out
from stateval.run import Journal, PhoenixTarget, RunOutcome, RunSummary
from stateval.suite import Suite, load_suite

MUTATOR = """
def track(state, input):
    i = int(input.prompt)
    if i % 4 == 0:
        raise ValueError("the tracker fails on every fourth turn")
    return state
"""
N = 41


class _CountingView:
    """Records every count the driver shows while its workers run."""

    phoenix_hint = "no Phoenix here"

    def __init__(self) -> None:
        self.console = Console(file=io.StringIO())
        self.shown: list[tuple[int, int]] = []
        self.totals: list[int] = []

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
        raise AssertionError("a --workers run is driven by its workers")

    def shards(self, name: str, total: int) -> AbstractContextManager[Callable[[int, int], None]]:
        self.totals.append(total)

        @contextmanager
        def counting() -> Iterator[Callable[[int, int], None]]:
            yield lambda scored, failed: self.shown.append((scored, failed))

        return counting()


@pytest.mark.parametrize("workers", [2, 3])
def test_the_workers_counts_add_up_to_every_case_and_every_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "progress_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    cases: list[dict[str, Any]] = [
        {"id": f"p{i}", "input": {"prompt": str(i)}, "expected_post_state": {"n": "x"}}
        for i in range(N)
    ]
    suite = {
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    request = RunRequest(
        suite=load_suite(tmp_path / "suite.yaml"),
        home=tmp_path / "home",
        no_phoenix=True,
        workers=workers,
    )
    view = _CountingView()
    carry_out(request, view)
    assert view.totals == [N]
    assert view.shown[-1] == (N, len(range(0, N, 4)))
    assert all(a <= b for a, b in zip(view.shown, view.shown[1:], strict=False))
