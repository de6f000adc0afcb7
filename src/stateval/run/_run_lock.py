"""One writer per run: an exclusive ``fcntl.flock`` on ``<run folder>/lock``.

The lock belongs to an open file description, so it is released when the holder closes it or
ends however it ends (a kill included); the file keeps the holder's pid for the message a
second writer gets.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from stateval.errors import JournalBusyError, JournalWriteError

__all__ = ["LOCK_NAME", "release_run_lock", "take_run_lock"]

LOCK_NAME = "lock"


def take_run_lock(folder: Path, run_id: str) -> int:
    """Lock run ``run_id`` (its ``folder``) for writing; return the descriptor holding it.

    Raises:
        JournalBusyError: Another process holds it (one line, naming its pid).
        JournalWriteError: The lock file cannot be made.
    """
    path = folder / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise JournalWriteError(f"cannot lock {path}: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip()
        os.close(fd)
        pid = f" (pid {holder})" if holder.isdigit() else ""
        raise JournalBusyError(
            f"run {run_id} is being written by another stateval process{pid}; "
            "wait for it to end or stop it, then resume"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def release_run_lock(fd: int) -> None:
    """Release a lock `take_run_lock` returned."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
    os.close(fd)  # closing the descriptor releases the flock
