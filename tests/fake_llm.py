"""A fake OpenAI-compatible chat completions server with named fault modes, for the fault tests.

It listens on 127.0.0.1 (a free port) in a thread of the test process, so both in-process
clients and ``stateval`` subprocesses reach it. The fault mode of a request is named in its
prompt as ``FAULT:<mode>`` (the first one found in the messages); without one it answers
``ok``. `FAULT_MODES` lists every mode with what it does; each is what a real server, proxy or
model has been seen to do.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FAULT_MODES", "FakeLLM", "fake_llm", "updates"]

_FAULT = re.compile(r"FAULT:([a-z0-9_]+)")


def updates(*items: tuple[str, Any, float]) -> str:
    """A model reply: the JSON array of ``(path, value, confidence)`` updates."""
    return json.dumps([{"path": p, "value": v, "confidence": c} for p, v, c in items])


def _completion(content: Any, **message: Any) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, **message},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
        }
    ).encode()


_OK = updates(("n", 5, 0.9), ("name", "Ada", 0.9))

# mode -> (what it does, how the handler answers). Content modes are a 200 completion whose
# message content is the given text; the others drive the socket themselves.
_CONTENT: dict[str, tuple[str, str]] = {
    "ok": ("a valid reply", _OK),
    "fenced": ("the valid reply in a ```json fence with prose", f"Sure:\n```json\n{_OK}\n```"),
    "prose": ("prose, no JSON", "I think the name is Ada."),
    "empty": ("an empty message", ""),
    "wrong_shape": ("a JSON object that is not a list of updates", '{"n": 5}'),
    "ambiguous": ("two different arrays in prose", f"{_OK} or maybe {updates(('n', 6, 0.5))}"),
    "surrogate_value": (
        "a lone surrogate escape in a value",
        '[{"path": "name", "value": "\\ud800", "confidence": 0.9}]',
    ),
    "surrogate_path": (
        "a lone surrogate escape in a path",
        '[{"path": "na\\udc80me", "value": "Ada", "confidence": 0.9}]',
    ),
    "big_int": ("a 400-digit integer on a numeric field", updates(("n", 10**400, 0.9))),
    "huge_int": (
        "a 5000-digit integer (past Python's int parsing limit)",
        '[{"path": "n", "value": ' + "9" * 5000 + ', "confidence": 0.9}]',
    ),
    "float_overflow": (
        "1e400, which parses as infinity",
        '[{"path":"n","value":1e400,"confidence":1}]',
    ),
    "nan": ("NaN as a value", '[{"path": "n", "value": NaN, "confidence": 0.9}]'),
    "deep": (
        "arrays nested 100,000 deep",
        '[{"path":"n","value":' + "[" * 100_000 + "]" * 100_000 + ',"confidence":1}]',
    ),
    "bad_confidence": ("confidence 1.5", updates(("n", 5, 1.5))),
    "bad_path": ("an empty path segment", updates(("a..b", 5, 0.9))),
    "unknown_key": (
        "an update with an unknown key",
        '[{"path":"n","value":5,"confidence":1,"why":"x"}]',
    ),
    "control_chars": ("control characters in a value", updates(("name", "A\x00d\x1ba", 0.9))),
    "long_text": ("a 2 MB string value", updates(("name", "x" * 2_000_000, 0.9))),
    "many_updates": (
        "50,000 updates",
        json.dumps([{"path": f"f{i}", "value": i, "confidence": 0.5} for i in range(50_000)]),
    ),
}

_OTHER: dict[str, str] = {
    "trickle": "a valid reply sent one byte every 0.5 s",
    "hang": "accepts the request and never answers",
    "hang_after_headers": "sends 200 and headers, then nothing",
    "close": "closes the connection without answering",
    "reset_mid_body": "sends part of the body, then closes",
    "http_500": "HTTP 500 every time",
    "http_503_then_ok": "HTTP 503 once per case, then a valid reply",
    "http_429_then_ok": "HTTP 429 with Retry-After: 0 once per case, then a valid reply",
    "http_400": "HTTP 400 (not retried)",
    "http_401_echo": "HTTP 401 whose body echoes the Authorization header it got",
    "html": "HTTP 200 with an HTML page",
    "truncated_json": "HTTP 200 with a cut-off JSON body",
    "no_choices": "HTTP 200 with an empty choices list",
    "null_content": "HTTP 200 with content null",
    "refusal": "HTTP 200 with a refusal and no content",
}

FAULT_MODES: dict[str, str] = {mode: what for mode, (what, _) in _CONTENT.items()} | _OTHER
"""Every fault mode and what the server does in it."""


class FakeLLM:
    """The server (see the module docstring). Use `fake_llm` to start and stop it.

    Attributes:
        url: The API root to give a client (``http://127.0.0.1:PORT/v1``).
        requests: Mode -> how many requests asked for it.
        authorizations: Every ``Authorization`` header received.
    """

    def __init__(self, *, trickle_interval: float = 0.5) -> None:
        self.requests: Counter[str] = Counter()
        self.authorizations: list[str] = []
        self.trickle_interval = trickle_interval
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                mode = fake._mode(body)
                with fake._lock:
                    fake.requests[mode] += 1
                    count = fake.requests[mode]
                    if "Authorization" in self.headers:
                        fake.authorizations.append(self.headers["Authorization"])
                fake._answer(self, mode, count)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up and hung up is expected here

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @staticmethod
    def _mode(body: dict[str, Any]) -> str:
        for message in body.get("messages", []):
            found = _FAULT.search(str(message.get("content", "")))
            if found:
                return found.group(1)
        return "ok"

    def _answer(self, h: BaseHTTPRequestHandler, mode: str, count: int) -> None:
        if mode in _CONTENT:
            return _send(h, 200, _completion(_CONTENT[mode][1]))
        if mode == "trickle":
            payload = _completion(_OK)
            _headers(h, 200, len(payload))
            for i in range(len(payload)):
                if self.stopping.wait(self.trickle_interval):
                    return None
                h.wfile.write(payload[i : i + 1])
                h.wfile.flush()
            return None
        if mode == "hang":
            self.stopping.wait()
            return None
        if mode == "hang_after_headers":
            _headers(h, 200, 1000)
            self.stopping.wait()
            return None
        if mode == "close":
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return None
        if mode == "reset_mid_body":
            _headers(h, 200, 1000)
            h.wfile.write(b'{"choices": [')
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return None
        if mode == "http_500":
            return _send(h, 500, b'{"error": {"message": "internal"}}')
        if mode == "http_503_then_ok":
            if count % 2 == 1:
                return _send(h, 503, b'{"error": "busy"}')
            return _send(h, 200, _completion(_OK))
        if mode == "http_429_then_ok":
            if count % 2 == 1:
                return _send(h, 429, b'{"error": "slow down"}', {"Retry-After": "0"})
            return _send(h, 200, _completion(_OK))
        if mode == "http_400":
            return _send(h, 400, b'{"error": {"message": "bad request"}}')
        if mode == "http_401_echo":
            echoed = json.dumps({"error": f"invalid credentials: {h.headers.get('Authorization')}"})
            return _send(h, 401, echoed.encode())
        if mode == "html":
            return _send(h, 200, b"<html><body>502 Bad Gateway</body></html>", ctype="text/html")
        if mode == "truncated_json":
            return _send(h, 200, b'{"choices": [{"message": {"content": "[')
        if mode == "no_choices":
            return _send(h, 200, b'{"choices": []}')
        if mode == "null_content":
            return _send(h, 200, _completion(None))
        if mode == "refusal":
            return _send(h, 200, _completion(None, refusal="I cannot help with that."))
        return _send(h, 404, b'{"error": "unknown fault mode"}')


def _headers(
    h: BaseHTTPRequestHandler, status: int, length: int, ctype: str = "application/json"
) -> None:
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(length))
    h.end_headers()
    h.wfile.flush()


def _send(
    h: BaseHTTPRequestHandler,
    status: int,
    payload: bytes,
    headers: dict[str, str] | None = None,
    ctype: str = "application/json",
) -> None:
    h.send_response(status)
    for key, value in (headers or {}).items():
        h.send_header(key, value)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(payload)))
    h.end_headers()
    h.wfile.write(payload)
    h.wfile.flush()


@contextmanager
def fake_llm(**kwargs: Any) -> Iterator[FakeLLM]:
    """Start a `FakeLLM`; stop it (and release every hanging handler) on exit."""
    fake = FakeLLM(**kwargs)
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.stopping.set()
        fake.server.shutdown()
        fake.server.server_close()
        fake.thread.join()


def wait_until(predicate: Callable[[], bool], polls: int = 400, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it holds (True) or ``polls`` run out (False)."""
    for _ in range(polls):
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
