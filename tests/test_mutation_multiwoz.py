"""Mutation testing the MultiWOZ example suite: its aggregate thresholds let single-slot
regressions through, and the minimums the survivor report suggests kill them."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from stateval.mutation import MutationConfig, run_mutation
from stateval.suite import load_suite

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "multiwoz"
SUGGESTION = re.compile(r"^add thresholds\.fields\['([^']+)'\]: ([0-9.]+) ")
CONFIG = MutationConfig(operators="drop_field", limit=60)


@pytest.fixture
def example_modules() -> Iterator[None]:
    """Forget the example's modules afterwards (other tests import them their own way)."""
    yield
    for name in ("tracker", "lexicon", "slots"):
        sys.modules.pop(name, None)


def rewritten(folder: Path, minimums: dict[str, float]) -> Path:
    """The example suite with absolute paths and extra per-field minimums."""
    data = yaml.safe_load((EXAMPLE / "suite.yaml").read_text(encoding="utf-8"))
    data["mutator"]["path"] = str(EXAMPLE)
    data["slots"]["path"] = str(EXAMPLE)
    data["cases"]["file"] = str(EXAMPLE / data["cases"]["file"])
    data["thresholds"]["fields"] = minimums
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


async def test_suggested_field_minimums_kill_the_multiwoz_survivors(
    tmp_path: Path, example_modules: None
) -> None:
    report = await run_mutation(load_suite(EXAMPLE / "suite.yaml"), CONFIG)
    assert report.baseline.passed
    survivors = report.survivors
    assert len(survivors) > 10  # joint goal and slot accuracy hide single-slot regressions
    suggested = {}
    for result in survivors:
        match = SUGGESTION.match(result.suggestion or "")
        if match and len(suggested) < 3:
            suggested[result.mutant.description] = (match.group(1), float(match.group(2)))
    assert len(suggested) == 3
    minimums = dict(suggested.values())
    tightened = load_suite(rewritten(tmp_path, minimums))
    again = await run_mutation(tightened, CONFIG)
    assert again.baseline.passed  # the suggested minimums keep the baseline green
    status = {r.mutant.description: r.status for r in again.results}
    for description, (path, _) in suggested.items():
        assert status[description] == "killed", path
    assert again.count("killed") == report.count("killed") + 3
    assert again.count("survived") == report.count("survived") - 3
