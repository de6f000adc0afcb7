"""Episodes as Phoenix sessions: each turn's span carries its episode's session id, and each
finished episode's scores are stored as annotations of that session.

Phoenix groups the traces whose spans carry one OpenInference ``session.id`` into a session
(its Sessions view shows them as one conversation). A session id is unique on a Phoenix server,
whatever the project, so stateval makes it from the episode *and* the run
(``<episode>@<run>``): two runs of a suite, or two suites with the same dialogue ids, never mix
their turns, while the shards of a run (which share a key) and a resumed run keep theirs.

An episode's scores become session annotations, posted in bulk once the sessions exist
(`stateval.upload.AnnotationBatcher`, sessions mode), one per metric of the episode metrics'
table (`stateval.episodes.EPISODE_METRICS`) that has a per-episode value: ``episode_success``
(1 or 0, label ``success`` / ``failure``), ``first_divergence_turn`` (the turn index, none when
no turn diverged), ``episode_accuracy`` (the fraction of its turns that are right) and
``retention_at_5`` (the fraction of its expected fields set 5 or more turns earlier that are
right; none when it has none that old). Their
identifier is the experiment's id, like the span annotations of the run's field scores, so a
rescoring adds its own and keeps the original's. Stored episodes are acknowledged in the
journal and skipped on resume.

Phoenix's Sessions page averages a project's session annotations by name over the sessions it
lists, so a person tells runs and modes apart with its session filter: every turn's span has the
run (`session_run`) and the mode in its ``metadata`` (``metadata["mode"] == "free_running"``,
``metadata["run"] == "<run>"``, read from a session's first turn), and the annotations carry
them in theirs (``run``, ``mode``) and in their explanation (the mode).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from stateval.episodes import EPISODE_METRICS, EpisodeScore
from stateval.run import Journal, RunHeader
from stateval.suite import Case
from stateval.upload._batcher import AnnotationBatcher
from stateval.upload._rest import SessionAnnotationRecord
from stateval.upload._uploader import PhoenixUploader

if TYPE_CHECKING:
    from stateval.upload._rest import AnnotatorKind

__all__ = [
    "EpisodeAnnotations",
    "case_session_id",
    "episode_annotations",
    "session_id",
    "session_run",
]

_CODE: AnnotatorKind = "CODE"


def session_id(header: RunHeader, episode_id: str) -> str:
    """The Phoenix session of ``episode_id`` in the run ``header`` describes:
    ``<episode>@<run>``, where the run is `session_run`."""
    return f"{episode_id.strip()}@{session_run(header)}"


def session_run(header: RunHeader) -> str:
    """The run of the run ``header`` describes, as its sessions name it: the key its shards
    share, else its run id."""
    return header.shared_run or header.run_id


def case_session_id(header: RunHeader, case: Case) -> str | None:
    """The session of the episode ``case`` is a turn of; None when it is not in one."""
    return None if case.episode_id is None else session_id(header, case.episode_id)


def episode_annotations(
    session: str, episode: EpisodeScore, identifier: str, *, run: str | None = None
) -> list[SessionAnnotationRecord]:
    """The session annotations of one scored episode: one per metric of
    `stateval.episodes.EPISODE_METRICS` that has a per-episode value (``run``, the
    `session_run`, in their metadata beside the mode)."""
    metadata = {
        "episode_id": episode.episode_id,
        "run": run,
        "mode": episode.mode,
        "turns": episode.turns,
        "mean_state_accuracy": episode.mean_state_accuracy,
        "n_errors": episode.n_errors,
    }
    out = []
    for metric in EPISODE_METRICS.values():
        if metric.annotation is None or metric.episode_value is None:
            continue
        value = metric.episode_value(episode)
        out.append(
            SessionAnnotationRecord(
                session_id=session,
                name=metric.annotation,
                annotator_kind=_CODE,
                score=value.score,
                label=value.label,
                explanation=value.explanation,
                metadata=metadata,
                identifier=identifier,
            )
        )
    return out


class EpisodeAnnotations:
    """Stores the scores of finished episodes as session annotations, in the background.

    Args:
        uploader: The Phoenix client.
        journal: Where stored episodes are acknowledged (``<scope>sessions``).
        scope: The acknowledgement kinds' prefix (as `PhoenixSink`'s).
        flush: Awaited before each request (export finished spans, so sessions exist).

    Attributes:
        stored: Annotations stored in this invocation.
        episodes: Episodes whose annotations were all stored in this invocation.
        skipped: Episodes stored before (resume).
        error: Why storing stopped, if it did.
    """

    def __init__(
        self,
        uploader: PhoenixUploader,
        journal: Journal,
        *,
        scope: str = "",
        flush: Callable[[], Awaitable[object]] | None = None,
        on_stored: Callable[[int], None] | None = None,
    ) -> None:
        self._journal = journal
        self._kind = scope + "sessions"
        self._on_stored = on_stored
        self._batcher = AnnotationBatcher(
            uploader,
            batch_size=300,
            flush=flush,
            on_cases_stored=self._acknowledge,
            on_stored=self._count,
            sessions=True,
        )
        self._experiment_id: str | None = None
        self._submitted: set[str] = set()
        self.stored = 0
        self.episodes = 0
        self.skipped = 0
        self.error: str | None = None

    def submit(self, episode: EpisodeScore, experiment_id: str) -> int:
        """Queue one episode's annotations; returns how many were queued (0 when the episode
        was stored before, or already queued)."""
        self._experiment_id = experiment_id
        key = f"{episode.mode}:{episode.episode_id}"
        ack = self._journal.ack(self._kind, key)
        if ack is not None and ack.get("experiment_id") == experiment_id:
            self.skipped += 1
            return 0
        if key in self._submitted:
            return 0
        self._submitted.add(key)
        header = self._journal.header
        records = episode_annotations(
            session_id(header, episode.episode_id), episode, experiment_id, run=session_run(header)
        )
        self._batcher.add(key, records)
        return len(records)

    async def finish(self, *, drain: bool = True) -> None:
        """Store what is pending and wait (``drain``), or drop it."""
        if not drain:
            self._batcher.cancel()
        await self._batcher.finish()
        self.error = self.error or self._batcher.error

    def _count(self, stored: int) -> None:
        self.stored += stored
        if self._on_stored is not None:
            self._on_stored(stored)

    async def _acknowledge(self, keys: list[str]) -> None:
        for key in keys:
            await asyncio.to_thread(
                self._journal.append_ack, self._kind, key, experiment_id=self._experiment_id
            )
        self.episodes += len(keys)
