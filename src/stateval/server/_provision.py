"""The Phoenix server's own environment: where it lives and how it is provisioned.

The server package (``arize-phoenix``) never enters stateval's environment. It is installed once
into a virtual environment under a per-user cache directory (``$STATEVAL_PHOENIX_SERVER_ENV``
overrides it), or ``$STATEVAL_PHOENIX_BIN`` names an existing ``phoenix`` executable and nothing
is installed.

The installer is uv when there is one (the ``uv`` wheel stateval depends on, else ``uv`` on
``PATH``): about 10 s from a clean cache here, against 3-4 minutes for pip, which is the
fallback. Each step prints a line, and a long step prints its elapsed time and the installer's
latest log line every `PROGRESS_EVERY` seconds; the installers' whole output goes to
``<env_dir>/provision.log``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from stateval.errors import PhoenixUnavailableError

__all__ = [
    "ENV_SERVER_BIN",
    "ENV_SERVER_ENV",
    "ENV_UV",
    "PHOENIX_SERVER_VERSION",
    "PROGRESS_EVERY",
    "Printer",
    "find_uv",
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
ENV_UV = "STATEVAL_UV"

_MARKER = ".stateval-provisioned"
_LOG = "provision.log"

PROGRESS_EVERY = 10.0
"""Seconds between progress lines while an installation step runs."""

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


def find_uv() -> str | None:
    """The ``uv`` executable to install with, or None to use pip.

    ``$STATEVAL_UV`` decides when set: a path (or a name on ``PATH``) of a ``uv`` executable,
    or ``off`` for pip. Otherwise the ``uv`` of the ``uv`` package stateval depends on, else
    ``uv`` on ``PATH``.
    """
    chosen = os.environ.get(ENV_UV)
    if chosen:
        if chosen.lower() == "off":
            return None
        found = shutil.which(chosen)
        if found is None:
            raise PhoenixUnavailableError(f"{ENV_UV}={chosen} is not an executable (or 'off')")
        return found
    try:
        from uv import find_uv_bin
    except ImportError:
        return shutil.which("uv")
    try:
        return str(find_uv_bin())
    except FileNotFoundError:
        return shutil.which("uv")


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
            [uv, "pip", "install", "--python", env_python, requirement],
        ]
    return [
        [python, "-m", "venv", str(env_dir)],
        [
            env_python,
            "-m",
            "pip",
            "install",
            "--progress-bar",
            "off",
            "--disable-pip-version-check",
            requirement,
        ],
    ]


def provision_server_env(env_dir: Path | None = None, *, out: Printer = stderr_printer) -> Path:
    """Create the server environment if it is not complete yet; return its ``phoenix`` executable.

    The first time it downloads and installs ``arize-phoenix`` and its dependencies (seconds
    with uv, minutes with pip); later calls return at once. Each step prints a line, a long one
    its elapsed time and latest log line every `PROGRESS_EVERY` seconds; the installers' own
    output goes to ``<env_dir>/provision.log``.

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
        uv = find_uv()
        if uv:
            installer = "uv"
        elif os.environ.get(ENV_UV, "").lower() == "off":
            installer = f"pip ({ENV_UV}=off; minutes rather than seconds)"
        else:
            installer = "pip (no uv found; minutes rather than seconds)"
        out(
            f"Installing the Phoenix server (arize-phoenix=={PHOENIX_SERVER_VERSION}) into "
            f"{env_dir} with {installer}; log: {log}"
        )
        started = time.monotonic()
        commands = provisioning_commands(env_dir, uv=uv)
        for step, command in enumerate(commands, 1):
            out(f"  [{step}/{len(commands)}] {_step(command)} ...")
            _run_logged(command, log, out)
        if not executable.exists():
            raise PhoenixUnavailableError(
                f"installing the Phoenix server left no executable at {executable}; "
                f"last lines of {log}:\n{_tail(log)}"
            )
        marker.write_text(PHOENIX_SERVER_VERSION + "\n")
        out(f"  Phoenix server installed in {time.monotonic() - started:.0f} s")
        return executable


def _provisioned(marker: Path) -> bool:
    try:
        return marker.read_text().strip() == PHOENIX_SERVER_VERSION
    except OSError:
        return False


def _run_logged(command: Sequence[str], log: Path, out: Printer = stderr_printer) -> None:
    """Run one step with its output appended to ``log``.

    The log lives in the environment's folder: once that exists (the install step) the output
    streams into it, so ``tail -f`` follows the install, and every `PROGRESS_EVERY` seconds a
    line with the elapsed time and the log's latest line goes to ``out``; before (the venv
    step) the output is collected and written after.
    """
    header = "$ " + " ".join(command) + "\n"
    try:
        if log.parent.is_dir():
            with log.open("a", encoding="utf-8") as handle:
                handle.write(header)
                handle.flush()
                code = _wait_watching(
                    subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT), log, out
                )
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


def _wait_watching(process: subprocess.Popen[bytes], log: Path, out: Printer) -> int:
    """Wait for ``process``, printing its elapsed time and the log's last line now and then."""
    started = time.monotonic()
    while True:
        try:
            return process.wait(timeout=PROGRESS_EVERY)
        except subprocess.TimeoutExpired:
            last = _tail(log, 1).strip()
            out(f"    ... {time.monotonic() - started:.0f} s: {last[:120]}")
        except BaseException:
            process.kill()
            process.wait()
            raise


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
