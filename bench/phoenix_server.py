"""A throw-away Phoenix server for the benches: its own free port, its own data, stopped at the end.

The server runs from ``$STATEVAL_PHOENIX_BIN`` (a ``phoenix`` executable in an environment of its
own). With ``database_url`` it stores its data in that PostgreSQL database
(``PHOENIX_SQL_DATABASE_URL``; the server environment needs ``asyncpg``, i.e.
``arize-phoenix[pg]``), else in SQLite under a temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

__all__ = ["add_server_options", "phoenix_server"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def phoenix_server(
    executable: str | None = None, *, database_url: str | None = None, timeout: float = 600.0
) -> Iterator[str]:
    """Start ``phoenix serve`` on free ports; yield its URL; stop it (by its pid) at the end."""
    executable = executable or os.environ.get("STATEVAL_PHOENIX_BIN")
    if not executable:
        sys.exit("give --url, or set STATEVAL_PHOENIX_BIN to a phoenix executable")
    with tempfile.TemporaryDirectory(prefix="stateval-bench-phoenix-") as work:
        port = _free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env |= {
            "PHOENIX_WORKING_DIR": work,
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(_free_port()),
        }
        env.pop("PHOENIX_SQL_DATABASE_URL", None)
        if database_url:
            env["PHOENIX_SQL_DATABASE_URL"] = database_url
        log_path = Path(work) / "server.log"
        url = f"http://127.0.0.1:{port}"
        with log_path.open("w") as log:
            proc = subprocess.Popen(
                [executable, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
            )
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    tail = log_path.read_text(errors="replace")[-3000:]
                    sys.exit(f"phoenix exited during start-up:\n{tail}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    sys.exit(f"phoenix at {url} not healthy after {timeout:.0f} s")
                time.sleep(0.25)
            backend = "PostgreSQL" if database_url else "SQLite"
            print(f"Phoenix ({backend}) at {url}, pid {proc.pid}", file=sys.stderr)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--url`` and ``--database-url`` to a bench's arguments."""
    parser.add_argument("--url", help="an existing Phoenix server (else one is started)")
    parser.add_argument(
        "--database-url",
        help="start the server on this PostgreSQL database (postgresql://...); default SQLite",
    )
