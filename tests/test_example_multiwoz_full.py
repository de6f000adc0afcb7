"""The whole MultiWOZ 2.1 test set as an example suite (examples/multiwoz/full_test.yaml).

Its cases are made from the shared data beside the repository (``../shared``, which CI has);
without them the suite names the missing case file on one line.
"""

from __future__ import annotations

import json
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


@pytest.mark.skipif(not SHARED.exists(), reason=f"the shared MultiWOZ data is absent ({SHARED})")
def test_trade_labels_make_trades_test_set(tmp_path: Path) -> None:
    """``make_slice.py --labels trade`` keeps TRADE's test set: the 7,368 turns of 999 dialogues
    its ``create_data.py`` keeps (PMUL1455 dropped: a system turn over its 50-word limit)."""
    out = tmp_path / "full_trade"
    made = subprocess.run(
        [sys.executable, str(EXAMPLE / "make_slice.py"), str(SHARED), "--every", "1",
         "--labels", "trade", "--out-dir", str(out)],
        check=True,
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert "7372 user turns (7368 in TRADE's test set)" in made.stdout
    cases = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert len(cases) == 7368
    assert len({c["metadata"]["dialogue_id"] for c in cases}) == 999
    assert all(c["metadata"]["in_trade_eval_set"] for c in cases)
    raw = [json.loads(line) for line in SHARED.read_text().splitlines()]
    dropped = [t for t in raw if not t["in_trade_eval_set"]]
    assert {t["dialogue_id"] for t in dropped} == {"PMUL1455"}
    assert max(len(t["system_utterance_before"].split()) for t in dropped) > 50
    # a kept turn's states are TRADE's cleaned labels, its pre-state the turn before's
    by_id = {f"{t['dialogue_id']}:{t['turn_index']}": t for t in raw}
    for case in cases[:50]:
        turn = by_id[case["id"]]
        assert case["expected_post_state"] == turn["gold_state_trade"]
        if turn["turn_index"]:
            before = by_id[f"{turn['dialogue_id']}:{turn['turn_index'] - 1}"]
            assert case["pre_state"] == before["gold_state_trade"]
