"""Calibration statistics: by hand, and against scikit-learn as the reference on random data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, cohen_kappa_score, roc_auc_score

from stateval.calibration import (
    OVERALL,
    CalibrationSample,
    auroc,
    brier_score,
    calibrate,
    calibrate_values,
    calibration_samples,
    cohen_kappa,
    expected_calibration_error,
    reliability_bins,
    triage,
)
from stateval.compare import FieldPolicies, MatchPolicy, compare_states
from stateval.state import InterpretiveState, ValueConfidence

CONF = [0.95, 0.9, 0.8, 0.7, 0.6, 0.55, 0.4, 0.3]
HIT = [True, True, False, True, True, False, False, True]


def test_brier_by_hand() -> None:
    # (0.05² + 0.1² + 0.8² + 0.3² + 0.4² + 0.55² + 0.4² + 0.7²) / 8
    assert brier_score(CONF, HIT) == pytest.approx(1.855 / 8)
    assert brier_score([0.5, 0.5], [True, False]) == pytest.approx(0.25)
    assert brier_score([1.0, 0.0], [True, False]) == 0.0


def test_ece_equal_width_by_hand() -> None:
    # 5 bins of width 0.2: (0.2, 0.4] holds 0.4 (wrong) and 0.3 (right): conf 0.35, acc 0.5;
    # (0.4, 0.6] holds 0.6 (right), 0.55 (wrong): conf 0.575, acc 0.5;
    # (0.6, 0.8] holds 0.8 (wrong), 0.7 (right): conf 0.75, acc 0.5;
    # (0.8, 1.0] holds 0.95, 0.9 (both right): conf 0.925, acc 1.
    expected = (2 * 0.15 + 2 * 0.075 + 2 * 0.25 + 2 * 0.075) / 8
    assert expected_calibration_error(CONF, HIT, bins=5) == pytest.approx(expected)
    bins = reliability_bins(CONF, HIT, bins=5)
    assert [(b.n, round(b.accuracy, 3)) for b in bins] == [(2, 0.5), (2, 0.5), (2, 0.5), (2, 1.0)]


def test_ece_equal_mass_by_hand() -> None:
    # 4 quantile bins of 2 values each, lowest confidence first:
    # {0.3 R, 0.4 W}: conf 0.35 acc 0.5; {0.55 W, 0.6 R}: 0.575, 0.5;
    # {0.7 R, 0.8 W}: 0.75, 0.5; {0.9 R, 0.95 R}: 0.925, 1.0
    expected = (0.15 + 0.075 + 0.25 + 0.075) / 4
    got = expected_calibration_error(CONF, HIT, bins=4, strategy="mass")
    assert got == pytest.approx(expected)
    assert [b.n for b in reliability_bins(CONF, HIT, bins=4, strategy="mass")] == [2, 2, 2, 2]


def test_equal_mass_bins_keep_ties_together() -> None:
    conf = [0.9] * 6 + [0.2, 0.3]
    bins = reliability_bins(conf, [True] * 8, bins=4, strategy="mass")
    assert sum(b.n for b in bins) == 8
    assert any(b.n == 6 for b in bins)


def test_a_confidence_on_a_bin_edge_goes_to_the_lower_bin() -> None:
    bins = reliability_bins([0.5, 0.0, 1.0], [True, False, True], bins=2)
    assert [(b.lower, b.upper, b.n) for b in bins] == [(0.0, 0.5, 2), (0.5, 1.0, 1)]


def test_auroc_by_hand() -> None:
    # correct: .95 .9 .7 .6 .3; wrong: .8 .55 .4. Pairs (correct above wrong) out of 15:
    # .95: 3, .9: 3, .7: 2, .6: 2, .3: 0 -> 10/15
    assert auroc(CONF, HIT) == pytest.approx(10 / 15)
    assert auroc([0.5, 0.5], [True, False]) == 0.5  # a tie counts half
    with pytest.raises(ValueError, match="both correct and wrong"):
        auroc([0.2, 0.9], [True, True])


def test_triage_by_hand() -> None:
    conf = [i / 10 for i in range(1, 11)]
    hit = [False, True, True, True, False, True, True, True, True, True]
    points = triage(conf, hit, [0.05, 0.1, 0.2, 0.5, 1.0])
    assert [p.n_reviewed for p in points] == [1, 1, 2, 5, 10]
    assert [p.caught for p in points] == [0.5, 0.5, 0.5, 1.0, 1.0]


def test_triage_splits_ties_at_the_cut_in_proportion() -> None:
    points = triage([0.7] * 10, [False] * 4 + [True] * 6, [0.1, 0.2])
    assert [p.caught for p in points] == pytest.approx([0.1, 0.2])
    # 0.1 (wrong) first, then a run of four 0.5s holding one wrong value: review 3 -> 1 + 2/4
    points = triage([0.1, 0.5, 0.5, 0.5, 0.5, 0.9], [False, False, True, True, True, True], [0.5])
    assert points[0].caught == pytest.approx((1 + 2 / 4 * 1) / 2)


@pytest.mark.parametrize("seed", range(5))
def test_against_scikit_learn_on_random_data(seed: int) -> None:
    rng = np.random.default_rng(seed)
    conf = rng.random(400)
    hit = rng.random(400) < conf**2
    assert brier_score(conf.tolist(), hit.tolist()) == pytest.approx(brier_score_loss(hit, conf))
    assert auroc(conf.tolist(), hit.tolist()) == pytest.approx(roc_auc_score(hit, conf))
    rounded = np.round(conf, 1)  # many ties
    assert auroc(rounded.tolist(), hit.tolist()) == pytest.approx(roc_auc_score(hit, rounded))
    for strategy, sk in (("width", "uniform"), ("mass", "quantile")):
        acc, mean = calibration_curve(hit, conf, n_bins=10, strategy=sk)
        bins = reliability_bins(conf.tolist(), hit.tolist(), bins=10, strategy=strategy)
        assert [b.accuracy for b in bins] == pytest.approx(acc.tolist())
        assert [b.mean_confidence for b in bins] == pytest.approx(mean.tolist())


@pytest.mark.parametrize(
    ("table", "kappa"),
    [
        ((20, 5, 10, 15), 0.4),  # Wikipedia, "Cohen's kappa", simple example
        ((45, 15, 25, 15), 0.1304),  # same p_o = 0.60, different kappa
        ((25, 35, 5, 35), 0.2593),
        ((10, 0, 0, 10), 1.0),
    ],
)
def test_kappa_on_textbook_tables(table: tuple[int, int, int, int], kappa: float) -> None:
    assert cohen_kappa(*table) == pytest.approx(kappa, abs=5e-5)


def test_kappa_is_undefined_when_both_raters_give_one_label() -> None:
    assert cohen_kappa(7, 0, 0, 0) is None
    assert cohen_kappa(0, 0, 0, 0) is None


@pytest.mark.parametrize("seed", range(3))
def test_kappa_against_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.random(200) < 0.6
    b = np.where(rng.random(200) < 0.7, a, ~a)
    tp, fn = int((a & b).sum()), int((a & ~b).sum())
    fp, tn = int((~a & b).sum()), int((~a & ~b).sum())
    assert cohen_kappa(tp, fn, fp, tn) == pytest.approx(cohen_kappa_score(a, b))


def test_not_measurable_with_one_confidence_or_no_errors() -> None:
    assert calibrate_values("a", [0.8, 0.8, 0.8], [True, False, True]).reason == (
        "every value has confidence 0.8"
    )
    none_wrong = calibrate_values("a", [0.8, 0.6], [True, True])
    assert none_wrong.reason == "no wrong values"
    assert none_wrong.brier is None
    assert not none_wrong.measurable
    assert calibrate_values("a", [], []).reason == "no values with a confidence"
    all_wrong = calibrate_values("a", [0.8, 0.6], [False, False])
    assert all_wrong.measurable
    assert all_wrong.auroc is None
    assert all_wrong.brier == pytest.approx((0.64 + 0.36) / 2)


def test_correctness_ignores_confidence_and_follows_the_value_policy() -> None:
    expected = InterpretiveState.from_flat({"city": "Paris", "name": "Ada", "zip": "75001"})
    actual = InterpretiveState()
    actual.add_value("city", ValueConfidence("paris", 0.6))  # right under the case policy
    actual.add_value("name", ValueConfidence("Bob", 0.9))  # wrong
    actual.add_value("pet", ValueConfidence("cat", 0.3))  # extra: wrong
    policies = FieldPolicies({"city": MatchPolicy(normalize=("case",))})
    comparison = compare_states(expected, actual, policies)
    assert comparison.field("city") is not None
    assert not comparison.field("city").matched  # type: ignore[union-attr]  # seed rule: conf
    samples = calibration_samples(comparison)
    assert [(s.path, s.correct) for s in samples] == [
        ("city", True),
        ("name", False),
        ("pet", False),
    ]
    report = calibrate(samples, missing=comparison.missing)
    assert report.overall.n == 3
    assert report.overall.n_missing == 1
    assert report.field("zip") is not None
    assert report.field("zip").reason == "no values with a confidence"  # type: ignore[union-attr]
    assert report.overall.path == OVERALL


def test_fields_are_listed_worst_calibrated_first() -> None:
    samples = [
        CalibrationSample("good", 0.9, True),
        CalibrationSample("good", 0.1, False),
        CalibrationSample("bad", 0.9, False),
        CalibrationSample("bad", 0.1, True),
        CalibrationSample("flat", 0.5, True),
    ]
    report = calibrate(samples)
    assert [f.path for f in report.fields] == ["bad", "good", "flat"]
    assert report.field("bad").auroc == 0.0  # type: ignore[union-attr]
    assert report.to_dict()["fields"][2]["measurable"] is False


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0, 1 / 3]), st.booleans()), max_size=40
    )
)
def test_values_given_as_arrays_calibrate_as_the_same_values_in_lists(
    values: list[tuple[float, bool]],
) -> None:
    # a run's tally hands its columns over as numpy arrays: the same figures, to the bit
    confidences = [c for c, _ in values]
    correct = [k for _, k in values]
    as_lists = calibrate_values("p", confidences, correct, n_missing=2)
    as_arrays = calibrate_values(
        "p", np.asarray(confidences, dtype=np.float64), np.asarray(correct, dtype=bool), n_missing=2
    )
    assert as_arrays == as_lists
    assert as_arrays.to_dict() == as_lists.to_dict()
    assert all(type(v) is not np.float64 for v in as_arrays.to_dict().values())
