"""OpenAICompatibleClient against a real local HTTP server that answers with scripted replies."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from phoenix.evals import LLM

from stateval.errors import (
    LLMResponseError,
    LLMStatusError,
    LLMUnavailableError,
    MutatorError,
    MutatorOutputError,
)
from stateval.mutators import UPDATES_JSON_SCHEMA, LLMMutator, StructuredInput
from stateval.mutators._openai import LLMCall, OpenAICompatibleClient
from stateval.phoenix import FieldJudge
from stateval.phoenix._llm import OpenAICompatibleLLM
from stateval.state import InterpretiveState

SECRET = "sk-test-0123456789abcdefSECRET"


@dataclass
class Reply:
    """One scripted HTTP answer."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(content: str | None, **message: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "stub-model-2024",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


class StubServer:
    """A threaded HTTP server on 127.0.0.1 answering POSTs from a script (or a function)."""

    def __init__(self, script: list[Reply] | Callable[[dict[str, Any]], Reply]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with stub._lock:
                    stub.requests.append(body)
                    stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                    if callable(stub.script):
                        reply = stub.script(body)
                    else:
                        reply = stub.script.pop(0) if stub.script else Reply(500, {"error": "x"})
                try:
                    time.sleep(reply.delay)
                    payload = (
                        reply.body.encode()
                        if isinstance(reply.body, str)
                        else json.dumps(reply.body).encode()
                    )
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                finally:
                    with stub._lock:
                        stub.in_flight -= 1

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that timed out and hung up is expected here

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def stub() -> Iterator[Callable[..., StubServer]]:
    servers: list[StubServer] = []

    def make(script: list[Reply] | Callable[[dict[str, Any]], Reply]) -> StubServer:
        server = StubServer(script).__enter__()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.__exit__()


def client_for(server: StubServer, **kwargs: Any) -> OpenAICompatibleClient:
    kwargs.setdefault("api_key_env", None)
    kwargs.setdefault("backoff_base", 0.01)
    return OpenAICompatibleClient("stub-model", base_url=server.url, **kwargs)


async def test_generate_returns_text_and_records_the_call(stub: Callable[..., StubServer]) -> None:
    server = stub([Reply(body=completion("hello"))])
    calls: list[LLMCall] = []
    async with client_for(server, max_tokens=64, on_call=calls.append) as client:
        assert await client.generate("say hello") == "hello"
    (body,) = server.requests
    assert body["model"] == "stub-model"
    assert body["messages"] == [{"role": "user", "content": "say hello"}]
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == 64
    assert "response_format" not in body
    assert "authorization" not in server.headers[0]
    (call,) = calls
    assert call is client.last_call
    assert call.model == "stub-model-2024"
    assert call.requested_model == "stub-model"
    assert (call.prompt_tokens, call.completion_tokens, call.total_tokens) == (11, 7, 18)
    assert call.finish_reason == "stop"
    assert call.attempts == 1
    assert call.output == "hello"
    assert call.invocation_parameters == {"temperature": 0.0, "max_tokens": 64}


async def test_system_prompt_goes_first(stub: Callable[..., StubServer]) -> None:
    server = stub([Reply(body=completion("ok"))])
    async with client_for(server, system_prompt="Be terse.") as client:
        await client.generate("hi")
    assert [m["role"] for m in server.requests[0]["messages"]] == ["system", "user"]


async def test_retries_503_then_succeeds(stub: Callable[..., StubServer]) -> None:
    server = stub([Reply(503, {"error": "busy"}), Reply(503, "busy"), Reply(body=completion("ok"))])
    async with client_for(server, max_retries=3) as client:
        assert await client.generate("x") == "ok"
        assert client.last_call is not None
        assert client.last_call.attempts == 3
    assert len(server.requests) == 3


async def test_retry_after_header_is_honoured_on_429(stub: Callable[..., StubServer]) -> None:
    server = stub(
        [Reply(429, {"error": "slow down"}, {"Retry-After": "0"}), Reply(body=completion("ok"))]
    )
    async with client_for(server, max_retries=1, backoff_base=100.0) as client:
        assert await client.generate("x") == "ok"
    assert len(server.requests) == 2


async def test_gives_up_after_max_retries_with_the_status(stub: Callable[..., StubServer]) -> None:
    server = stub(lambda body: Reply(500, {"error": {"message": "model crashed"}}))
    async with client_for(server, max_retries=2) as client:
        with pytest.raises(LLMStatusError) as info:
            await client.generate("x")
    assert len(server.requests) == 3
    assert info.value.status == 500
    assert "HTTP 500 after 3 attempt(s)" in str(info.value)
    assert "model crashed" in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, MutatorError)


async def test_client_errors_are_not_retried(stub: Callable[..., StubServer]) -> None:
    server = stub(lambda body: Reply(400, {"error": {"message": "bad model name"}}))
    async with client_for(server, max_retries=5) as client:
        with pytest.raises(LLMStatusError, match="HTTP 400 after 1 attempt"):
            await client.generate("x")
    assert len(server.requests) == 1


async def test_timeouts_are_retried_then_reported(stub: Callable[..., StubServer]) -> None:
    server = stub(lambda body: Reply(body=completion("late"), delay=1.0))
    async with client_for(server, timeout=0.2, max_retries=1) as client:
        with pytest.raises(LLMUnavailableError, match=r"timed out after 0\.2s; gave up after 2"):
            await client.generate("x")
    assert len(server.requests) == 2


async def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = OpenAICompatibleClient(
        "m", base_url=f"http://127.0.0.1:{port}/v1", api_key_env=None, max_retries=2,
        backoff_base=0.01,
    )  # fmt: skip
    with pytest.raises(LLMUnavailableError) as info:
        await client.generate("x")
    await client.aclose()
    assert "connection failed (ConnectError)" in str(info.value)
    assert "gave up after 3 attempt(s)" in str(info.value)
    assert info.value.url == f"http://127.0.0.1:{port}/v1/chat/completions"


async def test_auto_dialect_falls_back_to_json_object_and_remembers(
    stub: Callable[..., StubServer],
) -> None:
    rejection = {
        "detail": [
            {
                "type": "literal_error",
                "loc": ["body", "response_format", "type"],
                "msg": "Input should be 'text' or 'json_object'",
            }
        ]
    }

    def llama_like(body: dict[str, Any]) -> Reply:
        if body["response_format"]["type"] == "json_schema":
            return Reply(422, rejection)
        return Reply(body=completion("[]"))

    server = stub(llama_like)
    async with client_for(server, response_schema=UPDATES_JSON_SCHEMA) as client:
        assert await client.generate("one") == "[]"
        assert await client.generate("two") == "[]"
        assert client.schema_dialect == "json_object"
        assert client.last_call is not None
        assert client.last_call.response_format == "json_object"
    types = [r["response_format"]["type"] for r in server.requests]
    assert types == ["json_schema", "json_object", "json_object"]


async def test_fallback_also_follows_llama_cpp_python_500(stub: Callable[..., StubServer]) -> None:
    # llama-cpp-python 0.3.36 answers an unknown response_format type with a 500 naming it.
    message = "1 validation error: ('body', 'response_format', 'type') Input should be 'text'"
    server = stub(
        lambda body: (
            Reply(500, {"error": {"message": message}})
            if body["response_format"]["type"] == "json_schema"
            else Reply(body=completion("[]"))
        )
    )
    async with client_for(server, response_schema=UPDATES_JSON_SCHEMA, max_retries=0) as client:
        assert await client.generate("x") == "[]"
    assert [r["response_format"]["type"] for r in server.requests] == [
        "json_schema",
        "json_object",
    ]


async def test_the_updates_schema_goes_to_llama_cpp_as_it_is(
    stub: Callable[..., StubServer],
) -> None:
    server = stub([Reply(body=completion("[]"))])
    client = client_for(server, response_schema=UPDATES_JSON_SCHEMA, schema_dialect="json_object")
    async with client:
        await client.generate("x")
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_object"
    # Typed throughout, with a pattern llama.cpp's grammar converter can translate.
    assert sent["schema"] == {k: v for k, v in UPDATES_JSON_SCHEMA.items() if k != "$schema"}


async def test_other_schemas_are_made_safe_for_llama_cpp(stub: Callable[..., StubServer]) -> None:
    schema = {
        "type": "object",
        "properties": {
            "any": {"description": "untyped"},
            "code": {"type": "string", "pattern": r"^\d+\s$"},
            "word": {"type": "string", "pattern": "^[a-z]+$"},
            "loose": {"type": "string", "pattern": "[a-z]"},
        },
    }
    server = stub([Reply(body=completion("{}"))])
    client = client_for(server, response_schema=schema, schema_dialect="json_object")
    async with client:
        await client.generate("x")
    properties = server.requests[0]["response_format"]["schema"]["properties"]
    # An untyped "any JSON value" gets every type; patterns llama.cpp cannot translate go.
    assert set(properties["any"]["type"]) == {
        "string",
        "number",
        "integer",
        "boolean",
        "null",
        "array",
        "object",
    }
    assert "pattern" not in properties["code"]
    assert "pattern" not in properties["loose"]
    assert properties["word"]["pattern"] == "^[a-z]+$"
    assert schema["properties"]["code"]["pattern"] == r"^\d+\s$"  # not mutated


async def test_json_schema_dialect_wraps_a_root_array_for_openai(
    stub: Callable[..., StubServer],
) -> None:
    reply = json.dumps({"updates": [{"path": "a", "value": 1, "confidence": 0.9}]})
    server = stub([Reply(body=completion(reply))])
    async with client_for(server, response_schema=UPDATES_JSON_SCHEMA) as client:
        state = await LLMMutator(client).mutate(InterpretiveState(), StructuredInput("a=1", "m-1"))
    fmt = server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["updates"]
    assert schema["properties"]["updates"]["type"] == "array"
    # "inference" is optional and "value" untyped: not valid under OpenAI's strict mode.
    assert fmt["json_schema"]["strict"] is False
    best = state.best("a")
    assert best is not None
    assert (best.value, best.confidence, best.message_id) == (1, 0.9, "m-1")


async def test_strict_is_set_for_a_strict_compatible_schema(
    stub: Callable[..., StubServer],
) -> None:
    schema = {
        "type": "object",
        "properties": {"label": {"type": "string", "enum": ["yes", "no"]}},
        "required": ["label"],
        "additionalProperties": False,
    }
    server = stub([Reply(body=completion('{"label": "yes"}'))])
    async with client_for(server, response_schema=schema, schema_dialect="json_schema") as client:
        await client.generate("x")
    fmt = server.requests[0]["response_format"]["json_schema"]
    assert fmt["strict"] is True
    assert fmt["schema"] == schema


async def test_explicit_dialect_does_not_fall_back(stub: Callable[..., StubServer]) -> None:
    server = stub([Reply(422, {"detail": "response_format json_schema unsupported"})])
    async with client_for(
        server, response_schema=UPDATES_JSON_SCHEMA, schema_dialect="json_schema"
    ) as client:
        with pytest.raises(LLMStatusError, match="HTTP 422"):
            await client.generate("x")
    assert len(server.requests) == 1


async def test_api_key_is_sent_but_never_shown(
    stub: Callable[..., StubServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STATEVAL_TEST_KEY", SECRET)
    echo = {"error": {"message": f"Incorrect API key provided: {SECRET}. Bearer {SECRET}"}}
    server = stub([Reply(body=completion("fine")), Reply(401, echo)])
    calls: list[LLMCall] = []
    client = client_for(server, api_key_env="STATEVAL_TEST_KEY", on_call=calls.append)
    async with client:
        await client.generate("x")
        with pytest.raises(LLMStatusError) as info:
            await client.generate("x")
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
    shown = [repr(client), client.describe(), str(info.value), repr(info.value), info.value.detail]
    shown += [repr(calls[0]), str(info.value.args)]
    for text in shown:
        assert SECRET not in text
        assert SECRET[:12] not in text
    assert "check the API key in $STATEVAL_TEST_KEY" in str(info.value)
    assert "api_key=set" in repr(client)


def test_credentials_in_base_url_are_refused_without_being_shown() -> None:
    # httpx would send them as Basic auth in place of the bearer key (issue 11, defect 10).
    url = f"http://user:{SECRET}@127.0.0.1:9/v1"
    with pytest.raises(MutatorError, match="carries credentials") as info:
        OpenAICompatibleClient("m", base_url=url, api_key_env=None)
    assert SECRET not in str(info.value)
    assert "http://user" not in str(info.value)


async def test_a_refusal_is_a_response_error(stub: Callable[..., StubServer]) -> None:
    server = stub([Reply(body=completion(None, refusal="I can't help with that."))])
    async with client_for(server) as client:
        with pytest.raises(LLMResponseError, match="reply is a refusal: I can't help with that"):
            await client.generate("x")


async def test_a_non_completion_body_is_a_response_error(stub: Callable[..., StubServer]) -> None:
    server = stub([Reply(body="<html>proxy error</html>")])
    async with client_for(server) as client:
        with pytest.raises(LLMResponseError, match="is not a chat completion"):
            await client.generate("x")


async def test_concurrency_is_bounded(stub: Callable[..., StubServer]) -> None:
    server = stub(lambda body: Reply(body=completion("ok"), delay=0.1))
    async with client_for(server, max_concurrency=2) as client:
        replies = await asyncio.gather(*(client.generate(str(i)) for i in range(6)))
    assert replies == ["ok"] * 6
    assert server.max_in_flight == 2


def test_the_client_works_across_event_loops(stub: Callable[..., StubServer]) -> None:
    server = stub(lambda body: Reply(body=completion("ok")))
    client = client_for(server)

    async def once() -> str:
        try:
            return await client.generate("x")
        finally:
            await client.aclose()

    assert asyncio.run(once()) == "ok"
    assert asyncio.run(once()) == "ok"


async def test_truncated_output_fails_the_mutator_with_the_raw_text(
    stub: Callable[..., StubServer],
) -> None:
    server = stub([Reply(body=completion('[{"path": "registrant.name", "val'))])
    async with client_for(server) as client:
        with pytest.raises(MutatorOutputError) as info:
            await LLMMutator(client).mutate(InterpretiveState(), StructuredInput("x", "m-1"))
    assert info.value.raw == '[{"path": "registrant.name", "val'


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    client = OpenAICompatibleClient("m", api_key_env=None, backoff_base=1.0, backoff_max=5.0)
    for retry, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delays = {client._delay(retry, None) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1
    assert client._delay(1, 3.0) == 3.0
    assert client._delay(1, 60.0) == 5.0


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"model": ""}, "needs a model name"),
        ({"base_url": "localhost:8080"}, "must start with http"),
        ({"max_concurrency": 0}, "max_concurrency >= 1"),
        ({"schema_dialect": "xml"}, "schema_dialect must be"),
    ],
)
def test_invalid_settings_are_rejected(kwargs: dict[str, Any], problem: str) -> None:
    kwargs = {"model": "m", **kwargs}
    with pytest.raises(MutatorError, match=problem):
        OpenAICompatibleClient(**kwargs)


async def test_each_call_is_an_llm_span_under_the_current_span(
    stub: Callable[..., StubServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from stateval.tracing import SPAN_LLM, configure_tracing, mutator_call_span

    monkeypatch.setenv("STATEVAL_TEST_KEY", SECRET)
    exporter = InMemorySpanExporter()
    tracing = configure_tracing("test", exporter=exporter)
    server = stub([Reply(body=completion("[]"))])
    client = client_for(
        server, api_key_env="STATEVAL_TEST_KEY", tracer=tracing.tracer, max_tokens=32
    )
    async with client:
        with mutator_call_span(tracing.tracer, case_id="c1", input="hi"):
            await client.generate("extract")
    tracing.shutdown()
    spans = {span.name: span for span in exporter.get_finished_spans()}
    llm = spans[SPAN_LLM]
    attrs = dict(llm.attributes or {})
    assert attrs["openinference.span.kind"] == "LLM"
    assert attrs["llm.model_name"] == "stub-model"
    assert attrs["llm.input_messages.0.message.content"] == "extract"
    assert attrs["llm.output_messages.0.message.content"] == "[]"
    assert attrs["llm.token_count.prompt"] == 11
    assert attrs["llm.token_count.completion"] == 7
    assert attrs["llm.token_count.total"] == 18
    assert json.loads(str(attrs["llm.invocation_parameters"])) == {
        "temperature": 0.0,
        "max_tokens": 32,
    }
    assert llm.parent is not None
    assert llm.parent.span_id == spans["stateval.mutate"].context.span_id
    assert all(SECRET not in str(value) for value in attrs.values())


async def test_complete_takes_a_schema_and_messages_per_call(
    stub: Callable[..., StubServer],
) -> None:
    server = stub([Reply(body=completion('{"ok": true}')), Reply(body=completion("plain"))])
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "ok?"}]
    async with client_for(
        server, response_schema=UPDATES_JSON_SCHEMA, schema_dialect="json_object"
    ) as client:
        call = await client.complete(messages, response_schema=schema)
        assert (call.output, call.prompt, call.system_prompt) == ('{"ok": true}', "ok?", "be brief")
        assert call.response_format == "json_object"
        unconstrained = await client.complete("hi", response_schema=None)
    first, second = server.requests
    assert first["messages"] == messages
    assert first["response_format"] == {"type": "json_object", "schema": schema}
    assert "response_format" not in second
    assert unconstrained.response_format is None
    assert client.response_schema == UPDATES_JSON_SCHEMA  # the client's own is unchanged


def test_the_judge_reaches_a_llama_cpp_like_server_through_the_client(
    stub: Callable[..., StubServer],
) -> None:
    # llama-cpp-python 0.3.x answers OpenAI's json_schema form with a 500 naming
    # response_format; phoenix's openai adapter gives up there, OpenAICompatibleLLM switches.
    def server_reply(body: dict[str, Any]) -> Reply:
        if body["response_format"]["type"] == "json_schema":
            return Reply(
                500, {"error": {"message": "response_format.type: 'text' or 'json_object'"}}
            )
        verdict = {"explanation": "veggie is vegetarian", "label": "equivalent"}
        return Reply(body=completion(json.dumps(verdict)))

    server = stub(server_reply)
    llm = OpenAICompatibleLLM(client_for(server, max_retries=0))
    assert isinstance(llm, LLM)
    judge = FieldJudge(llm)
    verdict = judge.judge("preferences.diet", "same diet", "vegetarian", "veggie")
    assert (verdict.label, verdict.explanation) == ("equivalent", "veggie is vegetarian")
    sent = server.requests[-1]["response_format"]
    assert sent["type"] == "json_object"
    assert sent["schema"]["properties"]["label"]["enum"] == ["equivalent", "different"]
    assert "vegetarian" in server.requests[-1]["messages"][0]["content"]
    assert llm.client.schema_dialect == "json_object"  # learnt, and kept for later calls


async def test_the_async_judge_records_a_failing_server_as_a_judge_error(
    stub: Callable[..., StubServer],
) -> None:
    server = stub([Reply(503, {"error": "overloaded"}), Reply(body=completion("not json"))])
    judge = FieldJudge(OpenAICompatibleLLM(client_for(server, max_retries=0)))
    failed = await judge.ajudge("a", None, 1, 2)
    assert failed.label == "judge_error"
    assert "HTTP 503" in failed.explanation
    garbled = await judge.ajudge("a", None, 1, 3)
    assert garbled.label == "judge_error"
    assert "reply is not JSON" in garbled.explanation
    await judge.aclose()
