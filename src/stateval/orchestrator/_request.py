"""What one run needs, in one object: the `RunRequest` every entry point builds.

``stateval run`` parses its options into a request, the pytest plugin builds one from its own
options, and `carry_out` runs it; ``stateval traces score`` builds a `TracesRunRequest` (the same
shape: what is run, then ``home``, ``phoenix_url`` and ``reports`` under the same names) that
`carry_out_traces` runs through the same steps. A new option is one field here and one line
where an entry point parses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from stateval.reports import ReportRequest
from stateval.run import Shard
from stateval.suite import EpisodeMode, FieldsAs, Monitor, Suite

if TYPE_CHECKING:
    from stateval.traces import SpanWindow

__all__ = ["RunRequest", "TracesRunRequest"]


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One run of a suite, as asked for.

    Attributes:
        suite: The suite, loaded.
        home: Where runs are journaled (``$STATEVAL_HOME``, ``.stateval``).
        modes: The episode modes to run, one run each, the last the main one (``--mode both``:
            teacher-forced, then free-running); None is the suite's own mode.
        limit: Run only the first ``limit`` cases.
        shard: Run only this shard of the cases (``--shard I/N``).
        shard_group: The key the shards of one run share (``--shard-group``).
        repetitions: Run every case this many times (``--repeat``).
        fields_as: Where field scores go in Phoenix (None: the suite's ``phoenix.fields_as``).
        baseline: Compare with this run or experiment after the run (None: the suite's
            ``thresholds.regressions.baseline``).
        fail_on_regression: Regressed fields fail the run even without a
            ``thresholds.regressions`` block.
        phoenix_url: Report to this Phoenix server (None: the resumed run's, the environment's
            or the embedded one).
        no_phoenix: Report to no Phoenix at all.
        concurrency: Mutator calls at once (None: the suite's ``concurrency``).
        resume: Finish the suite's latest run instead of starting one.
        retry_errors: With ``resume``, run the failed cases again too.
        reports: The report files to write.
        workers: Split the run into this many shards, run at once, then merged
            (``--workers``; 1: one process).
        backend: Where those shards run (``--backend``: a name of
            `stateval.orchestrator.BACKENDS`).
        ray_address: The Ray cluster of ``backend="ray"`` (None: ``RAY_ADDRESS``).
    """

    suite: Suite
    home: Path
    modes: tuple[EpisodeMode | None, ...] = (None,)
    limit: int | None = None
    shard: Shard | None = None
    shard_group: str | None = None
    repetitions: int = 1
    fields_as: FieldsAs | None = None
    baseline: str | None = None
    fail_on_regression: bool = False
    phoenix_url: str | None = None
    no_phoenix: bool = False
    concurrency: int | None = None
    resume: bool = False
    retry_errors: bool = False
    reports: tuple[ReportRequest, ...] = ()
    workers: int = 1
    backend: str = "local"
    ray_address: str | None = None


def _every_span() -> SpanWindow:
    """No ``--since`` / ``--until`` (`stateval.traces` imported only for a traces run)."""
    from stateval.traces import SpanWindow

    return SpanWindow()


@dataclass(frozen=True, slots=True)
class TracesRunRequest:
    """One monitor run (``stateval traces score``), as asked for.

    Attributes:
        monitor: The monitor file, loaded.
        home: Where monitor runs keep their watermark and journal (as `RunRequest.home`).
        phoenix_url: The Phoenix server holding the spans (None: the environment's or the
            embedded one).
        window: The spans to read (``--since`` / ``--until``).
        since_last: Read only the spans stored after the monitor's watermark.
        restart: Drop an interrupted run's journal instead of resuming it.
        follow: Keep polling for newer spans every this many seconds (None: one pass).
        dry_run: Score and report, but store no annotation and keep the watermark.
        reports: The report files to write (formats with a ``traces`` writer).
    """

    monitor: Monitor
    home: Path
    phoenix_url: str | None = None
    window: SpanWindow = field(default_factory=_every_span)
    since_last: bool = False
    restart: bool = False
    follow: float | None = None
    dry_run: bool = False
    reports: tuple[ReportRequest, ...] = ()
