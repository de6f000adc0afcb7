"""parse_updates: what an LLM reply must look like, and which real-world noise is tolerated."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from stateval.errors import MutatorOutputError, StateError
from stateval.mutators import UPDATES_JSON_SCHEMA, Update, parse_updates

NAME = {"path": "registrant.name", "value": "Ada Lovelace", "confidence": 0.95, "inference": "said"}
EMAIL = {"path": "registrant.email", "value": "ada@example.org", "confidence": 0.8}
NAME_UPDATE = Update("registrant.name", "Ada Lovelace", 0.95, "said")
EMAIL_UPDATE = Update("registrant.email", "ada@example.org", 0.8)


def test_plain_array_becomes_updates_in_order() -> None:
    assert parse_updates(json.dumps([NAME, EMAIL])) == [NAME_UPDATE, EMAIL_UPDATE]


def test_empty_array_means_no_change() -> None:
    assert parse_updates("[]") == []
    assert parse_updates("  []\n") == []


def test_values_may_be_any_json_and_integer_confidence_becomes_float() -> None:
    raw = json.dumps(
        [
            {"path": "items.0", "value": {"sku": "A", "qty": [1, 2]}, "confidence": 1},
            {"path": "flag", "value": None, "confidence": 0, "inference": None},
        ]
    )
    updates = parse_updates(raw)
    assert updates[0].value == {"sku": "A", "qty": [1, 2]}
    assert updates[0].confidence == 1.0
    assert isinstance(updates[0].confidence, float)
    assert updates[1].value is None
    assert updates[1].inference is None


ARRAY = json.dumps([NAME])


@pytest.mark.parametrize(
    "raw",
    [
        f"```json\n{ARRAY}\n```",
        f"```\n{ARRAY}\n```",
        f"```JSON {ARRAY}```",
        f"Sure! Here are the updates:\n```json\n{ARRAY}\n```\nLet me know if you need more.",
        f"Here are the updates: {ARRAY}",
        f"{ARRAY}\n\nI extracted the name from the first sentence.",
        f"See note [1] and [the message]. Updates:\n{ARRAY}",
        f"Updates: {ARRAY}. Repeating them: {ARRAY}",
        json.dumps({"updates": [NAME]}),
        f"```json\n{json.dumps({'updates': [NAME]})}\n```",
        f"```python\nprint([1, 2])\n```\n```json\n{ARRAY}\n```",
    ],
    ids=[
        "json-fence",
        "bare-fence",
        "one-line-fence",
        "fence-in-prose",
        "leading-prose",
        "trailing-prose",
        "brackets-in-prose",
        "same-array-twice",
        "updates-wrapper",
        "fenced-wrapper",
        "non-json-fence-ignored",
    ],
)
def test_unambiguous_json_in_real_llm_noise_is_accepted(raw: str) -> None:
    assert parse_updates(raw) == [NAME_UPDATE]


def _item(**changes: object) -> str:
    return json.dumps([{**NAME, **changes}])


MALFORMED = [
    ("empty", "   ", "output is empty"),
    ("prose-only", "I could not find any field.", "no JSON array of updates found"),
    ("truncated", ARRAY[:-5], "output is not valid JSON"),
    ("object", json.dumps(NAME), "expected a JSON array of updates, got an object"),
    ("string", json.dumps(ARRAY), "expected a JSON array of updates, got a string"),
    ("number", "42", "got a number"),
    ("wrapper-extra-key", json.dumps({"updates": [], "note": "x"}), "got an object"),
    ("wrapper-not-list", json.dumps({"updates": NAME}), '"updates" is an object'),
    ("item-not-object", "[1, 2]", "update 0 is a number, not an object"),
    ("missing-path", json.dumps([{"value": 1, "confidence": 0.5}]), "update 0 lacks 'path'"),
    (
        "missing-value-and-confidence",
        json.dumps([{"path": "a"}]),
        "update 0 lacks 'value', 'confidence'",
    ),
    ("unknown-key", _item(reason="x"), "update 0 has unknown key(s) 'reason'"),
    ("doubled-dot", _item(path="a..b"), "invalid path 'a..b'"),
    ("space-in-path", _item(path="a b"), "invalid path 'a b'"),
    ("path-not-string", _item(path=3), "a path is a string"),
    ("confidence-too-high", _item(confidence=1.5), "1.5 is not a number in [0, 1]"),
    ("confidence-negative", _item(confidence=-0.1), "-0.1 is not a number in [0, 1]"),
    ("confidence-word", _item(confidence="high"), "'high' is not a number in [0, 1]"),
    ("confidence-bool", _item(confidence=True), "True is not a number in [0, 1]"),
    ("confidence-nan", ARRAY.replace("0.95", "NaN"), "confidence is NaN, not a number"),
    ("value-nan", ARRAY.replace('"Ada Lovelace"', "NaN"), "value contains NaN, which is not JSON"),
    (
        "value-nested-infinity",
        ARRAY.replace('"Ada Lovelace"', "[1, -Infinity]"),
        "value contains -Infinity",
    ),
    ("value-overflow", ARRAY.replace('"Ada Lovelace"', "1e999"), "inf, which JSON cannot hold"),
    ("inference-not-string", _item(inference=5), "inference must be a string"),
    (
        "second-item-bad",
        json.dumps([NAME, {**EMAIL, "confidence": 2}]),
        "update 1: invalid confidence at 'registrant.email'",
    ),
    (
        "bad-fenced-json",
        "Here:\n```json\n[{'path': 'a'}]\n```",
        "fenced block 1 is not valid JSON",
    ),
    (
        "ambiguous-prose",
        f"Either {ARRAY} or {json.dumps([EMAIL])}",
        "ambiguous output: found 2 different JSON arrays of updates",
    ),
    (
        "ambiguous-fences",
        f"```json\n{ARRAY}\n```\nor\n```json\n[]\n```",
        "ambiguous output: found 2 different",
    ),
]


@pytest.mark.parametrize(
    ("raw", "reason"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_malformed_output_raises_with_reason_and_raw_text(raw: str, reason: str) -> None:
    with pytest.raises(MutatorOutputError) as caught:
        parse_updates(raw)
    assert reason in caught.value.reason
    assert caught.value.raw == raw
    assert reason in str(caught.value)


@pytest.mark.parametrize("raw", ["[" * 100_000, "Updates: " + "[" * 100_000 + "]" * 100_000])
def test_absurdly_nested_output_is_an_output_error(raw: str) -> None:
    with pytest.raises(MutatorOutputError, match="nests JSON too deeply"):
        parse_updates(raw)


def test_non_text_output_is_rejected() -> None:
    with pytest.raises(MutatorOutputError, match="not text"):
        parse_updates(None)  # type: ignore[arg-type]


def test_schema_is_valid_json_schema_and_accepts_parseable_output() -> None:
    validator = jsonschema.Draft202012Validator(UPDATES_JSON_SCHEMA)
    validator.check_schema(UPDATES_JSON_SCHEMA)
    validator.validate([NAME, EMAIL])
    validator.validate([])
    validator.validate([{"path": "items.0.sku", "value": [1, {"a": None}], "confidence": 0}])


@pytest.mark.parametrize(
    "bad",
    [
        {"value": 1, "confidence": 0.5},
        {**NAME, "reason": "x"},
        {**NAME, "path": "a..b"},
        {**NAME, "path": "a b"},
        {**NAME, "path": ".a"},
        {**NAME, "confidence": 1.5},
        {**NAME, "confidence": "high"},
        {**NAME, "inference": 5},
    ],
)
def test_schema_rejects_what_the_parser_rejects(bad: dict[str, object]) -> None:
    validator = jsonschema.Draft202012Validator(UPDATES_JSON_SCHEMA)
    assert not validator.is_valid([bad])
    with pytest.raises(MutatorOutputError):
        parse_updates(json.dumps([bad]))


def test_schema_path_pattern_agrees_with_the_parser_on_every_character() -> None:
    # The schema may be stricter than the parser only for '"' and '\\', which constrained
    # decoding would emit unescaped; on every other character the two agree.
    pattern = re.compile(UPDATES_JSON_SCHEMA["items"]["properties"]["path"]["pattern"])
    disagree = []
    # Every Unicode whitespace character is below U+3100; a few beyond check the rest.
    for code in [*range(0x3100), 0xFEFF, 0xFFFD, 0x1F600, 0x10FFFF]:
        path = f"a{chr(code)}b.c"
        try:
            Update(path, 1, 1.0)  # what parse_updates builds for each update
        except StateError:
            parsed = False
        else:
            parsed = True
        if (pattern.search(path) is not None) != parsed:
            disagree.append(chr(code))
    assert disagree == ['"', "\\"]


def test_schema_has_no_untyped_value_and_no_class_escapes() -> None:
    # What llama.cpp's grammar converter needs: every subschema typed, no \s or \. in patterns.
    item = UPDATES_JSON_SCHEMA["items"]
    assert all("type" in sub for sub in item["properties"].values())
    assert set(item["properties"]["value"]["type"]) == {
        "string",
        "number",
        "boolean",
        "null",
        "array",
        "object",
    }
    assert not re.search(r"\\[sSdDwW.]", item["properties"]["path"]["pattern"])
