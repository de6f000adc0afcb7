"""The whole MultiWOZ 2.1 test set as an example suite (examples/multiwoz/full_test.yaml).

Its cases are made from the shared data beside the repository (``../shared``, which CI has);
without them the suite names the missing case file on one line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stateval.errors import SuiteProblemsError
from stateval.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "multiwoz"
SHARED = ROOT.parent / "shared" / "data" / "multiwoz21" / "multiwoz21_test_full.jsonl"


@pytest.mark.skipif(
    (EXAMPLE / "data" / "full").exists(), reason="the full test set's cases were made here"
)
def test_without_its_cases_the_suite_names_the_missing_file() -> None:
    with pytest.raises(SuiteProblemsError) as caught:
        load_suite(EXAMPLE / "full_test.yaml", load_mutator=False)
    (problem,) = caught.value.problems
    assert "cases.file" in problem
    assert "cannot read data/full/cases.jsonl" in problem


@pytest.mark.skipif(not SHARED.exists(), reason=f"the shared MultiWOZ data is absent ({SHARED})")
def test_the_whole_test_set_loads_as_7372_cases(tmp_path: Path) -> None:
    out = tmp_path / "full"
    make = [sys.executable, str(EXAMPLE / "make_slice.py"), str(SHARED)]
    subprocess.run(
        [*make, "--every", "1", "--out-dir", str(out)],
        check=True,
        capture_output=True,
    )
    data = yaml.safe_load((EXAMPLE / "full_test.yaml").read_text())
    data["cases"]["file"] = str(out / "cases.jsonl")
    data["slots"]["path"] = str(EXAMPLE)
    path = tmp_path / "full_test.yaml"
    path.write_text(yaml.safe_dump(data))
    suite = load_suite(path, load_mutator=False)
    assert len(suite.cases) == 7372
    assert suite.cases.ids[0] != suite.cases.ids[-1]
    last = suite.cases[-1]
    assert last.metadata["dialogue"] in ("single-domain", "multi-domain")
