"""Field metrics: confusion counts, value P/R/F1, DST per-slot accuracy, JGA, list credit,
slices and continuous scores, by hand-computed expectations and against a plain reference."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stateval.compare import (
    FieldPolicies,
    MatchPolicy,
    MetricOptions,
    MetricsAccumulator,
    Outcome,
    case_outcomes,
    compare_states,
    list_f1,
    prf,
    slice_values,
)
from stateval.errors import PolicyError
from stateval.state import InterpretiveState

SCHEMA = ("a", "b", "c", "d")


def flat(values: dict[str, Any]) -> InterpretiveState:
    return InterpretiveState.from_flat(values, confidence=1.0)


CASES = [
    ({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 9}, {"domain": "hotel"}),
    ({"a": 1, "d": ["x", "y"]}, {"d": ["x", "z"]}, {"domain": ["taxi", "hotel"]}),
]


def run(options: MetricOptions | None = None, slots: tuple[str, ...] | None = SCHEMA, **kw: Any):
    acc = MetricsAccumulator(slots, options, **kw)
    for gold, pred, meta in CASES:
        acc.add(compare_states(flat(gold), flat(pred)), meta)
    return acc.result()


def test_confusion_counts_per_field_with_a_schema() -> None:
    m = run()
    counts = {p: (f.correct, f.wrong, f.missing, f.extra, f.absent) for p, f in m.fields.items()}
    assert counts == {
        "a": (1, 0, 1, 0, 0),
        "b": (0, 1, 0, 0, 1),
        "c": (0, 0, 0, 1, 1),
        "d": (0, 1, 0, 0, 1),
    }
    a = m.fields["a"]
    assert (a.precision, a.recall, a.f1) == (1.0, 0.5, pytest.approx(2 / 3))
    assert a.slot_accuracy == 0.5
    assert a.rates() == {"correct": 0.5, "wrong": 0.0, "missing": 0.5, "extra": 0.0, "absent": 0.0}
    c = m.fields["c"]  # only ever hallucinated: F1 0 although it was never expected wrongly
    assert (c.precision, c.recall, c.f1, c.accuracy) == (0.0, 0.0, 0.0, 0.0)


def test_run_figures_by_hand() -> None:
    m = run()
    assert (m.tp, m.fp, m.fn) == (1.0, 3.0, 3.0)
    assert (m.precision, m.recall, m.f1) == (0.25, 0.25, 0.25)
    assert m.joint_goal_accuracy == 0.0
    assert m.slot_accuracy == 0.5
    assert [f.path for f in m.worst_fields()] == ["b", "c", "d", "a"]


def test_partial_list_credit_gives_the_slot_its_list_f1() -> None:
    m = run(MetricOptions(list_credit="partial"))
    d = m.fields["d"]
    assert d.credit == 0.5
    assert (d.precision, d.recall, d.f1) == (0.5, 0.5, 0.5)
    assert (m.tp, m.fp, m.fn) == (1.5, 2.5, 2.5)
    assert m.f1 == pytest.approx(0.375)
    assert m.fields["d"].correct == 0  # the confusion count stays "wrong"


def test_wrong_value_as_false_positive_only() -> None:
    m = run(MetricOptions(wrong_value="fp"))
    assert (m.tp, m.fp, m.fn) == (1.0, 3.0, 1.0)
    assert (m.precision, m.recall) == (0.25, 0.5)
    assert m.f1 == pytest.approx(1 / 3)


def test_case_averaging_is_the_mean_of_case_scores() -> None:
    m = run(MetricOptions(averaging="case"))
    assert m.precision == pytest.approx((1 / 3 + 0) / 2)
    assert m.recall == pytest.approx((1 / 2 + 0) / 2)
    assert m.f1 == pytest.approx((0.4 + 0) / 2)


def test_without_a_schema_both_absent_is_unknown() -> None:
    m = run(slots=None)
    assert m.slot_accuracy is None
    assert m.fields["b"].absent is None
    assert m.fields["b"].slot_accuracy == 0.0  # 0 correct of 1 compared
    assert m.fields["a"].slot_accuracy == 0.5
    assert m.joint_goal_accuracy == 0.0


def test_slices_by_metadata_key_count_list_values_in_each_slice() -> None:
    m = run(slices=["metadata.domain"])
    hotel, taxi = m.slices["metadata.domain"]["hotel"], m.slices["metadata.domain"]["taxi"]
    assert hotel.n_cases == 2
    assert taxi.n_cases == 1
    assert (taxi.tp, taxi.fp, taxi.fn) == (0.0, 1.0, 2.0)
    assert taxi.slot_accuracy == 0.5
    assert hotel.f1 == m.f1


def test_active_slots_limit_both_absent() -> None:
    acc = MetricsAccumulator(
        ("hotel.area", "taxi.leaveat"),
        active_slots=lambda meta: [s for s in ("hotel.area", "taxi.leaveat") if meta["s"] in s],
    )
    acc.add(compare_states(flat({"hotel.area": "x"}), flat({"hotel.area": "x"})), {"s": "hotel"})
    m = acc.result()
    assert "taxi.leaveat" not in m.fields  # never in play: not scored at all
    assert m.slot_accuracy == 1.0


def test_a_slot_held_outside_the_services_in_play_is_still_scored() -> None:
    """The free-running scope (docs/concepts.md, Slot schemas): ``services_key`` limits only
    both-absent; a slot of another service that either state holds is scored, so a state
    carried forward from earlier turns counts its slots (here an extra and a right one)."""
    slots = ("hotel.area", "taxi.leaveat", "train.day")
    acc = MetricsAccumulator(
        slots, active_slots=lambda meta: [s for s in slots if s.startswith(meta["s"])]
    )
    gold = flat({"hotel.area": "x", "train.day": "monday"})
    carried = flat({"hotel.area": "x", "taxi.leaveat": "9:00", "train.day": "monday"})
    case = acc.add(compare_states(gold, carried), {"s": "hotel"})
    assert sorted((o.path, o.outcome.value) for o in case.outcomes) == [
        ("hotel.area", "correct"),
        ("taxi.leaveat", "extra"),
        ("train.day", "correct"),
    ]
    m = acc.result()
    assert m.slot_accuracy == pytest.approx(2 / 3)
    assert m.joint_goal_accuracy == 0.0


def test_similarity_scores_are_continuous() -> None:
    policy = MatchPolicy(fuzzy=0.5, score="similarity")
    comparison = compare_states(flat({"n": "abcd"}), flat({"n": "abce"}), policy)
    (outcome,) = case_outcomes(comparison)
    assert outcome.outcome is Outcome.CORRECT
    assert outcome.score == pytest.approx(0.75)
    acc = MetricsAccumulator()
    acc.add(comparison)
    assert acc.result().fields["n"].mean_score == pytest.approx(0.75)


def test_similarity_needs_a_fuzzy_threshold() -> None:
    with pytest.raises(PolicyError, match="needs a fuzzy threshold"):
        MatchPolicy(score="similarity")


def test_list_f1_deduplicates_after_normalisation() -> None:
    policy = MatchPolicy(normalize=("case", "whitespace"))
    assert list_f1(["Thai ", "thai"], ["THAI"], policy) == 1.0
    assert list_f1([], []) == 1.0
    assert list_f1(["a"], []) == 0.0
    assert list_f1("a", ["a", "b"]) == pytest.approx(2 / 3)


def test_alternatives_get_no_partial_credit() -> None:
    policies = FieldPolicies({"d": MatchPolicy(list_mode="any_of")})
    comparison = compare_states(flat({"d": ["x", "y"]}), flat({"d": ["z"]}), policies)
    (o,) = case_outcomes(comparison, options=MetricOptions(list_credit="partial"))
    assert o.credit == 0.0


def test_slice_values() -> None:
    assert slice_values({"a": {"b": 3}}, "metadata.a.b") == ("3",)
    assert slice_values({"a": ["x", "x", "y"]}, "a") == ("x", "y")
    assert slice_values({"a": []}, "a") == ("(none)",)


# -- against a plain reference implementation ------------------------------------------------

PATHS = ["p", "q", "r", "s"]
VALUES = st.one_of(
    st.sampled_from(["x", "y"]), st.lists(st.sampled_from(["x", "y", "z"]), max_size=3)
)
STATES = st.dictionaries(st.sampled_from(PATHS), VALUES, max_size=4)


def reference(pairs, schema, partial, wrong_fp):  # type: ignore[no-untyped-def]
    """Plain loops over dicts, written from the definitions in docs/concepts.md."""
    fields: dict[str, list[float]] = {}  # correct wrong missing extra absent credit
    tp = fp = fn = 0.0
    joint = right = total = 0
    for gold, pred in pairs:
        case_ok = True
        paths = list(dict.fromkeys([*gold, *pred, *(schema or [])]))
        for path in paths:
            row = fields.setdefault(path, [0, 0, 0, 0, 0, 0.0])
            g, p = gold.get(path), pred.get(path)
            if path not in gold and path not in pred:
                row[4] += 1
                credit, kind = 0.0, "absent"
            elif path not in pred:
                row[2] += 1
                credit, kind = 0.0, "missing"
            elif path not in gold:
                row[3] += 1
                credit, kind = 0.0, "extra"
            elif g == p:
                row[0] += 1
                credit, kind = 1.0, "correct"
            else:
                row[1] += 1
                kind = "wrong"
                credit = 0.0
                if partial and (isinstance(g, list) or isinstance(p, list)):
                    gs = set(g if isinstance(g, list) else [g])
                    ps = set(p if isinstance(p, list) else [p])
                    credit = 1.0 if not gs and not ps else 2 * len(gs & ps) / (len(gs) + len(ps))
            row[5] += credit
            if schema is not None and path not in schema:
                continue
            ok = kind in ("correct", "absent")
            case_ok = case_ok and ok
            right += ok
            total += 1
            tp += credit
            if kind in ("correct", "wrong", "extra"):
                fp += 1 - credit
            if kind == "missing" or (kind in ("correct", "wrong") and not wrong_fp):
                fn += 1 - credit
        joint += case_ok
    return fields, (tp, fp, fn), joint, right, total


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(STATES, STATES), min_size=1, max_size=6),
    schema=st.one_of(st.none(), st.lists(st.sampled_from(PATHS), min_size=1, unique=True)),
    partial=st.booleans(),
    wrong_fp=st.booleans(),
)
def test_metrics_agree_with_a_plain_reference(pairs, schema, partial, wrong_fp) -> None:  # type: ignore[no-untyped-def]
    options = MetricOptions(
        list_credit="partial" if partial else "all_or_nothing",
        wrong_value="fp" if wrong_fp else "fp_and_fn",
    )
    acc = MetricsAccumulator(schema, options)
    for gold, pred in pairs:
        acc.add(compare_states(flat(gold), flat(pred)))
    m = acc.result()
    fields, (tp, fp, fn), joint, right, total = reference(pairs, schema, partial, wrong_fp)
    for path, (correct, wrong, missing, extra, absent, credit) in fields.items():
        if schema is not None and path not in schema:
            absent_ref = None
        else:
            absent_ref = absent if schema is not None else None
        f = m.fields[path]
        assert (f.correct, f.wrong, f.missing, f.extra) == (correct, wrong, missing, extra)
        assert f.absent == absent_ref
        assert f.credit == pytest.approx(credit)
        scored = correct + wrong + missing + extra + (absent_ref or 0)
        assert f.slot_accuracy == pytest.approx((correct + (absent_ref or 0)) / scored)
        fn_f = missing if wrong_fp else correct + wrong + missing - credit
        assert (f.precision, f.recall, f.f1) == pytest.approx(
            prf(credit, correct + wrong + extra - credit, fn_f)
        )
    assert set(m.fields) == {p for p, row in fields.items() if sum(row[:5])}
    assert (m.tp, m.fp, m.fn) == pytest.approx((tp, fp, fn))
    assert (m.precision, m.recall, m.f1) == pytest.approx(prf(tp, fp, fn))
    assert m.joint_goal_accuracy == pytest.approx(joint / len(pairs))
    if schema is None:
        assert m.slot_accuracy is None
    else:
        assert m.slot_accuracy == pytest.approx(right / total)


def plain_prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    """TRADE's compute_prf, restated: 1/1/1 with nothing to find and nothing found."""
    if tp + fp + fn == 0:
        return 1.0, 1.0, 1.0
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


@settings(max_examples=150, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(STATES, STATES, st.sampled_from(["a", "b", ["a", "b"], None])),
        min_size=1,
        max_size=6,
    ),
    schema=st.one_of(st.none(), st.lists(st.sampled_from(PATHS), min_size=1, unique=True)),
)
def test_case_averaging_and_slices_agree_with_a_plain_reference(pairs, schema) -> None:  # type: ignore[no-untyped-def]
    acc = MetricsAccumulator(schema, MetricOptions(averaging="case"), slices=["metadata.g"])
    for gold, pred, group in pairs:
        acc.add(compare_states(flat(gold), flat(pred)), {} if group is None else {"g": group})
    m = acc.result()
    per_case = []
    for gold, pred, _ in pairs:
        _, (tp, fp, fn), *_ = reference([(gold, pred)], schema, False, False)
        per_case.append(plain_prf(tp, fp, fn))
    n = len(pairs)
    assert m.precision == pytest.approx(sum(p for p, _, _ in per_case) / n)
    assert m.recall == pytest.approx(sum(r for _, r, _ in per_case) / n)
    assert m.f1 == pytest.approx(sum(f for _, _, f in per_case) / n)
    groups: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for gold, pred, group in pairs:
        names = ["(none)"] if group is None else (group if isinstance(group, list) else [group])
        for name in names:
            groups.setdefault(name, []).append((gold, pred))
    assert set(m.slices["metadata.g"]) == set(groups)
    for name, members in groups.items():
        sliced = m.slices["metadata.g"][name]
        _, (tp, fp, fn), joint, right, total = reference(members, schema, False, False)
        assert sliced.n_cases == len(members)
        assert (sliced.tp, sliced.fp, sliced.fn) == pytest.approx((tp, fp, fn))
        assert sliced.joint_goal_accuracy == pytest.approx(joint / len(members))
        if schema is not None:
            assert sliced.slot_accuracy == pytest.approx(right / total)


def test_partial_credit_sums_are_the_same_in_any_order_of_the_cases() -> None:
    # a run counts cases as they finish: fractional credits summed as plain floats differed
    # in their last bits (tp 4.852380952380953 or ...52) between two runs of the same cases
    cases = []
    for k, right in [(3, 1), (7, 2), (5, 4), (6, 1), (7, 5), (3, 2), (6, 5), (5, 2), (7, 3)]:
        want = [f"v{j}" for j in range(k)]
        got = [*want[:right], "x"]
        cases.append(compare_states(flat({"a": want, "b": "s"}), flat({"a": got, "b": "s"})))
    results = set()
    for shift in range(len(cases)):
        for order in (cases[shift:] + cases[:shift], (cases[shift:] + cases[:shift])[::-1]):
            acc = MetricsAccumulator(SCHEMA, MetricOptions(list_credit="partial"))
            for comparison in order:
                acc.add(comparison)
            results.add(repr(acc.result().to_dict()))
    assert len(results) == 1
