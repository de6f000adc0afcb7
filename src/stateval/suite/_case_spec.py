"""A case record read into what `CaseSpec` holds, through pydantic only when it must be.

Every case line is read twice in a run (validated when the suite loads, read again when the
case runs), and pydantic's validation of a case costs as much as the rest of reading it. A record
of the plain shape that nearly every case file has is taken as it is (`case_spec`); any other
goes through `CaseSpec`, which accepts it or words its problems.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from stateval.suite._models import CaseInputSpec, CaseSpec

__all__ = ["PlainCaseInput", "PlainCaseSpec", "case_spec", "plain_spec"]


class PlainCaseInput(NamedTuple):
    """What `CaseInputSpec` holds (a named tuple, not a frozen dataclass: made twice per case
    in a run, and a tuple costs a third to make)."""

    prompt: str
    message_id: str | None
    metadata: dict[str, Any]


class PlainCaseSpec(NamedTuple):
    """A case record of the shape every plainly valid case line has, read without pydantic:
    what `CaseSpec` holds after validating it (see `case_spec`; a named tuple for the reason
    `PlainCaseInput` is one)."""

    id: str
    pre_state: dict[str, Any]
    input: PlainCaseInput
    expected_post_state: dict[str, Any]
    actual_post_state: Any
    metadata: dict[str, Any]
    human: dict[str, Any]


_CASE_KEYS = frozenset(CaseSpec.model_fields)
_INPUT_KEYS = frozenset(CaseInputSpec.model_fields)
_EMPTY: dict[str, Any] = {}
_tuple = tuple.__new__


def case_spec(data: object) -> CaseSpec | PlainCaseSpec:
    """``CaseSpec.model_validate(data)`` for a record parsed from JSON (string keys).

    A record of the plain shape (`plain_spec`) has nothing pydantic would reject or change, so
    it is taken as it is; any other goes through `CaseSpec`, which accepts it or words its
    problems.

    Raises:
        ValidationError: The record is not a valid case.
    """
    spec = plain_spec(data)
    return CaseSpec.model_validate(data) if spec is None else spec


def plain_spec(data: object) -> PlainCaseSpec | None:
    """The record parsed from JSON (string keys) as a `PlainCaseSpec` when it has the plain
    shape (known keys only; a non-empty string id; objects for the states, the input and the
    metadata, the expected state given; a string prompt and a string or no message id; no
    human verdicts), else None. The record is the caller's, freshly parsed: nothing is
    copied."""
    if isinstance(data, dict) and data.keys() <= _CASE_KEYS:
        case_id = data.get("id")
        given = data.get("input")
        pre = data.get("pre_state", {})
        expected = data.get("expected_post_state")
        metadata = data.get("metadata", {})
        if (
            isinstance(case_id, str)
            and case_id
            and isinstance(given, dict)
            and given.keys() <= _INPUT_KEYS
            and isinstance(prompt := given.get("prompt"), str)
            and isinstance(message_id := given.get("message_id"), str | None)
            and isinstance(given_metadata := given.get("metadata", {}), dict)
            and isinstance(pre, dict)
            and isinstance(expected, dict)
            and isinstance(metadata, dict)
            and data.get("human", _EMPTY) == _EMPTY
        ):
            return _tuple(  # the named tuples made as tuples: no call of their __new__
                PlainCaseSpec,
                (
                    case_id,
                    pre,
                    _tuple(PlainCaseInput, (prompt, message_id, given_metadata)),
                    expected,
                    data.get("actual_post_state"),
                    metadata,
                    {},
                ),
            )
    return None
