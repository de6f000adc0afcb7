"""The embedded Phoenix server: started on demand, reused across runs, run from its own environment.

The Phoenix *server* package makes any ``import phoenix.*`` take 12-14 s, so it never enters
stateval's environment. `EmbeddedPhoenix` runs the ``phoenix`` executable of a separate virtual
environment (provisioned once under a per-user cache directory, or named by
``STATEVAL_PHOENIX_BIN``) as a detached process with its data under ``<root>/phoenix/``, and
records it in ``<root>/phoenix/server.json`` so later runs reuse it.

Example:
    >>> server = EmbeddedPhoenix(Path(".stateval"))   # doctest: +SKIP
    >>> url = server.ensure_running()                   # doctest: +SKIP
    >>> server.stop()                                   # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from stateval.errors import PhoenixUnavailableError
from stateval.server._provision import Printer, locked, phoenix_executable, stderr_printer

__all__ = ["EmbeddedPhoenix", "PhoenixServerStatus"]

_PREFERRED_PORT = 6006
_HOST = "127.0.0.1"
# Variables of stateval's own process that must not leak into the server's interpreter, and a
# database URL that would move the embedded (SQLite, project-local) data somewhere else.
_DROPPED_ENV = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PHOENIX_SQL_DATABASE_URL")

# -- the running server ----------------------------------------------------------------------


class _ServerRecord(BaseModel):
    """What ``server.json`` holds about the server this project started."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pid: int
    port: int
    grpc_port: int
    url: str
    started_at: datetime
    executable: str


@dataclass(frozen=True, slots=True)
class PhoenixServerStatus:
    """The embedded server as `EmbeddedPhoenix.status` finds it.

    Attributes:
        running: A recorded server process is alive and answers its health check.
        url: Its base URL when one is recorded.
        pid: Its process id when one is recorded.
        started_at: When it was started.
        data_dir: Where its data lives (``<root>/phoenix``).
        log_file: Its combined stdout / stderr.
    """

    running: bool
    url: str | None
    pid: int | None
    started_at: datetime | None
    data_dir: Path
    log_file: Path


class EmbeddedPhoenix:
    """A local Phoenix server with its data under ``<root>/phoenix/``, shared by later runs.

    Args:
        root: The project's stateval folder.
        startup_timeout: Seconds to wait for a new server to become healthy.
        out: Where progress lines go (stderr by default).
    """

    def __init__(
        self,
        root: Path = Path(".stateval"),
        *,
        startup_timeout: float = 180.0,
        out: Printer = stderr_printer,
    ) -> None:
        self.root = root.expanduser().resolve()
        self.data_dir = self.root / "phoenix"
        self.state_file = self.data_dir / "server.json"
        self.log_file = self.data_dir / "server.log"
        self.startup_timeout = startup_timeout
        self._out = out

    def ensure_running(self) -> str:
        """Return the URL of a healthy server, starting one (and its environment) if needed.

        Raises:
            PhoenixUnavailableError: The server exited or stayed unhealthy (the log tail says
                why), or its environment could not be provisioned.
        """
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with locked(self.data_dir / "server.lock"):
            record = self._read_record()
            if record is not None and _is_phoenix(record.pid):
                if _healthy(record.url):
                    return record.url
                self._wait_healthy(record, deadline=time.monotonic() + self.startup_timeout)
                return record.url
            self.state_file.unlink(missing_ok=True)
            return self._start()

    def stop(self) -> bool:
        """Stop the recorded server; True if one was running.

        Only the recorded pid is signalled, and only while it is still a Phoenix process.
        """
        with locked(self.data_dir / "server.lock") if self.data_dir.exists() else _nolock():
            record = self._read_record()
            if record is None:
                return False
            stopped = False
            if _is_phoenix(record.pid):
                _terminate(record.pid)
                stopped = True
            self.state_file.unlink(missing_ok=True)
            return stopped

    def status(self) -> PhoenixServerStatus:
        """Report whether the recorded server is alive and healthy."""
        record = self._read_record()
        running = record is not None and _is_phoenix(record.pid) and _healthy(record.url)
        return PhoenixServerStatus(
            running=running,
            url=record.url if record else None,
            pid=record.pid if record else None,
            started_at=record.started_at if record else None,
            data_dir=self.data_dir,
            log_file=self.log_file,
        )

    # -- internals -----------------------------------------------------------------------------

    def _read_record(self) -> _ServerRecord | None:
        try:
            return _ServerRecord.model_validate_json(self.state_file.read_text())
        except (OSError, ValidationError):
            return None

    def _start(self) -> str:
        executable = phoenix_executable(out=self._out)
        port = _PREFERRED_PORT if _port_free(_PREFERRED_PORT) else _free_port()
        grpc_port = _free_port()
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        env |= {
            "PHOENIX_WORKING_DIR": str(self.data_dir),
            "PHOENIX_HOST": _HOST,
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
        }
        pid = _spawn_detached([str(executable), "serve"], env, self.log_file)
        url = f"http://{_HOST}:{port}"
        record = _ServerRecord(
            pid=pid,
            port=port,
            grpc_port=grpc_port,
            url=url,
            started_at=datetime.now(UTC),
            executable=str(executable),
        )
        self.state_file.write_text(record.model_dump_json(indent=2) + "\n")
        self._out(f"Starting Phoenix at {url} (data in {self.data_dir}) ...")
        try:
            self._wait_healthy(record, deadline=time.monotonic() + self.startup_timeout)
        except PhoenixUnavailableError:
            if _alive(pid):
                _terminate(pid)
            self.state_file.unlink(missing_ok=True)
            raise
        return url

    def _wait_healthy(self, record: _ServerRecord, *, deadline: float) -> None:
        while time.monotonic() < deadline:
            if not _alive(record.pid):
                raise PhoenixUnavailableError(
                    f"Phoenix server (pid {record.pid}) exited during start-up; "
                    f"log {self.log_file}:\n{self._log_tail()}"
                )
            if _healthy(record.url):
                return
            time.sleep(0.25)
        raise PhoenixUnavailableError(
            f"Phoenix server at {record.url} not healthy after {self.startup_timeout:.0f} s; "
            f"log {self.log_file}:\n{self._log_tail()}"
        )

    def _log_tail(self, chars: int = 2_000) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"


# -- processes, ports and locks ----------------------------------------------------------------


def _spawn_detached(argv: list[str], env: dict[str, str], log_file: Path) -> int:
    """Start ``argv`` in a new session with output to ``log_file``; no Popen object outlives it."""
    log_fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        return os.posix_spawn(
            argv[0],
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, log_fd, 1),
                (os.POSIX_SPAWN_DUP2, log_fd, 2),
            ],
            setsid=True,
        )
    except OSError as exc:
        raise PhoenixUnavailableError(f"cannot start {argv[0]}: {exc}") from exc
    finally:
        os.close(log_fd)


def _alive(pid: int) -> bool:
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)  # our own child: collect it if it exited
        if reaped == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _command_line(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return [part.decode(errors="replace") for part in raw.split(b"\0") if part]
    except OSError:
        pass
    try:
        result = subprocess.run(
            ["ps", "-o", "args=", "-p", str(pid)], capture_output=True, text=True, check=False
        )
    except OSError:
        return []
    return result.stdout.split()


def _is_phoenix(pid: int) -> bool:
    """True while ``pid`` is a live ``phoenix serve`` process (not a reused pid)."""
    if not _alive(pid):
        return False
    args = _command_line(pid)
    return "serve" in args and any("phoenix" in Path(arg).name for arg in args)


def _terminate(pid: int, grace: float = 20.0) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    while _alive(pid) and time.monotonic() < deadline + 5:
        time.sleep(0.1)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((_HOST, port))
        except OSError:
            return False
        return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((_HOST, 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _nolock() -> Iterator[None]:
    yield
