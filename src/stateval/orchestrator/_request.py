"""What one run needs, in one object: the `RunRequest` every entry point builds.

``stateval run`` parses its options into a request, the pytest plugin builds one from its own
options, and ``stateval traces`` builds one too; `carry_out` runs it. A new run option is one
field here and one line where an entry point parses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stateval.reports import ReportRequest
from stateval.run import Shard
from stateval.suite import EpisodeMode, FieldsAs, Suite

__all__ = ["RunRequest"]


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
