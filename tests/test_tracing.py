from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from stateval.state import InterpretiveState, ValueConfidence
from stateval.tracing import (
    ATTR_CASE_ID,
    ATTR_MESSAGE_ID,
    SPAN_LLM,
    SPAN_MUTATE,
    Tracing,
    configure_tracing,
    current_trace_id,
    disabled_tracing,
    llm_span,
    mutator_call_span,
)


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def tracing(exporter: InMemorySpanExporter) -> Iterator[Tracing]:
    tracing = configure_tracing("unit-project", exporter=exporter)
    yield tracing
    tracing.shutdown()


def _finished(tracing: Tracing, exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    assert tracing.force_flush()
    return list(exporter.get_finished_spans())


def test_mutation_span_records_case_input_and_output(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    pre = InterpretiveState.from_flat({"name": "Ada"})
    post = pre.copy()
    post.add_value("email", ValueConfidence("ada@example.org", 0.9))
    with mutator_call_span(
        tracing.tracer,
        case_id="case-1",
        input="my email is ada@example.org",
        pre_state=pre,
        message_id="m1",
    ) as span:
        span.set_output(post)
        trace_id = span.trace_id

    (recorded,) = _finished(tracing, exporter)
    attrs = dict(recorded.attributes or {})
    assert recorded.name == SPAN_MUTATE
    assert attrs["openinference.span.kind"] == "CHAIN"
    assert attrs[ATTR_CASE_ID] == "case-1"
    assert attrs[ATTR_MESSAGE_ID] == "m1"
    assert json.loads(str(attrs["metadata"])) == {"case_id": "case-1", "message_id": "m1"}
    assert attrs["input.mime_type"] == "application/json"
    assert json.loads(str(attrs["input.value"])) == {
        "case_id": "case-1",
        "pre_state": pre.to_dict(),
        "input": "my email is ada@example.org",
    }
    assert attrs["output.mime_type"] == "application/json"
    assert json.loads(str(attrs["output.value"])) == post.to_dict()
    assert recorded.status.status_code is StatusCode.OK
    assert recorded.resource.attributes["openinference.project.name"] == "unit-project"
    assert trace_id == format(recorded.context.trace_id, "032x")


def test_mutation_span_marks_a_failure_and_reraises(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    with (
        pytest.raises(RuntimeError, match="model down"),
        mutator_call_span(tracing.tracer, case_id="case-2", input={"text": "x"}),
    ):
        raise RuntimeError("model down")

    (recorded,) = _finished(tracing, exporter)
    assert recorded.status.status_code is StatusCode.ERROR
    assert "model down" in (recorded.status.description or "")
    (event,) = recorded.events
    assert event.name == "exception"
    assert (event.attributes or {})["exception.type"] == "RuntimeError"
    assert ATTR_MESSAGE_ID not in (recorded.attributes or {})


def test_llm_span_records_model_messages_tokens_and_no_secrets(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    params = {
        "temperature": 0.0,
        "max_tokens": 256,
        "api_key": "sk-secret",
        "extra": {"Authorization": "Bearer sk-secret", "top_p": 1},
    }
    with (
        mutator_call_span(tracing.tracer, case_id="c", input="i"),
        llm_span(
            tracing.tracer,
            prompt="Extract the fields.",
            model_name="gpt-test",
            provider="openai",
            invocation_parameters=params,
        ) as span,
    ):
        span.set_response("[]", prompt_tokens=12, completion_tokens=3)

    llm, chain = _finished(tracing, exporter)
    attrs = dict(llm.attributes or {})
    assert llm.name == SPAN_LLM
    assert chain.name == SPAN_MUTATE
    assert llm.parent is not None
    assert llm.parent.span_id == chain.context.span_id
    assert attrs["openinference.span.kind"] == "LLM"
    assert attrs["llm.model_name"] == "gpt-test"
    assert attrs["llm.provider"] == "openai"
    assert attrs["llm.input_messages.0.message.role"] == "user"
    assert attrs["llm.input_messages.0.message.content"] == "Extract the fields."
    assert attrs["llm.output_messages.0.message.role"] == "assistant"
    assert attrs["llm.output_messages.0.message.content"] == "[]"
    assert attrs["llm.token_count.prompt"] == 12
    assert attrs["llm.token_count.completion"] == 3
    assert attrs["llm.token_count.total"] == 15
    assert json.loads(str(attrs["llm.invocation_parameters"])) == {
        "temperature": 0.0,
        "max_tokens": 256,
        "extra": {"top_p": 1},
    }
    assert not any("sk-secret" in str(value) for value in attrs.values())


def test_llm_span_with_chat_messages(tracing: Tracing, exporter: InMemorySpanExporter) -> None:
    messages = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}]
    with llm_span(tracing.tracer, messages=messages) as span:
        span.set_token_counts(prompt_tokens=5)

    (llm,) = _finished(tracing, exporter)
    attrs = dict(llm.attributes or {})
    assert attrs["llm.input_messages.0.message.role"] == "system"
    assert attrs["llm.input_messages.1.message.content"] == "Hi"
    assert json.loads(str(attrs["input.value"])) == messages
    assert attrs["llm.token_count.prompt"] == 5
    assert "llm.token_count.total" not in attrs


def test_a_turn_of_an_episode_and_its_llm_calls_carry_the_session(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    with (
        mutator_call_span(tracing.tracer, case_id="t2", input="hi", session_id="dlg-7@run-1"),
        llm_span(tracing.tracer, prompt="p1"),
    ):
        pass
    with (
        mutator_call_span(tracing.tracer, case_id="single", input="hi"),
        llm_span(tracing.tracer, prompt="p2"),
    ):
        pass
    with llm_span(tracing.tracer, prompt="p3"):  # the session ended with its span
        pass
    spans = _finished(tracing, exporter)
    session = {
        (s.name, (s.attributes or {}).get("input.value")): (s.attributes or {}).get("session.id")
        for s in spans
    }
    assert session[(SPAN_LLM, "p1")] == "dlg-7@run-1"
    assert session[(SPAN_LLM, "p2")] is None
    assert session[(SPAN_LLM, "p3")] is None
    by_case = {(s.attributes or {})[ATTR_CASE_ID]: s for s in spans if s.name == SPAN_MUTATE}
    assert (by_case["t2"].attributes or {})["session.id"] == "dlg-7@run-1"
    assert "session.id" not in (by_case["single"].attributes or {})


def test_current_trace_id_inside_and_outside_a_span(tracing: Tracing) -> None:
    assert current_trace_id() is None
    with mutator_call_span(tracing.tracer, case_id="c", input="i") as span:
        inner = current_trace_id()
    assert inner is not None
    assert len(inner) == 32
    assert inner == span.trace_id


def test_disabled_tracing_records_nothing_and_links_no_trace() -> None:
    tracing = disabled_tracing()
    with mutator_call_span(tracing.tracer, case_id="c", input="i") as span:
        span.set_output({"a": 1})
        assert current_trace_id() is None
    assert span.trace_id is None
    assert tracing.force_flush()
    tracing.shutdown()


@pytest.mark.phoenix
def test_spans_are_exported_to_phoenix_and_read_back(phoenix_url: str) -> None:
    project = f"stateval-tracing-{uuid.uuid4().hex[:8]}"
    tracing = configure_tracing(project, phoenix_url)
    with mutator_call_span(
        tracing.tracer, case_id="case-9", input="hello", pre_state={"a": 1}, message_id="m9"
    ) as span:
        with llm_span(tracing.tracer, prompt="hello", model_name="scripted") as llm:
            llm.set_response("[]", prompt_tokens=1, completion_tokens=1)
        span.set_output({"a": 2})
    trace_id = span.trace_id
    assert tracing.force_flush()
    tracing.shutdown()

    spans: list[dict[str, object]] = []
    for _ in range(40):  # the server ingests spans asynchronously
        response = httpx.get(
            f"{phoenix_url}/v1/projects/{project}/spans",
            params={"trace_id": trace_id},
            timeout=10,
        )
        if response.status_code == 200:
            spans = response.json()["data"]
            if len(spans) == 2:
                break
        time.sleep(0.25)
    by_name = {str(s["name"]): s for s in spans}
    assert set(by_name) == {SPAN_MUTATE, SPAN_LLM}
    chain = by_name[SPAN_MUTATE]
    assert chain["span_kind"] == "CHAIN"
    attributes = chain["attributes"]
    assert isinstance(attributes, dict)
    assert attributes[ATTR_CASE_ID] == "case-9"
    assert json.loads(attributes["input.value"])["pre_state"] == {"a": 1}
    assert json.loads(attributes["output.value"]) == {"a": 2}
    llm_attrs = by_name[SPAN_LLM]["attributes"]
    assert isinstance(llm_attrs, dict)
    assert llm_attrs["llm.model_name"] == "scripted"
    assert llm_attrs["llm.token_count.total"] == 2


def test_a_recreated_mutation_span_carries_the_live_ones_ids_and_attributes(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from stateval.tracing import (
        ATTR_RECREATED,
        RecordedCall,
        otlp_span_ids,
        recreated_mutator_call_spans,
    )

    post = InterpretiveState.from_flat({"area": "north"})
    with mutator_call_span(
        tracing.tracer,
        case_id="c1",
        input={"prompt": "hi"},
        pre_state={},
        message_id="m1",
        session_id="d1@run",
        run="run",
        mode="free_running",
    ) as span:
        span.set_output(post)
    (live,) = _finished(tracing, exporter)
    # the run and the mode, where Phoenix's session filter reads them (metadata["mode"])
    assert json.loads(str((live.attributes or {})["metadata"])) == {
        "case_id": "c1",
        "run": "run",
        "mode": "free_running",
        "message_id": "m1",
    }
    call = RecordedCall(
        trace_id=format(live.context.trace_id, "032x"),
        span_id=format(live.context.span_id, "016x"),
        case_id="c1",
        input={"prompt": "hi"},
        pre_state={},
        message_id="m1",
        output=post.to_dict(),
        start_ns=live.start_time or 0,
        end_ns=live.end_time or 0,
        session_id="d1@run",
        run="run",
        mode="free_running",
    )
    payload = recreated_mutator_call_spans("unit-project", [call])
    assert otlp_span_ids(payload) == {call.span_id}
    request = ExportTraceServiceRequest.FromString(payload)
    (resource,) = request.resource_spans
    (scope,) = resource.scope_spans
    (span_pb,) = scope.spans
    assert span_pb.name == SPAN_MUTATE
    assert span_pb.trace_id.hex() == call.trace_id
    assert (span_pb.start_time_unix_nano, span_pb.end_time_unix_nano) == (
        live.start_time,
        live.end_time,
    )
    attributes = {a.key: a.value for a in span_pb.attributes}
    for key, value in (live.attributes or {}).items():
        assert attributes[key].string_value == value, key  # what the live span said, as said
    assert attributes[ATTR_RECREATED].bool_value is True
    project = {a.key: a.value.string_value for a in resource.resource.attributes}
    assert project["openinference.project.name"] == "unit-project"
