"""The Phoenix server's own environment: where it lives and how it is provisioned.

The server package (``arize-phoenix``) never enters stateval's environment. It is installed once
into a virtual environment under a per-user cache directory (``$STATEVAL_PHOENIX_SERVER_ENV``
overrides it), or ``$STATEVAL_PHOENIX_BIN`` names an existing ``phoenix`` executable and nothing
is installed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from stateval.errors import PhoenixUnavailableError

__all__ = [
    "ENV_SERVER_BIN",
    "ENV_SERVER_ENV",
    "PHOENIX_SERVER_VERSION",
    "Printer",
    "locked",
    "phoenix_executable",
    "provision_server_env",
    "provisioning_commands",
    "server_env_dir",
    "stderr_printer",
]

PHOENIX_SERVER_VERSION = "20.26.1"
"""The ``arize-phoenix`` version the embedded server is provisioned with."""

ENV_SERVER_BIN = "STATEVAL_PHOENIX_BIN"
ENV_SERVER_ENV = "STATEVAL_PHOENIX_SERVER_ENV"

_MARKER = ".stateval-provisioned"
_LOG = "provision.log"

Printer = Callable[[str], None]


def stderr_printer(line: str) -> None:
    """Print a progress line to stderr."""
    print(line, file=sys.stderr, flush=True)


# -- the server's own environment ------------------------------------------------------------


def server_env_dir() -> Path:
    """Where the server environment lives: ``$STATEVAL_PHOENIX_SERVER_ENV``, else a cache dir."""
    override = os.environ.get(ENV_SERVER_ENV)
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "stateval" / f"phoenix-server-{PHOENIX_SERVER_VERSION}"


def _env_bin(env_dir: Path, name: str) -> Path:
    if os.name == "nt":
        return env_dir / "Scripts" / f"{name}.exe"
    return env_dir / "bin" / name


def provisioning_commands(
    env_dir: Path, *, python: str | None = None, uv: str | None = None
) -> list[list[str]]:
    """The commands that create the server environment and install ``arize-phoenix`` into it.

    Args:
        env_dir: The environment to create.
        python: Interpreter the environment is based on (default: the running one).
        uv: Path of a ``uv`` executable; when given, uv creates and fills the environment
            (much faster than pip).
    """
    python = python or sys.executable
    requirement = f"arize-phoenix=={PHOENIX_SERVER_VERSION}"
    env_python = str(_env_bin(env_dir, "python"))
    if uv:
        return [
            [uv, "venv", "--quiet", "--python", python, str(env_dir)],
            [uv, "pip", "install", "--quiet", "--python", env_python, requirement],
        ]
    return [
        [python, "-m", "venv", str(env_dir)],
        [
            env_python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            requirement,
        ],
    ]


def provision_server_env(env_dir: Path | None = None, *, out: Printer = stderr_printer) -> Path:
    """Create the server environment if it is not complete yet; return its ``phoenix`` executable.

    Takes a few minutes the first time (it downloads and installs ``arize-phoenix`` and its
    dependencies); later calls return at once. One line tells the user what is happening; the
    installers' own output goes to ``<env_dir>/provision.log``.

    Raises:
        PhoenixUnavailableError: An installation step failed (the message ends with the last
            lines of the log).
    """
    env_dir = env_dir or server_env_dir()
    executable = _env_bin(env_dir, "phoenix")
    marker = env_dir / _MARKER
    log = env_dir / _LOG
    env_dir.parent.mkdir(parents=True, exist_ok=True)
    with locked(env_dir.parent / f".{env_dir.name}.lock"):
        if _provisioned(marker) and executable.exists():
            return executable
        out(
            f"Installing the Phoenix server (arize-phoenix=={PHOENIX_SERVER_VERSION}) into "
            f"{env_dir}; this takes a few minutes the first time (log: {log})"
        )
        for command in provisioning_commands(env_dir, uv=shutil.which("uv")):
            _run_logged(command, log)
        if not executable.exists():
            raise PhoenixUnavailableError(
                f"installing the Phoenix server left no executable at {executable}; "
                f"last lines of {log}:\n{_tail(log)}"
            )
        marker.write_text(PHOENIX_SERVER_VERSION + "\n")
        return executable


def _provisioned(marker: Path) -> bool:
    try:
        return marker.read_text().strip() == PHOENIX_SERVER_VERSION
    except OSError:
        return False


def _run_logged(command: Sequence[str], log: Path) -> None:
    """Run one step with its output appended to ``log``.

    The log lives in the environment's folder: once that exists (the install step) the output
    streams into it, so ``tail -f`` follows the install; before (the venv step) it is collected
    and written after.
    """
    header = "$ " + " ".join(command) + "\n"
    try:
        if log.parent.is_dir():
            with log.open("a", encoding="utf-8") as handle:
                handle.write(header)
                handle.flush()
                code = subprocess.run(
                    command, stdout=handle, stderr=subprocess.STDOUT, check=False
                ).returncode
        else:
            done = subprocess.run(
                command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False
            )
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(header + done.stdout, encoding="utf-8")
            code = done.returncode
    except OSError as exc:
        raise PhoenixUnavailableError(
            f"cannot run {command[0]} to install the Phoenix server: {exc}"
        ) from exc
    if code != 0:
        raise PhoenixUnavailableError(
            f"installing the Phoenix server failed: {_step(command)} exited with code {code}; "
            f"last lines of {log}:\n{_tail(log)}"
        )


def _step(command: Sequence[str]) -> str:
    """``pip install``, ``venv``, ``uv pip``: what a command is, for messages."""
    if "-m" in command[:-1]:
        index = list(command).index("-m") + 1
        return " ".join(command[index : index + 2 if command[index] == "pip" else index + 1])
    return " ".join([Path(command[0]).name, *command[1:2]])


def _tail(log: Path, lines: int = 15) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.rstrip().splitlines()[-lines:])


def phoenix_executable(*, out: Printer = stderr_printer) -> Path:
    """The ``phoenix`` executable to run: ``$STATEVAL_PHOENIX_BIN``, else the provisioned one.

    Raises:
        PhoenixUnavailableError: ``STATEVAL_PHOENIX_BIN`` names no executable file, or
            provisioning failed.
    """
    named = os.environ.get(ENV_SERVER_BIN)
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            path = Path(shutil.which(named) or path)  # a bare name is looked up on PATH
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise PhoenixUnavailableError(f"{ENV_SERVER_BIN}={named} is not an executable file")
        return path.absolute()
    return provision_server_env(out=out)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created if missing) for the block."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
