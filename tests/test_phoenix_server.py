from __future__ import annotations

import functools
import http.server
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from stateval.errors import PhoenixUnavailableError
from stateval.server import (
    PHOENIX_SERVER_VERSION,
    EmbeddedPhoenix,
    find_uv,
    phoenix_executable,
    phoenix_home,
    provision_server_env,
    provisioning_commands,
    server_env_dir,
)


def _phoenix_bin() -> str:
    """The ``phoenix`` to start: ``STATEVAL_TEST_PHOENIX_BIN``, else the one stateval provisions
    (as the README's test command on a fresh machine has it, after step 1)."""
    return os.environ.get("STATEVAL_TEST_PHOENIX_BIN") or str(phoenix_executable())


def _stale_record(pid: int) -> str:
    return json.dumps(
        {
            "pid": pid,
            "port": 1,
            "grpc_port": 2,
            "url": "http://127.0.0.1:1",
            "started_at": "2024-01-01T00:00:00Z",
            "executable": "/nowhere/phoenix",
        }
    )


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.phoenix
def test_start_reuse_status_and_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEVAL_PHOENIX_BIN", _phoenix_bin())
    lines: list[str] = []
    home = tmp_path / "phoenix"
    server = EmbeddedPhoenix(home, out=lines.append)
    assert not server.status().running

    url = server.ensure_running()
    try:
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
        record = json.loads((home / "server.json").read_text())
        assert record["url"] == url
        assert url.startswith("http://127.0.0.1:")
        assert {"pid", "port", "url", "started_at"} <= set(record)
        assert (home / "phoenix.db").exists()
        assert any(url in line for line in lines)

        # A second run (a new object, as a new process would make) reuses the same server.
        again = EmbeddedPhoenix(home, out=lines.append)
        assert again.ensure_running() == url
        status = again.status()
        assert status.running
        assert status.pid == record["pid"]
        assert status.url == url
        assert status.version == PHOENIX_SERVER_VERSION
        assert status.uptime is not None
        assert status.uptime >= 0
        # asking for another port while it runs says how to get there
        with pytest.raises(PhoenixUnavailableError, match=r"already runs at .*phoenix stop"):
            again.ensure_running(port=record["port"] + 1)
    finally:
        stopped = server.stop()
    assert stopped
    assert not server.status().running
    assert not (home / "server.json").exists()
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{url}/healthz", timeout=2)
    assert server.stop() is False


def test_the_local_phoenix_lives_in_the_user_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STATEVAL_PHOENIX_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert phoenix_home() == tmp_path / "data" / "stateval" / "phoenix"
    monkeypatch.chdir(tmp_path)  # whatever the folder
    assert EmbeddedPhoenix().data_dir == tmp_path / "data" / "stateval" / "phoenix"
    monkeypatch.setenv("STATEVAL_PHOENIX_HOME", str(tmp_path / "mine"))
    assert EmbeddedPhoenix().data_dir == tmp_path / "mine"


def test_the_preferred_port_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STATEVAL_PHOENIX_PORT", "sixty")
    with pytest.raises(PhoenixUnavailableError, match="STATEVAL_PHOENIX_PORT=sixty is not a port"):
        EmbeddedPhoenix(tmp_path / "phoenix").ensure_running()


def test_a_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PhoenixUnavailableError, match=f"port {port} on 127.0.0.1 is in use"):
            EmbeddedPhoenix(tmp_path).ensure_running(port)


def test_a_port_taken_during_start_up_is_not_mistaken_for_our_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another server holds the port and answers /healthz: while ours fails to bind, the health
    # check must not take the other one for ours; ours then starts again on a free port.
    site = tmp_path / "site"
    site.mkdir()
    (site / "healthz").write_text("ok")
    impostor = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0),
        functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site)),
    )
    taken = impostor.server_address[1]
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    marker = tmp_path / "tried"
    fake = _script(
        tmp_path / "phoenix",
        f"if [ ! -e {marker} ]; then touch {marker}; sleep 2; "
        'echo "ERROR: [Errno 98] error while attempting to bind on address '
        "('127.0.0.1', $PHOENIX_PORT): address already in use\"; exit 1; fi\n"
        f'cd {site} && exec {sys.executable} -m http.server "$PHOENIX_PORT" --bind 127.0.0.1\n',
    )
    monkeypatch.setenv("STATEVAL_PHOENIX_BIN", str(fake))
    monkeypatch.setenv("STATEVAL_PHOENIX_PORT", str(taken))
    monkeypatch.setattr("stateval.server._embedded._port_free", lambda port: True)  # the race
    lines: list[str] = []
    server = EmbeddedPhoenix(tmp_path / "phoenix-home", out=lines.append)
    try:
        url = server.ensure_running()
        assert url != f"http://127.0.0.1:{taken}"
        assert f"Port {taken} was taken meanwhile; trying another ..." in lines
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    finally:
        record = json.loads(server.state_file.read_text()) if server.state_file.exists() else {}
        if record:
            os.kill(record["pid"], signal.SIGTERM)
        impostor.shutdown()
        impostor.server_close()


def test_stop_never_signals_a_pid_that_is_not_phoenix(tmp_path: Path) -> None:
    server = EmbeddedPhoenix(tmp_path / "phoenix")
    server.data_dir.mkdir(parents=True)
    # A stale record whose pid now belongs to another process: this very test run.
    server.state_file.write_text(_stale_record(os.getpid()))
    assert not server.status().running
    assert server.stop() is False
    assert not server.state_file.exists()


def test_a_server_that_dies_at_start_up_reports_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _script(tmp_path / "phoenix", "echo 'database is locked: boom' >&2\nexit 3\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STATEVAL_PHOENIX_BIN", "phoenix")  # a bare name is found on PATH
    server = EmbeddedPhoenix(tmp_path / "root", out=lambda line: None)
    server.data_dir.mkdir(parents=True)
    server.state_file.write_text(_stale_record(os.getpid()))  # not a Phoenix: ignored
    with pytest.raises(PhoenixUnavailableError, match="exited during start-up") as caught:
        server.ensure_running()
    assert "database is locked: boom" in str(caught.value)
    assert not server.state_file.exists()


def test_a_missing_server_executable_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STATEVAL_PHOENIX_BIN", str(tmp_path / "no-such-phoenix"))
    with pytest.raises(PhoenixUnavailableError, match="STATEVAL_PHOENIX_BIN"):
        EmbeddedPhoenix(tmp_path).ensure_running()


def test_server_env_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STATEVAL_PHOENIX_SERVER_ENV", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert server_env_dir() == tmp_path / "cache" / "stateval" / (
        f"phoenix-server-{PHOENIX_SERVER_VERSION}"
    )
    monkeypatch.setenv("STATEVAL_PHOENIX_SERVER_ENV", str(tmp_path / "mine"))
    assert server_env_dir() == tmp_path / "mine"


def test_provisioning_commands_install_the_pinned_server(tmp_path: Path) -> None:
    env = tmp_path / "env"
    pip = provisioning_commands(env, python="/usr/bin/python3")
    assert pip[0] == ["/usr/bin/python3", "-m", "venv", str(env)]
    assert pip[1][:4] == [str(env / "bin" / "python"), "-m", "pip", "install"]
    assert pip[1][-1] == "arize-phoenix==20.26.1"
    assert "--quiet" not in pip[1]  # pip's own lines go to the log
    uv = provisioning_commands(env, python="/usr/bin/python3", uv="/opt/uv")
    assert uv[0] == ["/opt/uv", "venv", "--quiet", "--python", "/usr/bin/python3", str(env)]
    assert uv[1][:3] == ["/opt/uv", "pip", "install"]
    assert uv[1][-1] == "arize-phoenix==20.26.1"


def test_uv_is_found_from_stateval_s_own_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STATEVAL_UV", raising=False)
    monkeypatch.setenv("PATH", "/nowhere")  # not from PATH: from the uv wheel stateval installs
    found = find_uv()
    assert found is not None
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("uv ")
    monkeypatch.setenv("STATEVAL_UV", "off")
    assert find_uv() is None
    monkeypatch.setenv("STATEVAL_UV", "/nowhere/uv")
    with pytest.raises(PhoenixUnavailableError, match="STATEVAL_UV=/nowhere/uv"):
        find_uv()


def _fake_uv(tools: Path, calls: Path, *, fail: bool = False, wait_for: Path | None = None) -> None:
    """A stand-in `uv`: records each call and lays out what a real install would.

    Its install step prints 300 lines of chatter (then, given ``wait_for``, waits until that
    file exists, at most a minute; fails at the end when ``fail``).
    """
    tools.mkdir()
    install = (
        'for arg; do last="$arg"; done; '
        'py=$(echo "$@" | sed "s/.*--python \\([^ ]*\\).*/\\1/"); d=$(dirname "$py"); '
        'i=0; while [ $i -lt 300 ]; do echo "WARNING: chatter line $i"; i=$((i+1)); done; '
    )
    if wait_for is not None:
        install += (
            f'n=0; while [ ! -e "{wait_for}" ] && [ $n -lt 1200 ]; '
            "do sleep 0.05; n=$((n+1)); done; "
        )
    install += (
        'echo "ERROR: No matching distribution found for $last" >&2; exit 1'
        if fail
        else 'printf \'#!/bin/sh\\n\' > "$d/phoenix"; chmod +x "$d/phoenix"; '
        'echo "Installed arize-phoenix"'
    )
    _script(
        tools / "uv",
        f'echo "$@" >> {calls}\n'
        'if [ "$1" = venv ]; then for arg; do last="$arg"; done; mkdir -p "$last/bin"; fi\n'
        f'if [ "$1" = pip ]; then {install}; fi\n',
    )


def test_provisioning_runs_once_and_shows_its_steps_and_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = tmp_path / "calls.log"
    seen = tmp_path / "progress-seen"
    _fake_uv(tmp_path / "tools", calls, wait_for=seen)
    monkeypatch.setenv("STATEVAL_UV", str(tmp_path / "tools" / "uv"))
    monkeypatch.setattr("stateval.server._provision.PROGRESS_EVERY", 0.2)
    lines: list[str] = []
    env = tmp_path / "server-env"

    def out(line: str) -> None:
        lines.append(line)
        if "chatter line 299" in line:  # a progress line showed the installer's latest line
            seen.touch()  # so the stand-in installer may finish (no timing involved)

    executable = provision_server_env(env, out=out)
    assert executable == env / "bin" / "phoenix"
    assert (env / ".stateval-provisioned").read_text().strip() == PHOENIX_SERVER_VERSION
    log = env / "provision.log"
    assert lines[0].startswith(
        f"Installing the Phoenix server (arize-phoenix=={PHOENIX_SERVER_VERSION}) into {env} "
        f"with uv; log: {log}"
    )
    assert lines[1] == "  [1/2] uv venv ..."
    assert lines[2] == "  [2/2] uv pip ..."
    # while the install step runs: its elapsed time and the installer's latest line
    # (before the installer's first line, the latest line is the command itself)
    ticks = [line for line in lines[3:-1] if line.startswith("    ... ")]
    assert ticks
    assert all("WARNING: chatter line" in line or "pip install" in line for line in ticks)
    assert "WARNING: chatter line 299" in ticks[-1]
    assert lines[-1].startswith("  Phoenix server installed in ")
    text = log.read_text()
    assert "Installed arize-phoenix" in text
    assert "chatter line 299" in text
    assert len(calls.read_text().splitlines()) == 2

    shown = len(lines)
    assert provision_server_env(env, out=lines.append) == executable
    assert len(calls.read_text().splitlines()) == 2  # nothing re-installed
    assert len(lines) == shown  # and nothing printed


def test_failed_provisioning_says_why_with_the_log_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = tmp_path / "calls.log"
    _fake_uv(tmp_path / "tools", calls, fail=True)
    monkeypatch.setenv("STATEVAL_UV", str(tmp_path / "tools" / "uv"))
    lines: list[str] = []
    env = tmp_path / "server-env"

    with pytest.raises(PhoenixUnavailableError, match="installing the Phoenix server failed") as e:
        provision_server_env(env, out=lines.append)
    message = str(e.value)
    assert "No matching distribution found for arize-phoenix==" in message
    assert str(env / "provision.log") in message
    assert "chatter line 0\n" not in message  # the tail, not the whole log
    assert lines[-1] == "  [2/2] uv pip ..."
    assert not (env / ".stateval-provisioned").exists()


def test_pip_failure_without_an_index_reports_pips_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real venv + pip path, made to fail fast and offline: no index, nothing to find.
    monkeypatch.setenv("STATEVAL_UV", "off")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    lines: list[str] = []
    env = tmp_path / "server-env"
    with pytest.raises(PhoenixUnavailableError, match="pip install exited with code 1") as caught:
        provision_server_env(env, out=lines.append)
    assert f"arize-phoenix=={PHOENIX_SERVER_VERSION}" in str(caught.value)
    assert "$ " + str(env / "bin" / "python") in (env / "provision.log").read_text()
    assert "with pip (STATEVAL_UV=off; minutes rather than seconds)" in lines[0]
    assert lines[1:] == ["  [1/2] venv ...", "  [2/2] pip install ..."]


@pytest.mark.skipif(
    not os.environ.get("STATEVAL_TEST_PROVISION"),
    reason="downloads arize-phoenix from PyPI; set STATEVAL_TEST_PROVISION=1 to run",
)
def test_provisioning_from_pypi_gives_a_working_server(tmp_path: Path) -> None:
    executable = provision_server_env(tmp_path / "env", out=print)
    assert executable.exists()
    result = subprocess.run(
        [str(tmp_path / "env" / "bin" / "python"), "-c", _VERSION_SCRIPT],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == PHOENIX_SERVER_VERSION
    assert "phoenix.server" not in sys.modules


_VERSION_SCRIPT = "import importlib.metadata as m; print(m.version('arize-phoenix'))"


def _listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket ``pid`` listens on, from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found: set[tuple[str, int]] = set()
    for table, width in (("tcp", 8), ("tcp6", 32)):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state != "0A" or inode not in inodes:  # 0A: LISTEN
                continue
            address, port = local.split(":")
            raw = bytes.fromhex(address)
            if width == 8:
                text = ".".join(str(b) for b in reversed(raw))
            else:  # four little-endian 32-bit words
                words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
                text = ":".join(b"".join(words)[i : i + 2].hex() for i in range(0, 16, 2))
            found.add((text, int(port, 16)))
    return found


@pytest.mark.phoenix
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc (Linux)")
def test_the_embedded_server_listens_on_loopback_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STATEVAL_PHOENIX_BIN", _phoenix_bin())
    server = EmbeddedPhoenix(tmp_path / ".stateval", out=lambda line: None)
    server.ensure_running()
    try:
        record = json.loads(server.state_file.read_text())
        for _ in range(600):  # the gRPC port opens a moment after /healthz answers
            sockets = _listening(record["pid"])
            if {record["port"], record["grpc_port"]} <= {port for _, port in sockets}:
                break
            time.sleep(0.2)
        assert {record["port"], record["grpc_port"]} <= {port for _, port in sockets}, sockets
        loopback = {
            "127.0.0.1",
            "0000:0000:0000:0000:0000:0000:0000:0001",  # ::1
            "0000:0000:0000:0000:0000:ffff:7f00:0001",  # ::ffff:127.0.0.1
        }
        assert {address for address, _ in sockets} <= loopback, sockets
    finally:
        server.stop()
