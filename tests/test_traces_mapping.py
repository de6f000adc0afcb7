"""Monitor files and the mapping of span attributes to mutator calls (no server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stateval.errors import SuiteProblemsError
from stateval.traces import (
    AttributePointer,
    MappedCall,
    SpanMapping,
    Unmapped,
    in_sample,
    load_monitor,
)

MONITOR = """\
name: crm-monitor
traces:
  project: crm-profile-updater
  span_name: update_profile
  pre_state: input.value#/profile
  input: input.value#/email
  post_state: output.value
  sample: 0.5
policies:
  phone: {normalize: [whitespace]}
checks:
  email: [{type: regex, pattern: "^[^@ ]+@[^@ ]+$"}]
grounded: [phone, email, renewal_date]
unexplained_changes: true
thresholds:
  overall_match_rate: 0.9
"""


def _write(tmp_path: Path, text: str, name: str = "monitor.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_monitor_file_reuses_the_suite_sections(tmp_path: Path) -> None:
    monitor = load_monitor(_write(tmp_path, MONITOR))
    assert monitor.name == "crm-monitor"
    assert monitor.traces.names == ("update_profile",)
    assert monitor.traces.sample == 0.5
    assert monitor.grounded == ("phone", "email", "renewal_date")
    assert monitor.unexplained_changes
    assert [c.type for c in monitor.checks["email"]] == ["regex"]
    assert monitor.policies.for_path("phone").normalize
    assert monitor.thresholds.overall_match_rate == 0.9


def test_a_monitor_without_mapping_reads_stateval_mutate_spans(tmp_path: Path) -> None:
    monitor = load_monitor(_write(tmp_path, "traces: {project: p}\ngrounded: true\n"))
    assert monitor.traces.names == ("stateval.mutate",)
    assert monitor.grounded == ("*",)
    assert SpanMapping.of(monitor.traces) == SpanMapping.stateval_mutate()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("traces: {project: p}\ncases: {inline: []}\n", "monitor.yaml:2: cases: unknown key"),
        ("traces: {project: p, post_state: output.value}\n", "monitor.yaml:1: traces: "),
        (
            "traces: {project: p}\nthresholds: {value_f1: 0.5}\n",
            "monitor.yaml:2: thresholds.value_f1: needs an expected state",
        ),
        ("traces: {project: p}\njudged: [notes]\n", "monitor.yaml:2: judged: needs 'judge'"),
        (
            "traces: {project: p}\nchecks: {email: [{type: regex, pattern: '('}]}\n",
            "monitor.yaml:2: checks.email: criterion 0",
        ),
        ("traces: {project: p, sample: 2}\n", "monitor.yaml:1: traces.sample: "),
        (
            "traces: {project: p}\nchecks: {tier: [{type: exact}]}\n",
            "monitor.yaml:2: checks.tier: criterion 0: exact needs a value",
        ),
        ("traces: {project: p, input: 'a b'}\n", "monitor.yaml:1: traces.input: "),
    ],
)
def test_a_monitor_mistake_is_one_line_naming_file_and_key(
    tmp_path: Path, text: str, line: str
) -> None:
    with pytest.raises(SuiteProblemsError) as caught:
        load_monitor(_write(tmp_path, text))
    assert len(caught.value.problems) == 1
    assert line in caught.value.problems[0], caught.value.problems


def test_a_foreign_span_maps_through_attribute_and_json_pointer() -> None:
    mapping = SpanMapping.parse(
        pre_state="input.value#/profile", input="input.value#/email", post_state="output.value"
    )
    call = mapping.map_attributes(
        {
            "input.value": json.dumps(
                {"profile": {"phone": "555-0100", "address": {"city": "Oslo"}}, "email": "hi"}
            ),
            "output.value": json.dumps({"phone": "555-0199", "address": {"city": "Oslo"}}),
            "session.id": "thread-1",
        }
    )
    assert isinstance(call, MappedCall)
    assert call.pre_state is not None
    assert call.pre_state.to_flat() == {"phone": "555-0100", "address.city": "Oslo"}
    assert call.post_state.to_flat() == {"phone": "555-0199", "address.city": "Oslo"}
    assert call.input_text == "hi"
    assert call.episode == "thread-1"


def test_a_stateval_mutate_span_maps_with_no_mapping() -> None:
    attributes = {
        "input.value": json.dumps(
            {
                "case_id": "c1",
                "pre_state": {"fields": {"hotel.area": [{"value": "north", "confidence": 1.0}]}},
                "input": {"prompt": "make it the south", "message_id": "m1", "metadata": {}},
            }
        ),
        "output.value": json.dumps(
            {"fields": {"hotel.area": [{"value": "south", "confidence": 0.9}]}}
        ),
    }
    call = SpanMapping.stateval_mutate().map_attributes(attributes)
    assert isinstance(call, MappedCall)
    assert call.input_text == "make it the south"
    assert call.pre_state is not None
    assert call.pre_state.to_flat() == {"hotel.area": "north"}
    assert call.post_state.to_flat() == {"hotel.area": "south"}
    assert call.episode is None


@pytest.mark.parametrize(
    ("attributes", "reason"),
    [
        ({"output.value": "{}"}, "no attribute 'input.value'"),
        ({"input.value": "not json", "output.value": "{}"}, "not JSON"),
        ({"input.value": '{"profile": {}}', "output.value": "{}"}, "nothing at 'email'"),
        ({"input.value": '{"email": "x", "profile": {}}', "output.value": "plain"}, "post_state"),
        (
            {"input.value": '{"email": "x", "profile": {}}', "output.value": '{"error": "boom"}'},
            "the call failed: boom",
        ),
    ],
)
def test_a_span_that_cannot_be_mapped_says_why(attributes: dict[str, str], reason: str) -> None:
    mapping = SpanMapping.parse(
        pre_state="input.value#/profile", input="input.value#/email", post_state="output.value"
    )
    outcome = mapping.map_attributes(attributes)
    assert isinstance(outcome, Unmapped)
    assert reason in outcome.reason


def test_json_pointer_escapes_and_list_indices() -> None:
    attributes = {"a": json.dumps({"x/y": [{"~k": 5}]})}
    assert AttributePointer.parse("a#/x~1y/0/~0k").resolve(attributes) == 5
    assert str(AttributePointer.parse("a#/x")) == "a#/x"


def test_the_sample_is_seeded_and_near_its_share() -> None:
    ids = [format(i * 7919, "016x") for i in range(4000)]
    kept = [i for i in ids if in_sample(i, 0.25, seed=3)]
    assert 0.2 < len(kept) / len(ids) < 0.3
    assert kept == [i for i in ids if in_sample(i, 0.25, seed=3)]
    assert kept != [i for i in ids if in_sample(i, 0.25, seed=4)]
