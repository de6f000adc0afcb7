"""Property-based tests of lists of records: the vectorised item similarities equal the
item-by-item ones under any sub-policy, and reordering never changes a list's score."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from stateval.compare import FieldPolicies, align_records
from stateval.compare._records import _Aligner

KEYS = st.sampled_from(["a", "b", "c"])
VALUES = st.one_of(
    st.sampled_from(
        ["x", "X", " x", "centre", "center", "2026-03-01", "March 1, 2026", "1/3/2026"]
    ),
    st.sampled_from(["12.50 EUR", "EUR 12.5", "$3", "bob@Example.com", "bob@example.com"]),
    st.integers(-2, 2),
    st.sampled_from([1.0, 2.5, True, False, None]),
    st.lists(st.sampled_from(["x", "X", 1]), max_size=2),
)
ITEMS = st.lists(st.dictionaries(KEYS, VALUES, max_size=3), max_size=5)
SUB_POLICIES = st.sampled_from(
    [
        {},
        {"normalize": ["case", "whitespace"]},
        {"synonyms": {"center": "centre"}, "normalize": ["case"]},
        {"comparator": "date", "date_order": "DMY"},
        {"comparator": "money"},
        {"comparator": "email"},
        {"numeric_tolerance": 1},
        {"fuzzy": 0.5},
        {"list_mode": "set"},
        {"ignore": True},
        {"weight": 3},
    ]
)


def _policies(subs: dict[str, dict[str, Any]]) -> FieldPolicies:
    return FieldPolicies.from_mapping(
        {"items": {"list_mode": "align"}, **{f"items[].{k}": v for k, v in subs.items()}}
    )


@settings(max_examples=300, deadline=None)
@given(want=ITEMS, got=ITEMS, subs=st.dictionaries(KEYS, SUB_POLICIES))
def test_the_vectorised_similarities_equal_the_pairwise_ones(
    want: list[dict[str, Any]], got: list[dict[str, Any]], subs: dict[str, dict[str, Any]]
) -> None:
    aligner = _Aligner("items", _policies(subs))
    if not want or not got:
        return
    matrix = aligner.similarity_matrix(want, got)
    for i, e in enumerate(want):
        for j, a in enumerate(got):
            assert abs(matrix[i, j] - aligner.compare_pair(e, a)[0]) < 1e-12, (e, a)


REFLEXIVE = st.sampled_from(
    [
        {},
        {"normalize": ["case", "whitespace"]},
        {"synonyms": {"center": "centre"}, "normalize": ["case"]},
        {"numeric_tolerance": 1},
        {"fuzzy": 0.5},
        {"list_mode": "set"},
        {"ignore": True},
        {"weight": 3},
    ]
)


@settings(max_examples=200, deadline=None)
@given(want=ITEMS, subs=st.dictionaries(KEYS, REFLEXIVE), data=st.data())
def test_a_reordered_list_of_records_scores_one(
    want: list[dict[str, Any]], subs: dict[str, dict[str, Any]], data: st.DataObject
) -> None:
    shuffled = align_records("items", want, data.draw(st.permutations(want)), _policies(subs))
    assert shuffled.score == 1.0
    assert shuffled.all_matched
