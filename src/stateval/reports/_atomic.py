"""Report files written whole or not at all: a temporary file beside the report, then
`os.replace` (atomic on POSIX and Windows), so a full disk or a kill never leaves half a report
where a CI job or a person will read it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from stateval.errors import ReportWriteError

__all__ = ["atomic_file", "write_atomically"]


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[IO[bytes]]:
    """A binary file to write ``path``'s new content into; it replaces ``path`` when the block
    ends without an error, and is removed otherwise.

    Raises:
        ReportWriteError: The file cannot be written (``cannot write report PATH: reason``).
    """
    target = Path(path)
    temp: str | None = None
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
        temp = None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ReportWriteError(f"cannot write report {path}: {reason}") from exc
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8; a lone surrogate, which no file can hold, as ``?``) to ``path``
    whole or not at all (see `atomic_file`)."""
    with atomic_file(path) as handle:
        handle.write(text.encode("utf-8", errors="replace"))
