"""Match policies: every option, glob resolution, and suite-file validation errors."""

from __future__ import annotations

import pickle

import pytest

from stateval.compare import (
    FieldPolicies,
    FieldStatus,
    MatchPolicy,
    MatchPolicyModel,
    compare_states,
    policy_options,
)
from stateval.errors import PolicyError, SuiteError
from stateval.state import InterpretiveState, ValueConfidence


def matches(expected: object, actual: object, policy: MatchPolicy) -> bool:
    e = InterpretiveState.from_flat({"x": expected})
    a = InterpretiveState.from_flat({"x": actual})
    return compare_states(e, a, policy).overall_match


def matches_conf(expected: float, actual: float, policy: MatchPolicy) -> bool:
    e, a = InterpretiveState(), InterpretiveState()
    e.add_value("x", ValueConfidence("v", expected))
    a.add_value("x", ValueConfidence("v", actual))
    return compare_states(e, a, policy).overall_match


# -- options -----------------------------------------------------------------------------------


def test_default_policy_is_the_seed_rule() -> None:
    policy = MatchPolicy()
    assert policy.is_strict
    assert not matches("Centre", "centre", policy)
    assert not matches_conf(0.9, 0.8, policy)
    assert matches_conf(0.9, 0.9, policy)


def test_confidence_ignore() -> None:
    assert matches_conf(0.9, 0.1, MatchPolicy(confidence="ignore"))


def test_confidence_tolerance_is_inclusive_despite_float_rounding() -> None:
    policy = MatchPolicy(confidence_tolerance=0.1)
    assert matches_conf(0.9, 0.8, policy)
    assert matches_conf(0.8, 0.7, policy)  # 0.8 - 0.7 is 0.10000000000000009 in floats
    assert not matches_conf(0.9, 0.75, policy)


@pytest.mark.parametrize(
    ("normalizer", "expected", "actual"),
    [
        ("case", "Centre", "CENTRE"),
        ("whitespace", "  new   york ", "new york"),
        ("number_words", "Two", "2"),
        ("number_words", "twenty-one", "21"),
        ("number_words", "for twenty one people", "for 21 people"),
        ("punctuation", "st. john's", "st johns"),
        ("punctuation", "alpha-milton", "alpha milton"),
        ("punctuation", "(hello), world!", "hello world"),
    ],
)
def test_each_normalizer(normalizer: str, expected: str, actual: str) -> None:
    assert not matches(expected, actual, MatchPolicy())
    assert matches(expected, actual, MatchPolicy(normalize=(normalizer,)))  # type: ignore[arg-type]


def test_number_words_do_not_touch_words_containing_them() -> None:
    policy = MatchPolicy(normalize=("number_words",))
    assert not matches("none", "n1", policy)
    assert matches("someone", "someone", policy)
    assert not matches("someone", "some1", policy)


def test_multiwoz_label_variants_match_under_a_normalising_policy() -> None:
    policy = MatchPolicy(
        normalize=("case", "number_words", "punctuation", "whitespace"),
        synonyms={"guest house": "guesthouse", "night club": "nightclub"},
    )
    assert matches("guesthouse", "Guest House", policy)
    assert matches("night club", "nightclub", policy)
    assert matches("alpha-milton guest house", "alpha milton guest house", policy)
    assert matches("gallery at twelve a high street", "gallery at 12 a high street", policy)
    assert not matches("restaurant one seven", "restaurant 17", policy)


def test_normalizers_apply_inside_lists_and_objects() -> None:
    policy = MatchPolicy(normalize=("case",))
    assert matches(["A", {"k": "B"}], ["a", {"k": "b"}], policy)
    assert not matches(["A", "B"], ["b", "a"], policy)


def test_normalizers_run_in_a_fixed_order() -> None:
    listed = MatchPolicy(normalize=("whitespace", "case"))
    assert listed.normalize == ("case", "whitespace")
    assert listed == MatchPolicy(normalize=("case", "whitespace"))


def test_synonyms_apply_after_normalisation_to_both_sides() -> None:
    policy = MatchPolicy(normalize=("case",), synonyms={"Center": "centre", "any": "dontcare"})
    assert matches("centre", "CENTER", policy)
    assert matches("Center", "centre", policy)
    assert matches("dontcare", "Any", policy)
    assert not matches("centre", "north", policy)


def test_synonyms_replace_whole_values_only() -> None:
    policy = MatchPolicy(synonyms={"center": "centre"})
    assert not matches("city centre", "city center", policy)


def test_numeric_tolerance() -> None:
    policy = MatchPolicy(numeric_tolerance=0.5)
    assert matches(3, 3.4, policy)
    assert not matches(3, 3.6, policy)
    assert matches(3, "3", policy)  # numeric strings count as numbers once the tolerance is set
    assert matches("3.0", " 3 ", policy)
    assert not matches(True, 1, policy)
    assert not matches("three", 3, policy)
    assert matches("three", 3, MatchPolicy(numeric_tolerance=0, normalize=("number_words",)))


def test_numeric_strings_differ_without_a_tolerance() -> None:
    assert not matches("3", 3, MatchPolicy(normalize=("case", "whitespace")))


def test_list_mode_exact_keeps_order() -> None:
    assert not matches([1, 2], [2, 1], MatchPolicy(list_mode="exact", normalize=("case",)))


def test_list_mode_set_ignores_order_and_duplicates() -> None:
    policy = MatchPolicy(list_mode="set", normalize=("case",))
    assert matches(["A", "b"], ["B", "a", "a"], policy)
    assert not matches(["a", "b"], ["a"], policy)
    assert not matches(["a"], ["a", "c"], policy)


def test_list_mode_any_of_with_a_list_of_alternatives() -> None:
    policy = MatchPolicy(list_mode="any_of")
    assert matches(["guesthouse", "hotel"], "hotel", policy)
    assert not matches(["guesthouse", "hotel"], "motel", policy)
    assert matches(["guesthouse", "hotel"], ["guesthouse", "hotel"], policy)


def test_list_mode_any_of_with_a_separator() -> None:
    policy = MatchPolicy(list_mode="any_of", alternatives_separator="|", normalize=("case",))
    assert matches("guesthouse|hotel", "Hotel", policy)
    assert matches("guesthouse|hotel", "guesthouse|hotel", policy)
    assert not matches("guesthouse|hotel", "guesthouse hotel", policy)
    assert not matches("hotel", "guesthouse|hotel", policy)  # only the expected side is split


def test_fuzzy_threshold_after_normalisation() -> None:
    policy = MatchPolicy(fuzzy=0.9, normalize=("case",))
    assert matches("Cambridge Lodge", "cambridge lodg", policy)
    assert not matches("Cambridge Lodge", "Camb", policy)
    assert not matches("a", 1, policy)  # fuzzy applies to strings only


def test_fuzzy_with_any_of_reports_the_best_alternative() -> None:
    policy = MatchPolicy(fuzzy=0.95, list_mode="any_of", alternatives_separator="|")
    e = InterpretiveState.from_flat({"x": "abcdefghij|zzzz"})
    a = InterpretiveState.from_flat({"x": "abcdefghiX"})
    f = compare_states(e, a, policy).field("x")
    assert f is not None
    assert f.status is FieldStatus.MISMATCHED
    assert f.similarity == pytest.approx(0.9)


# -- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confidence_tolerance": -0.1}, "confidence_tolerance must be a finite number >= 0"),
        ({"numeric_tolerance": float("inf")}, "numeric_tolerance must be a finite number"),
        ({"numeric_tolerance": True}, "numeric_tolerance must be a number"),
        ({"fuzzy": 1.5}, r"fuzzy must be a number in \[0, 1\]"),
        ({"fuzzy": -0.1}, r"fuzzy must be a number in \[0, 1\]"),
        ({"normalize": ("case", "stemming")}, "unknown normaliser 'stemming'"),
        ({"confidence": "close"}, "confidence must be 'exact' or 'ignore'"),
        ({"list_mode": "bag"}, "list_mode must be"),
        ({"alternatives_separator": "|"}, "needs list_mode='any_of'"),
        ({"list_mode": "any_of", "alternatives_separator": ""}, "non-empty string"),
        ({"judge": "human"}, "judge must be 'llm'"),
        ({"rubric": "be nice"}, "rubric needs judge='llm'"),
        ({"confidence": "ignore", "confidence_tolerance": 0.1}, "no effect"),
        ({"synonyms": {"a": 1}}, "synonyms must map strings to strings"),
    ],
)
def test_invalid_policies_are_rejected(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        MatchPolicy(**kwargs)  # type: ignore[arg-type]


def test_policy_errors_are_suite_errors() -> None:
    assert issubclass(PolicyError, SuiteError)


def test_policies_are_hashable_and_immutable() -> None:
    policy = MatchPolicy(synonyms={"a": "b"})
    assert hash(policy) == hash(MatchPolicy(synonyms={"a": "b"}))
    with pytest.raises(TypeError):
        policy.synonyms["c"] = "d"  # type: ignore[index]


@pytest.mark.parametrize(
    "policy",
    [
        MatchPolicy(),
        MatchPolicy(normalize=("case", "whitespace"), synonyms={"Center": "centre"}),
        MatchPolicy(confidence="exact", confidence_tolerance=0.05, weight=2),
        MatchPolicy(list_mode="any_of", alternatives_separator="|", fuzzy=0.8, score="similarity"),
        MatchPolicy(list_mode="align", item_key="sku", item_threshold=0.3, judge="llm", rubric="r"),
        MatchPolicy(comparator="date", date_order="DMY", date_tolerance=1, ignore=True),
    ],
)
def test_policies_pickle_to_the_same_policy(policy: MatchPolicy) -> None:
    # a suite loaded once is shipped to the processes and Ray tasks running its shards
    there = pickle.loads(pickle.dumps(policy))
    assert there == policy
    assert there.canonical(" CENTER ") == policy.canonical(" CENTER ")
    policies = FieldPolicies({"a.*": policy}, default=MatchPolicy(fuzzy=0.5))
    policies.for_path("a.b")  # resolved paths are not shipped, only the rules
    assert pickle.loads(pickle.dumps(policies)) == policies


# -- FieldPolicies -----------------------------------------------------------------------------


def test_resolution_exact_then_first_glob_then_default() -> None:
    exact, first, second, default = (
        MatchPolicy(fuzzy=0.1),
        MatchPolicy(fuzzy=0.2),
        MatchPolicy(fuzzy=0.3),
        MatchPolicy(fuzzy=0.4),
    )
    policies = FieldPolicies(
        {"hotel.*": first, "hotel.area": exact, "*.area": second}, default=default
    )
    assert policies.for_path("hotel.area") is exact
    assert policies.for_path("hotel.stars") is first
    assert policies.for_path("train.area") is second
    assert policies.for_path("train.day") is default
    assert list(policies) == ["hotel.*", "hotel.area", "*.area"]


def test_star_matches_across_dots_and_alone_matches_everything() -> None:
    deep, everything = MatchPolicy(fuzzy=0.1), MatchPolicy(fuzzy=0.2)
    policies = FieldPolicies([("hotel.*", deep), ("*", everything)])
    assert policies.for_path("hotel.book.people") is deep
    assert policies.for_path("hotelx") is everything
    assert policies.for_path("a") is everything


def test_patterns_are_case_sensitive_and_whole_path() -> None:
    policies = FieldPolicies({"hotel.*": MatchPolicy(fuzzy=0.5)})
    assert policies.for_path("Hotel.area") == MatchPolicy()
    assert policies.for_path("my.hotel.area") == MatchPolicy()


def test_default_is_the_seed_rule() -> None:
    assert FieldPolicies().for_path("anything") == MatchPolicy()
    assert FieldPolicies().default == MatchPolicy()


def test_duplicate_pattern_is_rejected() -> None:
    with pytest.raises(PolicyError, match="duplicate"):
        FieldPolicies([("a", MatchPolicy()), ("a", MatchPolicy())])


def test_from_mapping_builds_policies() -> None:
    policies = FieldPolicies.from_mapping(
        {
            "hotel.*": {"normalize": ["case"], "synonyms": {"center": "centre"}},
            "*": {"confidence": "ignore"},
        },
        default={"fuzzy": 0.9},
    )
    assert policies.for_path("hotel.area") == MatchPolicy(
        normalize=("case",), synonyms={"center": "centre"}
    )
    assert policies.for_path("x").confidence == "ignore"
    assert policies.default.fuzzy == 0.9


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"fuzz": 0.8}, r"match policy for 'hotel\.\*': unknown key 'fuzz'"),
        ({"fuzzy": 2}, r"match policy for 'hotel\.\*': fuzzy: .*less than or equal to 1"),
        (
            {"normalize": ["stem"]},
            r"match policy for 'hotel\.\*': unknown normaliser 'stem' \(known: case, ",
        ),
        ({"numeric_tolerance": -1}, r"'hotel\.\*': numeric_tolerance: .*greater than or equal"),
        ({"rubric": "x"}, r"match policy for 'hotel\.\*': rubric needs judge='llm'"),
        ("fuzzy", r"match policy for 'hotel\.\*' must be a mapping"),
    ],
)
def test_from_mapping_reports_bad_input_in_one_line(spec: object, message: str) -> None:
    with pytest.raises(SuiteError, match=message) as info:
        FieldPolicies.from_mapping({"hotel.*": spec})
    assert "\n" not in str(info.value)


def test_from_mapping_counts_further_problems() -> None:
    with pytest.raises(SuiteError, match=r"\(and 1 more problem\)"):
        FieldPolicies.from_mapping({"a": {"fuzz": 1, "ignor": True}})


def test_to_dict_round_trips_through_from_mapping() -> None:
    policy = MatchPolicy(
        normalize=("case", "punctuation"),
        synonyms={"a": "b"},
        list_mode="any_of",
        alternatives_separator="|",
        fuzzy=0.8,
    )
    data = policy.to_dict()
    assert data == {
        "normalize": ["case", "punctuation"],
        "synonyms": {"a": "b"},
        "list_mode": "any_of",
        "alternatives_separator": "|",
        "fuzzy": 0.8,
    }
    assert FieldPolicies.from_mapping({"x": data}).for_path("x") == policy
    assert MatchPolicy().to_dict() == {}


def test_model_round_trip() -> None:
    model = MatchPolicyModel.model_validate(
        {"list_mode": "any_of", "alternatives_separator": "|", "judge": "llm", "rubric": "r"}
    )
    policy = model.to_policy()
    assert policy.alternatives_separator == "|"
    assert policy.rubric == "r"


def test_field_policies_of_coerces_and_stays_truthy() -> None:
    loose = MatchPolicy(confidence="ignore")
    coerced = FieldPolicies.of(loose)
    assert coerced.for_path("any.path") is loose
    assert coerced  # no patterns, but a default that must not be dropped by `or`
    assert FieldPolicies.of(None) == FieldPolicies()
    with pytest.raises(PolicyError, match="expected FieldPolicies or MatchPolicy"):
        FieldPolicies.of({"a": loose})  # type: ignore[arg-type]


def test_the_suite_model_is_derived_from_the_one_policy_definition() -> None:
    names = list(policy_options())
    assert list(MatchPolicyModel.model_fields) == names
    for name, info in MatchPolicyModel.model_fields.items():
        assert info.description == policy_options()[name]
        default = info.get_default(call_default_factory=True)
        seed = getattr(MatchPolicy(), name)
        assert (dict(seed) if name == "synonyms" else seed) == (
            tuple(default) if name == "normalize" else default
        )
    # bounds declared once, enforced by both forms
    with pytest.raises(ValueError, match="less than or equal to 1"):
        MatchPolicyModel.model_validate({"fuzzy": 2})
    with pytest.raises(PolicyError, match="fuzzy must be a number in"):
        MatchPolicy(fuzzy=2)


def test_every_policy_option_is_documented() -> None:
    from pathlib import Path

    concepts = (Path(__file__).parents[1] / "docs" / "concepts.md").read_text()
    section = concepts.split("## Match policies", 1)[1].split("\n## ", 1)[0]
    undocumented = [n for n in policy_options() if f"`{n}" not in section]
    assert undocumented == []
    from stateval.compare import COMPARATORS, NORMALIZERS

    assert [n for n in NORMALIZERS if n not in section.split("`normalize:", 1)[1][:80]] == []
    assert [c for c in COMPARATORS if f"| `{c}` |" not in section] == []
