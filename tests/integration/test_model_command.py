"""`stateval model serve` and `stateval model stop` with the real packaged model."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from stateval.local_model import LOCAL_MODEL_ALIAS, local_server_available

pytestmark = pytest.mark.llm

STATEVAL = [str(Path(sys.executable).with_name("stateval"))]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_runs_in_the_foreground_until_stop_ends_it() -> None:
    if not local_server_available():
        if os.environ.get("CI"):
            pytest.fail("CI must install llama-cpp-python[server] (see .ci/run)")
        pytest.skip("llama_cpp.server is not installed")
    port = _free_port()
    with subprocess.Popen(
        [*STATEVAL, "model", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as serve:
        try:
            _serve_then_stop(serve, port)
        finally:
            if serve.poll() is None:
                serve.kill()


def _serve_then_stop(serve: subprocess.Popen[str], port: int) -> None:
    assert serve.stderr is not None
    ready = None
    for line in serve.stderr:  # the server's own log comes first; ends if serve exits
        ready = re.search(r"^serving (\S+) at (\S+) \(pid (\d+)\)", line)
        if ready:
            break
    assert ready is not None, f"serve exited with {serve.wait()}"
    model, url, pid = ready.group(1), ready.group(2), int(ready.group(3))
    assert (model, url) == (LOCAL_MODEL_ALIAS, f"http://127.0.0.1:{port}/v1")
    assert httpx.get(f"{url}/models", timeout=30).status_code == 200

    refused = subprocess.run(
        [*STATEVAL, "model", "stop", str(serve.pid)], capture_output=True, text=True
    )
    assert refused.returncode == 2
    assert f"process {serve.pid} is not a llama_cpp server" in refused.stderr
    assert serve.poll() is None

    stopped = subprocess.run([*STATEVAL, "model", "stop", str(pid)], capture_output=True, text=True)
    assert (stopped.returncode, stopped.stdout.strip()) == (0, f"stopped {pid}")
    serve.stderr.read()
    assert serve.wait() == 0
