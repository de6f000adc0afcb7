"""A whole run: journal (new or resumed), tracing and uploads when Phoenix is on, the summary;
and rescoring a journaled run under a suite's current policies and thresholds."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stateval.errors import JournalError, SuiteError
from stateval.mutators import LLMMutator
from stateval.run._journal import Journal, RunHeader, list_runs
from stateval.run._results import CaseScore
from stateval.run._runner import execute
from stateval.run._scoring import RunSummary, Scoring, score_case
from stateval.run._shard import Shard, shard_group
from stateval.run._tally import JournalScores, RunTally, journaled_results
from stateval.suite import FieldsAs, Suite

__all__ = [
    "OnScored",
    "PhoenixTarget",
    "RunOutcome",
    "UploadProgress",
    "UploadStatus",
    "close_clients",
    "find_resumable",
    "rescore",
    "rescore_to_phoenix",
    "rescored_tally",
    "run_suite",
    "run_summary",
    "start_journal",
]


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
    """

    runs: int = 0
    evaluations: int = 0
    skipped: int = 0
    pending: int = 0
    error: str | None = None
    experiment_url: str | None = None
    spans: int = 0
    spans_kept: int = 0


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """A finished (or interrupted and summarised) run."""

    summary: RunSummary
    journal: Journal
    upload: UploadStatus | None = None


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
    """
    from stateval._version import __version__

    case_ids = list(suite.cases.ids if limit is None else suite.cases.ids[:limit])
    commit = _git_commit(suite.path.resolve().parent)
    header = RunHeader(
        suite_path=str(suite.path.resolve()),
        suite_name=suite.name,
        suite_hash=suite.suite_hash,
        cases_hash=suite.cases_hash,
        case_ids=case_ids if shard is None else shard.select(case_ids),
        mutator=suite.mutator_description,
        stateval_version=__version__,
        git_commit=commit,
        phoenix_url=phoenix_url,
        dataset=suite.phoenix.dataset,
        project=suite.phoenix.project,
        fields_as=fields_as or suite.phoenix.fields_as,
        repetitions=repetitions,
    )
    if shard is None:
        header.experiment_name = f"{suite.phoenix.experiment_prefix}-{header.run_id}"
    else:
        header.shard = str(shard)
        header.shared_run = shared_run or shard_group(
            suite.suite_hash, suite.cases_hash, commit, limit, shard.count
        )
        header.experiment_name = f"{suite.phoenix.experiment_prefix}-{header.shared_run}"
    return Journal.create(root, header)


def find_resumable(root: str | Path, suite: Suite, shard: Shard | None = None) -> Journal:
    """The latest run of ``suite`` under ``root`` (of that ``shard`` of it, when given).

    Raises:
        JournalError: There is none, or the suite's cases changed since.
    """
    target = str(suite.path.resolve())
    wanted = None if shard is None else str(shard)
    for run_id in reversed(list_runs(root)):
        journal = Journal.open(root, run_id)
        if journal.header.suite_path != target or journal.header.shard != wanted:
            continue
        if journal.header.cases_hash != suite.cases_hash:
            raise JournalError(
                f"the cases of {suite.path} changed since run {run_id}; "
                "run without --resume to start a new run"
            )
        return journal
    which = suite.path if shard is None else f"shard {shard} of {suite.path}"
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


async def run_suite(
    suite: Suite,
    journal: Journal,
    *,
    concurrency: int,
    phoenix: PhoenixTarget | None = None,
    on_case: Callable[[CaseScore], None] | None = None,
    on_scored: OnScored | None = None,
) -> RunOutcome:
    """Run (or resume) ``journal``'s planned cases of ``suite`` and summarise them.

    With ``phoenix``, the cases become a dataset, the run an experiment, each case a traced,
    linked experiment run with its evaluations (field scores as the journal's ``fields_as``
    says); uploads overlap the mutator calls. Without it, the run is local: journal and
    summary only. The suite's LLM clients are closed at the end (also on error).

    Args:
        suite: The suite, loaded with its mutator.
        journal: The run's journal (new, or one to resume).
        concurrency: Mutator calls at once.
        phoenix: The Phoenix server to report to.
        on_case: Called with each newly scored case.
        on_scored: Called when scoring has ended, while the upload may still be going on (to
            show the summary at once and then the upload's progress).

    Raises:
        SuiteError: The suite was loaded without its mutator.
    """
    if suite.mutator is None:
        raise SuiteError(f"{suite.path}: the suite was loaded without its mutator")
    scoring = Scoring.from_suite(suite)
    try:
        if phoenix is not None:
            from stateval.run._phoenix import run_with_phoenix

            return await run_with_phoenix(
                suite,
                journal,
                scoring,
                phoenix,
                concurrency=concurrency,
                on_case=on_case,
                on_scored=on_scored,
            )
        tally = await execute(
            suite,
            journal,
            scoring,
            mutator=suite.mutator,
            concurrency=concurrency,
            on_case=on_case,
            judge=suite.judge,
        )
    finally:
        await close_clients(suite)
    summary = run_summary(suite, journal, tally)
    if on_scored is not None:
        on_scored(summary, None)
    return RunOutcome(summary, journal)


def run_summary(
    suite: Suite, journal: Journal, tally: RunTally, experiment_url: str | None = None
) -> RunSummary:
    """The summary of ``journal``'s run from its running aggregates; its cases are read back
    from the journal when a report iterates them."""
    return tally.summary(
        JournalScores(suite, journal, tally.scoring),
        suite_name=suite.name,
        run_id=journal.run_id,
        n_planned=len(journal.header.case_ids),
        experiment_url=experiment_url,
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


def rescore(suite: Suite, journal: Journal) -> RunSummary:
    """Score a journaled run again under ``suite``'s policies, slots, checks and thresholds.

    The mutator is not called: the journaled post-states are compared with the suite's
    expected states. Nothing is sent to Phoenix (`stateval.run.rescore_to_phoenix` does).

    Raises:
        JournalError: The run has no results, or holds cases the suite does not.
    """
    tally = rescored_tally(suite, journal)
    # no experiment URL: the run's own experiment holds the old scores, not these
    return run_summary(suite, journal, tally, None)


async def rescore_to_phoenix(
    suite: Suite, journal: Journal, target: PhoenixTarget, *, fields_as: FieldsAs | None = None
) -> RunOutcome:
    """`rescore`, and log the rescored run to Phoenix as a new experiment on the run's dataset.

    One run per case (the stored output, linked to the original trace) with every evaluation
    of the new scoring; see `stateval.run._rescore`. Upload problems are in the outcome's
    `UploadStatus`; the summary is complete either way.

    Raises:
        JournalError: The run has no results, or holds cases the suite does not.
    """
    from stateval.run._rescore import rescore_with_phoenix

    return await rescore_with_phoenix(suite, journal, target, fields_as=fields_as)


def rescored_tally(
    suite: Suite, journal: Journal, on_score: Callable[[CaseScore], None] | None = None
) -> RunTally:
    """The journaled cases scored under ``suite`` as it is now, counted (``on_score`` sees
    each case's scores, in suite order).

    Raises:
        JournalError: The run has no results, or holds cases the suite does not.
    """
    unknown = [c for c in journal.results if suite.case(c) is None]
    if unknown:
        raise JournalError(
            f"run {journal.run_id} has cases {suite.path} does not define: {unknown[:5]}"
        )
    if not journal.results:
        raise JournalError(f"run {journal.run_id} has no case results to rescore")
    scoring = Scoring.from_suite(suite)
    tally = RunTally(scoring)
    planned = journal.header.case_ids
    index = {case_id: i for i, case_id in enumerate(planned)}
    done = {c for c in planned if c in journal.results}
    for case, result in journaled_results(suite, journal, done):
        score = score_case(case, result, scoring)
        tally.add(case, score, index[case.id])
        if on_score is not None:
            on_score(score)
    return tally
