"""Rule checks: exact, contains*, regex, JSON, JSON Schema.

Parity cases follow Phoenix's pre-built code evaluators, read from
``src/phoenix/experiments/evaluators/code_evaluators.py`` in Arize-ai/phoenix (ContainsKeyword,
ContainsAnyKeyword, ContainsAllKeywords, MatchesRegex, JSONParsable). The server package that holds
them is not installed in the dev environment, so the expected values are written from that source:
``keyword in output`` (case-sensitive), ``pattern.findall(output)`` and ``json.loads(output)``.
"""

from __future__ import annotations

import re

import pytest

from stateval.checks import (
    CheckResult,
    compile_regex,
    compile_schema,
    contains,
    contains_all,
    contains_any,
    exact,
    json_parseable,
    json_schema,
    matches_regex,
)
from stateval.errors import EvaluationConfigError, EvaluationError


def test_check_result_rejects_scores_outside_unit_interval() -> None:
    with pytest.raises(EvaluationError, match="outside"):
        CheckResult("x", 1.5, True, "pass", "")
    with pytest.raises(EvaluationError, match="not a number"):
        CheckResult("x", float("nan"), True, "pass", "")


def test_exact_is_strict_by_default_and_can_fold_case_and_strip() -> None:
    assert exact("Paris", "Paris").passed
    assert not exact("Paris ", "Paris").passed
    assert not exact("paris", "Paris").passed
    assert exact(" STRASSE ", "straße", case_sensitive=False, strip=True).passed


def test_exact_compares_non_strings_as_canonical_json() -> None:
    assert exact({"b": 1, "a": [1, 2]}, '{"a": [1, 2], "b": 1}').passed
    assert exact(3, 3).passed
    assert not exact(True, 1).passed
    assert exact(None, "null").passed


# -- Phoenix parity ---------------------------------------------------------------------------


def test_contains_matches_phoenix_contains_keyword() -> None:
    found = contains("The order has shipped", "shipped")
    assert (found.score, found.passed) == (1.0, True)
    assert found.explanation == "the string 'shipped' was found in the output"
    missing = contains("The order has shipped", "Shipped")  # case-sensitive, like Phoenix
    assert missing.score == 0.0
    assert missing.explanation == "the string 'Shipped' was not found in the output"


def test_contains_any_matches_phoenix_contains_any_keyword() -> None:
    result = contains_any("see the disclaimer below", ["warranty", "disclaimer", "below"])
    assert result.score == 1.0
    assert result.explanation == "the keywords ['disclaimer', 'below'] were found in the output"
    none = contains_any("nothing here", ["foo", "bar"])
    assert none.score == 0.0
    assert none.explanation == "none of the keywords ['foo', 'bar'] were found in the output"
    assert contains_any("DISCLAIMER", ["disclaimer"]).score == 0.0


def test_contains_all_matches_phoenix_contains_all_keywords() -> None:
    result = contains_all("red and blue", ["red", "green", "blue", "pink"])
    assert result.score == 0.0
    assert result.explanation == "the keywords ['green', 'pink'] were not found in the output"
    ok = contains_all("red and blue", ["red", "blue"])
    assert ok.score == 1.0
    assert ok.explanation == "all of the keywords ['red', 'blue'] were found in the output"


def test_matches_regex_matches_phoenix_matches_regex() -> None:
    result = matches_regex("call 555-123-4567 or 555-987-6543", r"\d{3}-\d{3}-\d{4}")
    assert result.score == 1.0
    assert result.explanation == (
        r"the substrings ['555-123-4567', '555-987-6543'] matched the regex pattern "
        r"\d{3}-\d{3}-\d{4}"
    )
    none = matches_regex("no digits", r"\d+")
    assert none.score == 0.0
    assert none.explanation == r"no substrings matched the regex pattern \d+"


def test_matches_regex_lists_groups_like_findall() -> None:
    result = matches_regex("a=1, b=2", r"(\w)=(\d)")
    assert result.explanation.startswith("the substrings [('a', '1'), ('b', '2')] matched")


def test_matches_regex_accepts_compiled_re_patterns_with_flags() -> None:
    assert matches_regex("HELLO", re.compile("hello", re.IGNORECASE)).passed
    assert not matches_regex("HELLO", re.compile("hello")).passed


def test_json_parseable_matches_phoenix_json_parsable() -> None:
    assert json_parseable('{"a": [1, 2]}').score == 1.0
    assert json_parseable("NaN").score == 1.0  # json.loads accepts it, as in Phoenix
    bad = json_parseable("{'a': 1}")
    assert bad.score == 0.0
    assert "not valid JSON" in bad.explanation
    assert json_parseable("").score == 0.0


# -- regex safety -----------------------------------------------------------------------------


def test_nested_quantifier_pattern_returns_a_failed_check() -> None:
    # The classic catastrophic-backtracking case: the regex engine must not hang on it.
    result = matches_regex("a" * 40 + "!", r"(a+)+$")
    assert not result.passed
    assert result.label in {"fail", "timeout"}


def test_backtracking_past_the_timeout_fails_with_a_timeout_label() -> None:
    result = matches_regex("a" * 40 + "!", r"(a|aa)+$", timeout=0.05)
    assert (result.passed, result.label) == (False, "timeout")
    assert "timed out" in result.explanation
    assert "(a|aa)+$" in result.explanation


def test_invalid_regex_is_a_config_error() -> None:
    with pytest.raises(EvaluationConfigError, match="invalid regex"):
        compile_regex("(unclosed")


def test_regex_and_contains_work_on_unicode() -> None:
    assert matches_regex("Grüße aus Köln", r"K\w+n").passed
    assert contains("ΣΊΣΥΦΟΣ", "σίσυφος", case_sensitive=False).passed
    assert contains_any("Straße", ["STRASSE"], case_sensitive=False).passed


def test_checks_accept_empty_output() -> None:
    assert not contains("", "x").passed
    assert contains_all("", ["a"]).explanation == "the keywords ['a'] were not found in the output"
    assert not matches_regex("", r"\w").passed


def test_checks_read_non_string_values_as_json() -> None:
    assert contains({"city": "Paris"}, '"city": "Paris"').passed
    assert matches_regex(12345, r"^\d{5}$").passed
    assert json_parseable({"a": 1}).passed


# -- JSON schema ------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "required": ["name", "items"],
    "properties": {
        "name": {"type": "string"},
        "items": {"type": "array", "items": {"type": "object", "required": ["sku"]}},
    },
}


def test_json_schema_passes_valid_documents() -> None:
    assert json_schema('{"name": "x", "items": [{"sku": "A"}]}', SCHEMA).passed
    assert json_schema({"name": "x", "items": []}, SCHEMA).passed


def test_json_schema_names_the_failing_path_and_message() -> None:
    result = json_schema('{"name": 3, "items": [{"sku": "A"}, {}]}', SCHEMA)
    assert not result.passed
    assert result.metrics["errors"] == 2
    assert "at $.items[1]: 'sku' is a required property" in result.explanation
    assert "at $.name: 3 is not of type 'string'" in result.explanation


def test_json_schema_on_unparseable_output_fails_with_invalid_json() -> None:
    result = json_schema("{not json", SCHEMA)
    assert (result.passed, result.label) == (False, "invalid_json")


def test_invalid_schema_is_a_config_error_at_build_time() -> None:
    with pytest.raises(EvaluationConfigError, match=r"invalid JSON schema at \$.type"):
        compile_schema({"type": "strnig"})
    with pytest.raises(EvaluationConfigError):
        compile_schema(["not", "a", "schema"])  # type: ignore[arg-type]


def test_json_schema_validates_strings_as_values_when_not_parsing() -> None:
    assert json_schema("Ada", {"type": "string"}, parse=False).passed
    assert not json_schema("Ada", {"type": "string"}).passed


# -- json_schema regexes run under a deadline (issue 11, defect 3) ------------------------------

_EVIL = "a" * 40 + "!"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^(a|aa)+$"},
        {"type": "string", "pattern": "^(a|a)*$"},
        {"type": "object", "patternProperties": {"^(a|a)*$": {"type": "integer"}}},
        {
            "type": "object",
            "patternProperties": {"^(a|aa)+$": {}},
            "additionalProperties": False,
        },
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "patternProperties": {"^(a|aa)+$": {}},
            "unevaluatedProperties": False,
        },
    ],
)
def test_a_backtracking_schema_regex_fails_the_check_with_a_timeout_label(
    schema: dict[str, object],
) -> None:
    instance: object = _EVIL if schema["type"] == "string" else {_EVIL: 1}
    result = json_schema(instance, schema, parse=False, timeout=0.05)
    assert (result.passed, result.label) == (False, "timeout")
    assert "timed out" in result.explanation


def test_schema_patterns_still_decide_validity_within_the_timeout() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    assert json_schema({"code": "ABC", "x-a": 1}, schema).passed
    bad = json_schema({"code": "abc", "x-a": "no", "other": 1}, schema)
    assert bad.label == "fail"
    assert "'abc' does not match '^[A-Z]{3}$'" in bad.explanation
    assert "'other' does not match any of the regexes: '^x-'" in bad.explanation


def test_a_validator_made_elsewhere_also_gets_the_timeout() -> None:
    import jsonschema

    plain = jsonschema.Draft202012Validator({"type": "string", "pattern": "^(a|aa)+$"})
    result = json_schema(_EVIL, plain, parse=False, timeout=0.05)
    assert result.label == "timeout"


def test_the_nested_quantifier_of_the_report_is_answered_not_hung() -> None:
    # ``^(a+)+$`` held :mod:`re` for 86 s on 31 characters; the regex engine answers at once.
    result = json_schema("a" * 31 + "!", {"pattern": "^(a+)+$"}, parse=False)
    assert (result.passed, result.label) == (False, "fail")
