"""Criteria specs: validation at build time, all-must-pass, exact fallback."""

from __future__ import annotations

from typing import Any

import pytest

from stateval.checks import check_criteria, parse_criteria
from stateval.errors import EvaluationConfigError


def test_all_criteria_must_pass() -> None:
    criteria = parse_criteria(
        [
            {"type": "contains", "value": "Paris"},
            {"type": "regex", "pattern": r"\d{4}"},
            {"type": "contains_any", "keywords": ["France", "Frankreich"]},
        ]
    )
    ok = check_criteria("Paris, France, since 1789", criteria, reference="")
    assert (ok.score, ok.passed) == (1.0, True)
    assert ok.metrics == {"criteria_passed": 3, "criteria_total": 3}
    bad = check_criteria("Paris, France", criteria, reference="")
    assert (bad.score, bad.passed) == (0.0, False)
    assert bad.metrics["criteria_passed"] == 2
    assert bad.explanation.startswith("criterion 1 (matches_regex): no substrings matched")


def test_no_criteria_falls_back_to_exact_reference_match() -> None:
    assert check_criteria("42", [], reference="42").passed
    assert not check_criteria("42 ", [], reference="42").passed


def test_exact_criterion_uses_its_value_or_the_reference() -> None:
    [with_value] = parse_criteria([{"type": "exact", "value": "yes", "case_sensitive": False}])
    assert check_criteria("YES", [with_value], reference="no").passed
    [plain] = parse_criteria([{"type": "exact"}])
    assert check_criteria("no", [plain], reference="no").passed


def test_json_schema_and_parseable_criteria() -> None:
    criteria = parse_criteria(
        [
            {"type": "json_parseable"},
            {"type": "json_schema", "schema": {"type": "object", "required": ["id"]}},
        ]
    )
    assert check_criteria('{"id": 1}', criteria, reference="").passed
    result = check_criteria('{"x": 1}', criteria, reference="")
    assert "criterion 1 (json_schema)" in result.explanation
    assert "'id' is a required property" in result.explanation


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ([{"type": "contains"}], r"^criterion 0: value: Field required$"),
        ([{"type": "contains", "value": "x"}, {"type": "nope"}], r"^criterion 1: Input tag 'nope'"),
        ([{"value": "x"}], r"^criterion 0: Unable to extract tag"),
        ([{"type": "contains", "value": "x", "vlaue": 1}], r"^criterion 0: vlaue: Extra inputs"),
        ([{"type": "contains_all", "keywords": []}], r"^criterion 0: keywords: List should"),
        ([{"type": "regex", "pattern": "(a"}], r"^criterion 0: invalid regex pattern '\(a'"),
        ([{"type": "regex", "pattern": "a", "timeout": 0}], r"^criterion 0: timeout: Input"),
        ([{"type": "json_schema", "schema": {"type": 5}}], r"^criterion 0: invalid JSON schema"),
        (["contains"], r"^criterion 0: must be an object, not str$"),
    ],
)
def test_invalid_specs_raise_one_line_naming_the_index(specs: list[Any], message: str) -> None:
    with pytest.raises(EvaluationConfigError, match=message) as info:
        parse_criteria(specs)
    assert "\n" not in str(info.value)


def test_criteria_must_be_a_list() -> None:
    with pytest.raises(EvaluationConfigError, match="criteria must be a list"):
        parse_criteria("contains")  # type: ignore[arg-type]


def test_regex_criterion_timeout_is_a_failed_criterion() -> None:
    criteria = parse_criteria([{"type": "regex", "pattern": r"(a|aa)+$", "timeout": 0.05}])
    result = check_criteria("a" * 40 + "!", criteria, reference="")
    assert not result.passed
    assert "timed out" in result.explanation
