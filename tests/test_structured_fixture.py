"""The shared structured fixture (tests/data/structured/fixture.json, 200 cases) scored by
stateval, against stickler-eval 1.0's figures stored by ``bench/bench_structured.py
--write-stickler`` (stickler is never a stateval dependency)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from stateval.compare import FieldPolicies, compare_states, score_comparison
from stateval.state import InterpretiveState

DATA = Path(__file__).parent / "data" / "structured"
CASES: list[dict[str, Any]] = json.loads((DATA / "fixture.json").read_text())
STICKLER: dict[str, Any] = json.loads((DATA / "stickler_scores.json").read_text())
LISTS = {"invoice": "line_items", "meeting": "attendees", "contact": "addresses"}


def _policies(kind: str, threshold: float = 0.5) -> FieldPolicies:
    spec: dict[str, Any] = {
        LISTS[kind]: {"list_mode": "align", "score": "similarity", "item_threshold": threshold}
    }
    if kind == "invoice":
        spec["total"] = {"weight": 2}
    return FieldPolicies.from_mapping(spec)


def _score(case: dict[str, Any], threshold: float = 0.5) -> tuple[float, Any]:
    policies = _policies(case["kind"], threshold)
    comparison = compare_states(
        InterpretiveState.from_flat(case["expected"]),
        InterpretiveState.from_flat(case["actual"]),
        policies,
    )
    weighted = score_comparison(comparison, policies=policies).weighted_state_accuracy(always=True)
    assert weighted is not None
    assert weighted.score is not None
    field = comparison.field(LISTS[case["kind"]])
    assert field is not None
    return weighted.score, field


def test_the_fixture_has_two_hundred_cases_of_three_kinds() -> None:
    assert len(CASES) == 200
    assert Counter(c["kind"] for c in CASES) == {"invoice": 67, "meeting": 67, "contact": 66}
    assert set(STICKLER) == {c["id"] for c in CASES}


def test_scores_agree_with_stickler_except_where_a_pair_falls_below_the_threshold() -> None:
    differ = []
    for case in CASES:
        theirs = STICKLER[case["id"]]
        overall, field = _score(case)
        assert field.records is not None
        below = theirs["objects"]["fd"] > 0  # stickler paired items less similar than 0.5
        if abs(overall - theirs["overall"]) > 1e-9 or abs(field.score - theirs["list"]) > 1e-9:
            differ.append(case["id"])
            assert below, case["id"]
            counts = field.records.counts()
            assert counts["missing"] >= theirs["objects"]["fd"], case["id"]
        # item_threshold 0 pairs as stickler does: the same quantity, to 1e-9
        overall0, field0 = _score(case, 0.0)
        assert overall0 == pytest.approx(theirs["overall"], abs=1e-9), case["id"]
        assert field0.score == pytest.approx(theirs["list"], abs=1e-9), case["id"]
    assert {c["variation"] for c in CASES if c["id"] in differ} == {"replaced_item"}


def test_paired_items_and_their_sub_field_counts_agree_with_stickler() -> None:
    for case in CASES:
        theirs = STICKLER[case["id"]]
        if theirs["objects"]["fd"]:
            continue  # a pair below the threshold: unpaired in stateval (see the test above)
        _, field = _score(case)
        records = field.records
        counts = records.counts()
        assert counts["matched"] + counts["partial"] == theirs["objects"]["tp"], case["id"]
        assert counts["missing"] == theirs["objects"]["fn"], case["id"]
        assert counts["extra"] == theirs["objects"]["fa"], case["id"]
        ours: dict[str, dict[str, int]] = {}
        for item in records.items:
            if item.status in ("matched", "partial"):
                for sub in item.fields:
                    tally = ours.setdefault(sub.path.rsplit("[].", 1)[-1], {"tp": 0, "fd": 0})
                    tally["tp" if sub.status == "correct" else "fd"] += 1
        stickler_paired = {
            k: {"tp": v["tp"], "fd": v["fd"]} for k, v in theirs["sub_fields"].items()
        }
        assert ours == {k: v for k, v in stickler_paired.items() if v["tp"] or v["fd"]}, case["id"]


def test_reorder_only_scores_one_and_one_wrong_sub_field_is_exactly_one() -> None:
    for case in CASES:
        overall, field = _score(case)
        wrong = [s for s in field.records.sub_outcomes() if s.status != "correct"]
        if case["variation"] in ("exact", "reorder"):
            assert overall == 1.0
            assert field.score == 1.0
            assert field.matched
        if case["variation"] == "one_wrong_sub_field":
            assert len(wrong) == 1, case["id"]
            assert wrong[0].status == "wrong"
            n = len(case["expected"][LISTS[case["kind"]]])
            width = len(case["expected"][LISTS[case["kind"]]][0])
            assert field.score == pytest.approx(1 - 1 / (n * width), abs=1e-12)
