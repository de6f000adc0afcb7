"""What a run reports to and hands back: the Phoenix target, the upload's progress and status,
the outcome, and the callback that sees the summary as soon as scoring ends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stateval.run._journal import Journal
from stateval.run._summary import RunSummary

if TYPE_CHECKING:
    from stateval.run._tally import RunTally

__all__ = ["OnScored", "PhoenixTarget", "RunOutcome", "UploadProgress", "UploadStatus"]


@dataclass(frozen=True, slots=True)
class PhoenixTarget:
    """The Phoenix server a run reports to.

    Attributes:
        url: Its base URL (``http://127.0.0.1:6006``).
        api_key: Sent as a bearer token when set (``PHOENIX_API_KEY``).
    """

    url: str
    api_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class UploadProgress:
    """How far the upload to Phoenix has come, at one moment.

    Attributes:
        sent: Evaluations and span annotations stored so far in this invocation.
        total: How many it has to store (final once scoring has ended).
        started: `time.monotonic` when the upload began (for rates and ETAs).
        error: Why uploading stopped, if it did.
    """

    sent: int
    total: int
    started: float
    error: str | None = None


OnScored = Callable[[RunSummary, Callable[[], UploadProgress] | None], None]
"""Called once scoring has ended, before the upload is waited for: the summary, and (when the
run reports to Phoenix) a function giving the upload's progress at any moment."""


@dataclass(frozen=True, slots=True)
class UploadStatus:
    """What reached Phoenix in this invocation.

    Attributes:
        runs: Experiment runs posted now.
        evaluations: Evaluations posted now.
        skipped: Cases already uploaded before (resume).
        pending: Cases not (fully) uploaded; ``stateval run --resume`` finishes them.
        error: Why uploading stopped, if it did.
        experiment_url: The experiment in the Phoenix UI.
        spans: Spans Phoenix accepted in this invocation (kept ones sent again included).
        spans_kept: Spans Phoenix did not accept, kept in the journal for ``--resume``.
        episodes: Episodes whose scores were stored as session annotations now.
        session_annotations: Session annotations stored now.
    """

    runs: int = 0
    evaluations: int = 0
    skipped: int = 0
    pending: int = 0
    error: str | None = None
    experiment_url: str | None = None
    spans: int = 0
    spans_kept: int = 0
    episodes: int = 0
    session_annotations: int = 0


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """A finished (or interrupted and summarised) run.

    Attributes:
        summary: Its summary.
        journal: Its journal.
        upload: What reached Phoenix (None without Phoenix).
        tally: The running counts the summary was made from (a worker hands them back to be
            merged; None when the summary was not made from counts of its own).
    """

    summary: RunSummary
    journal: Journal
    upload: UploadStatus | None = None
    tally: RunTally | None = field(default=None, repr=False, compare=False)
