"""Case records read without pydantic when plainly valid: the same cases, the same problems."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from stateval.suite import CaseSpec
from stateval.suite._case_spec import PlainCaseSpec, case_spec
from stateval.suite._cases import build_case

_PLAIN: list[dict[str, Any]] = [
    {"id": "c1", "input": {"prompt": "hi"}, "expected_post_state": {"a": 1}},
    {
        "id": "c2",
        "pre_state": {"a": "x", "b": [1, {"c": None}]},
        "input": {"prompt": "", "message_id": "m7", "metadata": {"lang": "en"}},
        "expected_post_state": {"fields": {"a": [{"value": "y", "confidence": 0.5}]}},
        "actual_post_state": {"a": "y"},
        "metadata": {"dialogue": "d1", "turn": 3},
        "human": {},
    },
    {"id": "c3", "input": {"prompt": "p", "message_id": None}, "expected_post_state": {}},
]

_OTHER: list[dict[str, Any]] = [
    {"id": 7, "input": {"prompt": "int id"}, "expected_post_state": {"a": 1}},
    {
        "id": "h",
        "input": {"prompt": "p"},
        "expected_post_state": {"a": 1},
        "human": {"a": "same"},
    },
    {
        "id": "draft",
        "input": {"prompt": "p"},
        "metadata": {"review": {"status": "unreviewed"}},
    },
]

_INVALID: list[dict[str, Any]] = [
    {"id": "", "input": {"prompt": "p"}, "expected_post_state": {}},
    {"id": "c", "input": {"prompt": 3}, "expected_post_state": {}},
    {"id": "c", "input": {"prompt": "p", "extra": 1}, "expected_post_state": {}},
    {"id": "c", "input": {"prompt": "p"}, "expected_post_state": [], "metadata": {}},
    {"id": "c", "input": {"prompt": "p"}, "expected_post_state": {}, "unknown": 1},
    {"id": "c", "input": {"prompt": "p"}, "expected_post_state": {}, "human": None},
    {"id": "c", "input": {"prompt": "p"}},
]


def _case(spec: object) -> object:
    case, problems = build_case(spec, "flat", 1.0)  # type: ignore[arg-type]
    assert not problems
    return case


@pytest.mark.parametrize("record", _PLAIN)
def test_a_plain_record_makes_the_case_pydantic_makes(record: dict[str, Any]) -> None:
    plain = case_spec(record)
    assert isinstance(plain, PlainCaseSpec)
    assert _case(plain) == _case(CaseSpec.model_validate(record))


@pytest.mark.parametrize("record", _OTHER)
def test_any_other_valid_record_goes_through_pydantic(record: dict[str, Any]) -> None:
    assert isinstance(case_spec(record), CaseSpec)


@pytest.mark.parametrize("record", _INVALID)
def test_an_invalid_record_gets_pydantics_problems(record: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as ours:
        case_spec(record)
    with pytest.raises(ValidationError) as theirs:
        CaseSpec.model_validate(record)
    assert ours.value.errors() == theirs.value.errors()
