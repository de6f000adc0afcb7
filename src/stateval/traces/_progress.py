"""A monitor's memory between runs: the watermark of ``--since last`` and the journal of a run.

Both live in ``<stateval home>/traces/<monitor>-<key>/`` (the key hashes the Phoenix URL and
project, so one monitor file pointed at two servers keeps two watermarks):

* ``watermark.json``: the row of the last span a finished run scored (`StoredSpan.row`);
  ``--since last`` reads the spans stored after it;
* ``journal.json``: written after each page whose annotations Phoenix stored (the window, the
  row scored up to, the counts so far). A run that stops before its end leaves it; the next
  run resumes from it, and annotations are upserted, so nothing is lost or stored twice. A
  finished run removes it.

Files are replaced atomically (written aside, then renamed).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from stateval.errors import StatevalError
from stateval.traces._reader import SpanWindow
from stateval.traces._summary import TracesTally
from stateval.traces._verdicts import EpisodeTally

__all__ = ["MonitorProgress", "Resumed"]


@dataclass(frozen=True, slots=True)
class Resumed:
    """What an interrupted run had done: its window, the row it scored up to, its counts."""

    window: SpanWindow
    tally: TracesTally
    episodes: EpisodeTally


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _parse_time(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


class MonitorProgress:
    """The watermark and journal of one monitor against one Phoenix project.

    Args:
        home: The stateval home folder (``.stateval`` or ``$STATEVAL_HOME``).
        monitor: The monitor's name.
        url: The Phoenix server.
        project: The Phoenix project.
    """

    def __init__(self, home: Path, monitor: str, url: str, project: str) -> None:
        key = hashlib.sha256(f"{url}\n{project}".encode()).hexdigest()[:12]
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in monitor)
        self.folder = home / "traces" / f"{safe}-{key}"
        self._watermark = self.folder / "watermark.json"
        self._journal = self.folder / "journal.json"

    def watermark(self) -> int | None:
        """The row of the last span a finished run scored, or None before the first run."""
        data = self._read(self._watermark)
        return None if data is None else int(data["row"])

    def set_watermark(self, row: int) -> None:
        """Remember ``row`` as scored, unless a later one already is."""
        current = self.watermark()
        if current is None or row > current:
            self._write(self._watermark, {"row": row})

    def resumed(self) -> Resumed | None:
        """The journal of a run that did not finish, or None."""
        data = self._read(self._journal)
        if data is None:
            return None
        window = data["window"]
        return Resumed(
            SpanWindow(
                _parse_time(window["since"]),
                _parse_time(window["until"]),
                window["after_row"],
            ),
            TracesTally.from_dict(data["tally"]),
            EpisodeTally({e: dict(t) for e, t in data.get("episodes", {}).items()}),
        )

    def record(self, window: SpanWindow, tally: TracesTally, episodes: EpisodeTally) -> None:
        """Journal a stored page: the run resumes after ``tally.last_row`` with these counts."""
        resume = SpanWindow(window.since, window.until, tally.last_row)
        self._write(
            self._journal,
            {
                "window": {
                    "since": _time(resume.since),
                    "until": _time(resume.until),
                    "after_row": resume.after_row,
                },
                "tally": tally.to_dict(),
                "episodes": episodes.turns,
            },
        )

    def finish(self) -> None:
        """The run ended: forget its journal."""
        self._journal.unlink(missing_ok=True)

    def discard(self) -> None:
        """Drop an interrupted run's journal (``--restart``)."""
        self.finish()

    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StatevalError(f"{path}: cannot read: {exc.strerror}") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise StatevalError(f"{path}: not JSON ({exc}); delete it to start over") from exc
        if not isinstance(data, dict):
            raise StatevalError(f"{path}: not a JSON object; delete it to start over")
        return data

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        aside = path.with_suffix(".tmp")
        with aside.open("w", encoding="utf-8") as handle:
            json.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(aside, path)
