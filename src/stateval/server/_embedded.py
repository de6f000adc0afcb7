"""The embedded Phoenix server: started on demand, reused across runs, run from its own environment.

The Phoenix *server* package makes any ``import phoenix.*`` take 12-14 s, so it never enters
stateval's environment. `EmbeddedPhoenix` runs the ``phoenix`` executable of a separate virtual
environment (provisioned once under a per-user cache directory, or named by
``STATEVAL_PHOENIX_BIN``) as a detached process. There is one per user: its data lives in the
user's data directory (`phoenix_home`: ``~/.local/share/stateval/phoenix`` on Linux, via
``platformdirs``; ``STATEVAL_PHOENIX_HOME`` moves it), and ``server.json`` there records the
running server, so every run, from any folder, finds and reuses it.

Example:
    >>> server = EmbeddedPhoenix()          # doctest: +SKIP
    >>> url = server.ensure_running()       # doctest: +SKIP
    >>> server.stop()                       # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import platformdirs
from pydantic import BaseModel, ConfigDict, ValidationError

from stateval.errors import PhoenixUnavailableError
from stateval.server._provision import Printer, locked, phoenix_executable, stderr_printer

__all__ = [
    "ENV_PHOENIX_HOME",
    "ENV_PHOENIX_PORT",
    "EmbeddedPhoenix",
    "PhoenixServerStatus",
    "phoenix_home",
]

ENV_PHOENIX_HOME = "STATEVAL_PHOENIX_HOME"
"""Environment variable naming the embedded server's data folder (default: `phoenix_home`)."""
ENV_PHOENIX_PORT = "STATEVAL_PHOENIX_PORT"
"""Environment variable naming the port a new local server prefers (default 6006; 0: any free
port)."""


def phoenix_home() -> Path:
    """The embedded server's data folder: ``$STATEVAL_PHOENIX_HOME``, else ``phoenix`` in the
    user's data directory (``platformdirs.user_data_dir("stateval")``)."""
    override = os.environ.get(ENV_PHOENIX_HOME)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("stateval", appauthor=False)) / "phoenix"


_PREFERRED_PORT = 6006
_START_ATTEMPTS = 3
_START_PROGRESS_EVERY = 10.0
_HOST = "127.0.0.1"
# Variables of stateval's own process that must not leak into the server's interpreter, and a
# database URL that would move the embedded (SQLite, project-local) data somewhere else.
_DROPPED_ENV = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PHOENIX_SQL_DATABASE_URL")

# -- the running server ----------------------------------------------------------------------


class _ServerRecord(BaseModel):
    """What ``server.json`` holds about the running server."""

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
        data_dir: Where its data lives.
        log_file: Its combined stdout / stderr.
        version: The server's ``arize-phoenix`` version, when it is running.
    """

    running: bool
    url: str | None
    pid: int | None
    started_at: datetime | None
    data_dir: Path
    log_file: Path
    version: str | None = None

    @property
    def uptime(self) -> float | None:
        """Seconds since the server started, when it is running."""
        if not self.running or self.started_at is None:
            return None
        return max(0.0, (datetime.now(UTC) - self.started_at).total_seconds())


class EmbeddedPhoenix:
    """The user's local Phoenix server, its data in ``data_dir``, shared by every later run.

    Args:
        data_dir: Its data folder (default: `phoenix_home`, one per user).
        startup_timeout: Seconds to wait for a new server to become healthy.
        out: Where progress lines go (stderr by default).
    """

    def __init__(
        self,
        data_dir: Path | None = None,
        *,
        startup_timeout: float = 180.0,
        out: Printer = stderr_printer,
    ) -> None:
        self.data_dir = (data_dir or phoenix_home()).expanduser().resolve()
        self.state_file = self.data_dir / "server.json"
        self.log_file = self.data_dir / "server.log"
        self.startup_timeout = startup_timeout
        self._out = out

    def ensure_running(self, port: int | None = None) -> str:
        """Return the URL of a healthy server, starting one (and its environment) if needed.

        Args:
            port: The port a new server listens on (default: 6006 when free, else any free
                one). A server already running on another port is an error: stop it first.

        Raises:
            PhoenixUnavailableError: The server exited or stayed unhealthy (the log tail says
                why), ``port`` is taken, or the environment could not be provisioned.
        """
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with locked(self.data_dir / "server.lock"):
            record = self._read_record()
            if record is not None and _is_phoenix(record.pid):
                if port is not None and record.port != port:
                    raise PhoenixUnavailableError(
                        f"the local Phoenix already runs at {record.url} (pid {record.pid}); "
                        f"`stateval phoenix stop` first to start it on port {port}"
                    )
                if _healthy(record.url) and _listens(record.pid, record.port) is not False:
                    return record.url
                try:
                    self._wait_healthy(record, deadline=time.monotonic() + self.startup_timeout)
                    return record.url
                except _PortTaken:
                    pass  # it lost its port to another process: start a new one
            self.state_file.unlink(missing_ok=True)
            return self._start(port)

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
        """Report whether the recorded server is alive and healthy, and its version."""
        record = self._read_record()
        running = record is not None and _is_phoenix(record.pid) and _healthy(record.url)
        return PhoenixServerStatus(
            running=running,
            url=record.url if record else None,
            pid=record.pid if record else None,
            started_at=record.started_at if record else None,
            data_dir=self.data_dir,
            log_file=self.log_file,
            version=_version(record.url) if running and record else None,
        )

    # -- internals -----------------------------------------------------------------------------

    def _read_record(self) -> _ServerRecord | None:
        try:
            return _ServerRecord.model_validate_json(self.state_file.read_text())
        except (OSError, ValidationError):
            return None

    def _start(self, port: int | None) -> str:
        if port is not None and not _port_free(port):
            raise PhoenixUnavailableError(f"port {port} on {_HOST} is in use; pick another")
        preferred = _preferred_port() if port is None else port
        executable = phoenix_executable(out=self._out)  # may take a while the first time
        for attempt in range(_START_ATTEMPTS):
            chosen = port
            if chosen is None:
                free = attempt == 0 and preferred and _port_free(preferred)
                chosen = preferred if free else _free_port()
            try:
                return self._spawn(executable, chosen)
            except _PortTaken:
                if port is not None or attempt == _START_ATTEMPTS - 1:
                    raise PhoenixUnavailableError(
                        f"port {chosen} on {_HOST} was taken by another process while Phoenix "
                        f"started; log {self.log_file}:\n{self._log_tail()}"
                    ) from None
                self._out(f"Port {chosen} was taken meanwhile; trying another ...")
        raise AssertionError("unreachable")

    def _spawn(self, executable: Path, port: int) -> str:
        grpc_port = _free_port()
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        env |= {
            "PHOENIX_WORKING_DIR": str(self.data_dir),
            "PHOENIX_HOST": _HOST,
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
        }
        pid = _spawn_detached(_serve_argv(Path(executable)), env, self.log_file)
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
        except (PhoenixUnavailableError, _PortTaken):
            if _alive(pid):
                _terminate(pid)
            self.state_file.unlink(missing_ok=True)
            raise
        return url

    def _wait_healthy(self, record: _ServerRecord, *, deadline: float) -> None:
        """Wait until the recorded process itself serves a healthy Phoenix at its URL.

        A health check alone is not enough: another server that took the port first would
        answer it. The process must also be the one listening on the port (checked through
        ``/proc`` where there is one).

        Raises:
            _PortTaken: The process exited because its port was in use.
            PhoenixUnavailableError: It exited for another reason, or stayed unhealthy.
        """
        started = time.monotonic()
        shown = started
        while time.monotonic() < deadline:
            if not _alive(record.pid):
                tail = self._log_tail()
                if "address already in use" in tail:
                    raise _PortTaken(record.port)
                raise PhoenixUnavailableError(
                    f"Phoenix server (pid {record.pid}) exited during start-up; "
                    f"log {self.log_file}:\n{tail}"
                )
            if _healthy(record.url) and _listens(record.pid, record.port) is not False:
                return
            now = time.monotonic()
            if now - shown >= _START_PROGRESS_EVERY:
                shown = now
                self._out(f"  ... still starting ({now - started:.0f} s; log {self.log_file})")
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


def _serve_argv(executable: Path) -> list[str]:
    """The command that runs ``phoenix serve`` with every port on loopback.

    Phoenix binds its gRPC collector to all interfaces whatever ``PHOENIX_HOST`` says, so the
    server environment's interpreter runs ``_loopback_serve.py``, which binds it to
    ``127.0.0.1`` and then runs the ``phoenix`` script. The interpreter is the one the script
    names (its ``#!`` line, or ``python`` beside it in a virtual environment).
    """
    found = shutil.which(str(executable))
    script = Path(found) if found else executable
    python = _script_interpreter(script)
    if python is None:  # not a Python console script (a wrapper): run it as it is
        return [str(executable), "serve"]
    launcher = Path(__file__).with_name("_loopback_serve.py")
    return [str(python), str(launcher), str(script), "serve"]


def _script_interpreter(executable: Path) -> Path | None:
    """The interpreter a console script runs on: its ``#!`` line's, else ``python`` beside it
    (pip writes a ``/bin/sh`` trampoline instead of ``#!`` for very long paths)."""
    if not executable.is_absolute():
        return None
    try:
        with executable.open("rb") as handle:
            first = handle.readline(1024)
    except OSError:
        return None
    if first.startswith(b"#!"):
        words = first[2:].decode(errors="replace").split()
        candidate = Path(words[0]) if words else None
        if candidate is not None and candidate.name.startswith("python") and candidate.is_file():
            return candidate
    beside = executable.parent / "python"
    if first.startswith(b"#!") and beside.is_file() and os.access(beside, os.X_OK):
        return beside
    return None


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


def _preferred_port() -> int:
    """``$STATEVAL_PHOENIX_PORT`` (0: any free port), else 6006."""
    raw = os.environ.get(ENV_PHOENIX_PORT)
    if not raw:
        return _PREFERRED_PORT
    try:
        port = int(raw)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise PhoenixUnavailableError(
            f"{ENV_PHOENIX_PORT}={raw} is not a port number (0 means any free port)"
        )
    return port


class _PortTaken(Exception):
    """The server exited at start-up because another process took its port first."""


def _listens(pid: int, port: int) -> bool | None:
    """Whether ``pid`` holds the socket listening on ``port`` (None where ``/proc`` cannot
    tell: another OS, or another user's process)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and fields[1].endswith(f":{port:04X}"):
                inodes.add(fields[9])
    if not inodes:
        return None
    try:
        links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
    except OSError:
        return None
    return any(link == f"socket:[{inode}]" for link in links for inode in inodes)


def _version(url: str) -> str | None:
    try:
        response = httpx.get(f"{url}/arize_phoenix_version", timeout=2.0)
    except httpx.HTTPError:
        return None
    text = response.text.strip()
    return text if response.status_code == 200 and text else None


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((_HOST, port))
        except OSError:
            return False
    # A server on [::]:port with IPV6_V6ONLY does not stop the bind above, yet answers
    # http://localhost:port; a health check would then reach it instead of ours.
    for family, address in ((socket.AF_INET6, "::1"), (socket.AF_INET, _HOST)):
        try:
            with socket.socket(family) as probe:
                probe.settimeout(0.5)
                probe.connect((address, port))
        except OSError:  # refused, or no IPv6 on this machine
            continue
        return False
    return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((_HOST, 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _nolock() -> Iterator[None]:
    yield
