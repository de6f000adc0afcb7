"""A whole run: its journal (new or resumed), its frame (lock, scoring, LLM clients closed) and
a local run to its summary. A run reported to Phoenix is `stateval.upload.run_suite`;
rescoring a journaled run is in ``_rescore.py``."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from stateval.errors import JournalError, SuiteError
from stateval.mutators import LLMMutator
from stateval.run._compact_scores import scores_fingerprint
from stateval.run._journal import Journal
from stateval.run._outcome import OnScored, RunOutcome
from stateval.run._results import CaseScore
from stateval.run._run_header import RunHeader, list_runs
from stateval.run._runner import UploadSink, execute
from stateval.run._scoring import Scoring
from stateval.run._shard import Shard, shard_group
from stateval.run._tally import RunTally, run_summary
from stateval.suite import EpisodeMode, FieldsAs, Suite

__all__ = [
    "close_clients",
    "find_latest",
    "find_resumable",
    "run_counted",
    "run_local",
    "start_journal",
    "suite_run",
]


def _git_commit(folder: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else None


def start_journal(
    root: str | Path,
    suite: Suite,
    *,
    limit: int | None = None,
    phoenix_url: str | None = None,
    shard: Shard | None = None,
    shared_run: str | None = None,
    fields_as: FieldsAs | None = None,
    repetitions: int = 1,
    mode: EpisodeMode | None = None,
) -> Journal:
    """Create a new run's journal planning the suite's first ``limit`` cases.

    Args:
        root: The stateval home folder.
        suite: The suite.
        limit: Plan only the first ``limit`` cases.
        phoenix_url: The Phoenix server the run reports to.
        shard: Plan only this shard of those cases (``--shard I/N``): its experiment is the
            one all the shards of the run share.
        shared_run: The key the shards of one run share (default: derived from the suite,
            its cases, the git commit, ``limit`` and the shard count, so the shards of one CI
            pipeline agree without being told).
        fields_as: Where field scores go in Phoenix (default: the suite's
            ``phoenix.fields_as``); kept for a resumed run.
        repetitions: Run every case this many times (``--repeat``).
        mode: ``teacher_forced`` or ``free_running`` (``--mode``; default: the suite's
            ``episodes.mode``, teacher-forced without episodes); kept for a resumed run.

    Raises:
        SuiteError: Free-running without episodes, or with ``repetitions`` > 1.
    """
    from stateval._version import __version__

    if mode is None:
        mode = "teacher_forced" if suite.episodes is None else suite.episodes.mode
    if mode == "free_running" and suite.episodes is None:
        raise SuiteError(
            f"{suite.path}: free-running mode needs episodes ('episodes: {{by: ..., order: ...}}')"
        )
    if mode == "free_running" and repetitions > 1:
        raise SuiteError("--repeat does not combine with free-running mode")
    case_ids = list(suite.cases.ids if limit is None else suite.cases.ids[:limit])
    commit = _git_commit(suite.path.resolve().parent)
    header = RunHeader(
        suite_path=str(suite.path.resolve()),
        suite_name=suite.name,
        suite_hash=suite.suite_hash,
        cases_hash=suite.cases_hash,
        case_ids=case_ids if shard is None else _shard_cases(suite, shard, case_ids),
        mutator=suite.mutator_description,
        stateval_version=__version__,
        git_commit=commit,
        phoenix_url=phoenix_url,
        dataset=suite.phoenix.dataset,
        project=suite.phoenix.project,
        fields_as=fields_as or suite.phoenix.fields_as,
        repetitions=repetitions,
        mode=mode,
        scores_fingerprint=scores_fingerprint(Scoring.from_suite(suite), suite.cases_hash),
    )
    if shard is None:
        header.experiment_name = f"{suite.phoenix.experiment_prefix}-{header.run_id}"
    else:
        header.shard = str(shard)
        # a free-running run's shards share a run of their own, apart from a teacher-forced one
        modes = () if mode == "teacher_forced" else (mode,)
        header.shared_run = shared_run or shard_group(
            suite.suite_hash, suite.cases_hash, commit, limit, shard.count, *modes
        )
        header.experiment_name = f"{suite.phoenix.experiment_prefix}-{header.shared_run}"
    return Journal.create(root, header)


def _shard_cases(suite: Suite, shard: Shard, case_ids: list[str]) -> list[str]:
    """The planned cases of ``shard``: with episodes, whole episodes (by episode id)."""
    if suite.episodes is None:
        return shard.select(case_ids)
    held = {c for e, ids in suite.episodes.index.items() if shard.holds(e) for c in ids}
    return [c for c in case_ids if c in held]


def find_resumable(
    root: str | Path, suite: Suite, shard: Shard | None = None, mode: EpisodeMode | None = None
) -> Journal:
    """The latest run of ``suite`` under ``root`` (of that ``shard`` of it, in that episode
    ``mode``, when given).

    Raises:
        JournalError: There is none, or the suite's cases changed since.
    """
    target = str(suite.path.resolve())
    wanted = None if shard is None else str(shard)
    for run_id in reversed(list_runs(root)):
        journal = Journal.open(root, run_id)
        if journal.header.suite_path != target or journal.header.shard != wanted:
            continue
        if mode is not None and journal.header.mode != mode:
            continue
        if journal.header.cases_hash != suite.cases_hash:
            raise JournalError(
                f"the cases of {suite.path} changed since run {run_id}; "
                "run without --resume to start a new run"
            )
        return journal
    which = suite.path if shard is None else f"shard {shard} of {suite.path}"
    if mode is not None:
        which = f"{which} in {mode} mode"
    raise JournalError(f"no run of {which} under {Path(root) / 'runs'} to resume")


def find_latest(root: str | Path, suite: Suite) -> Journal:
    """The latest run under ``root`` of ``suite``: of the same suite file, or of a suite with
    the same name (a variant of the suite with other thresholds, say).

    Raises:
        JournalError: There is none.
    """
    target = str(suite.path.resolve())
    for run_id in reversed(list_runs(root)):
        journal = Journal.open(root, run_id)
        if journal.header.suite_path == target or journal.header.suite_name == suite.name:
            return journal
    raise JournalError(f"no run of suite {suite.name!r} ({suite.path}) under {Path(root) / 'runs'}")


@contextlib.asynccontextmanager
async def suite_run(suite: Suite, journal: Journal) -> AsyncIterator[Scoring]:
    """The frame of every run of ``journal``'s cases: the suite's scoring within, the journal
    locked meanwhile (one writer per run: a second ``--resume`` of a running run is refused),
    the suite's LLM clients closed at the end (also on error).

    Raises:
        SuiteError: The suite was loaded without its mutator.
    """
    if suite.mutator is None:
        raise SuiteError(f"{suite.path}: the suite was loaded without its mutator")
    scoring = Scoring.from_suite(suite)
    journal.lock()
    try:
        yield scoring
    finally:
        journal.unlock()
        await close_clients(suite)


async def run_local(
    suite: Suite,
    journal: Journal,
    *,
    concurrency: int,
    sink: UploadSink | None = None,
    on_case: Callable[[CaseScore], None] | None = None,
    on_scored: OnScored | None = None,
) -> RunOutcome:
    """Run (or resume) ``journal``'s planned cases of ``suite`` and summarise them, without
    Phoenix: journal and summary, and every scored case handed to ``sink`` when given (an
    `UploadSink` of your own streams results anywhere). `stateval.upload.run_suite` is the
    same run reported to Phoenix.

    Args:
        suite: The suite, loaded with its mutator.
        journal: The run's journal (new, or one to resume).
        concurrency: Mutator calls at once.
        sink: Receives every scored case (journaled ones of a resumed run too).
        on_case: Called with each newly scored case.
        on_scored: Called with the summary when scoring has ended.

    Raises:
        SuiteError: The suite was loaded without its mutator.
    """
    tally = await run_counted(suite, journal, concurrency=concurrency, sink=sink, on_case=on_case)
    summary = run_summary(suite, journal, tally)
    if on_scored is not None:
        on_scored(summary, None)
    return RunOutcome(summary, journal, tally=tally)


async def run_counted(
    suite: Suite,
    journal: Journal,
    *,
    concurrency: int,
    sink: UploadSink | None = None,
    on_case: Callable[[CaseScore], None] | None = None,
) -> RunTally:
    """`run_local` up to its running counts, no summary made of them (a ``--workers``
    worker's shard: the driver adds up the shards' counts and summarises the whole run).

    Raises:
        SuiteError: The suite was loaded without its mutator.
    """
    async with suite_run(suite, journal) as scoring:
        assert suite.mutator is not None  # suite_run checked
        return await execute(
            suite,
            journal,
            scoring,
            mutator=suite.mutator,
            concurrency=concurrency,
            sink=sink,
            on_case=on_case,
            judge=suite.judge,
        )


async def close_clients(suite: Suite) -> None:
    """Close the connection pools of the suite's LLM clients (mutator and judge), if any.

    The clients stay usable: a later call opens a new pool.
    """
    client = suite.mutator.client if isinstance(suite.mutator, LLMMutator) else None
    close = getattr(client, "aclose", None)
    if callable(close):
        await close()
    if suite.judge is not None:
        await suite.judge.aclose()
