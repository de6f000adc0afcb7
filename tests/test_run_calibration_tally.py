"""A run's calibration tally reads its values back in plan order, however the cases finished:
each case's values kept together and in their order, as a stable sort of every value by its
case's place gives them, and its report is the same as the cases counted in plan order."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from stateval.compare import compare_states
from stateval.run._calibration_tally import CalibrationTally, _Values
from stateval.state import InterpretiveState

CASES = st.lists(
    st.lists(st.tuples(st.sampled_from([0.2, 0.5, 1.0]), st.booleans(), st.integers(0, 3))),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(CASES, st.randoms(use_true_random=False))
def test_values_come_back_in_plan_order_as_a_stable_sort_of_every_value(
    cases: list[list[tuple[float, bool, int]]], rng: random.Random
) -> None:
    places = list(range(len(cases)))
    rng.shuffle(places)  # the order the cases finished in
    columns = _Values()
    for place in places:
        values = cases[place]
        columns.extend(
            [c for c, _, _ in values],
            bytes(r for _, r, _ in values),
            [k for *_, k in values],
            place,
        )
    confidence, right, codes = columns.in_plan_order()
    every = [v for place in places for v in cases[place]]
    if not every:
        assert codes is None
        return
    by_place = np.argsort(
        np.repeat(places, [len(cases[p]) for p in places]), kind="stable"
    )  # the reference: every value sorted by its case's place
    assert confidence.tolist() == [every[i][0] for i in by_place]
    assert right.tolist() == [every[i][1] for i in by_place]
    assert codes.tolist() == [every[i][2] for i in by_place]
    assert [v for values in cases for v in values] == [every[i] for i in by_place]


def test_the_report_does_not_depend_on_the_order_cases_finished_in() -> None:
    rng = random.Random(7)
    comparisons = []
    for i in range(300):
        expected = InterpretiveState.from_flat({f"p{j}": f"v{j}" for j in range(5)})
        values = {f"p{j}": f"v{j}" if rng.random() < 0.7 else "x" for j in range(5) if j != i % 7}
        actual = InterpretiveState.from_flat(values, confidence=rng.choice([0.3, 0.6, 0.9]))
        comparisons.append(compare_states(expected, actual))
    in_order, shuffled = CalibrationTally(), CalibrationTally()
    for index, comparison in enumerate(comparisons):
        in_order.add(comparison, index)
    places = list(range(len(comparisons)))
    rng.shuffle(places)
    for index in places:
        shuffled.add(comparisons[index], index)
    report = in_order.report()
    assert report.overall.measurable
    assert shuffled.report() == report
    assert shuffled.report().to_dict() == report.to_dict()
