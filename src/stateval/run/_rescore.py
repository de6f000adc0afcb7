"""A rescored run logged to Phoenix: a new experiment on the run's dataset, with the new scores.

The journaled post-states are scored under the suite as it is now (`rescored_tally`) and go
through the same `PhoenixSink` as a run's: one experiment run per case (the stored output,
linked to the original trace, so the mutator call still opens from it) with every evaluation of
the new scoring. Each rescoring is a new experiment, ``<prefix>-rescore-<run_id>-<n>``; its
acknowledgements are journaled under ``rescore-<n>:`` so the original experiment's stay intact.
"""

from __future__ import annotations

from collections.abc import Callable

from stateval.episodes import EpisodeScore
from stateval.errors import JournalError, PhoenixUnavailableError
from stateval.run._episode_tracker import episode_tracker
from stateval.run._experiment_writer import ExperimentSpec
from stateval.run._journal import Journal
from stateval.run._outcome import OnScored, PhoenixTarget, RunOutcome
from stateval.run._pipeline import submit_episode
from stateval.run._results import CaseScore
from stateval.run._scoring import Scoring, score_case
from stateval.run._summary import RunSummary
from stateval.run._tally import RunTally, journaled_results, run_summary
from stateval.suite import FieldsAs, Suite

__all__ = [
    "rescore",
    "rescore_experiment",
    "rescore_to_phoenix",
    "rescore_with_phoenix",
    "rescored_tally",
]

_MAX_REQUESTS = 16


def _next_rescore(journal: Journal) -> int:
    n = 1
    while journal.ack(f"rescore-{n}:experiment") is not None:
        n += 1
    return n


def rescore_experiment(suite: Suite, journal: Journal, n: int) -> ExperimentSpec:
    """The experiment of the ``n``-th rescoring of ``journal``'s run under ``suite``."""
    header = journal.header
    original = journal.ack("experiment") or {}
    name = f"{suite.phoenix.experiment_prefix}-rescore-{header.run_id}-{n}"
    return ExperimentSpec(
        name=name,
        description=f"stateval run {header.run_id} of {header.suite_name}, rescored ({n})",
        metadata={
            "rescored": True,
            "rescore": n,
            "stateval_run_id": header.run_id,
            "original_experiment_id": original.get("experiment_id"),
            "original_experiment_name": header.experiment_name,
            "suite": suite.name,
            "suite_path": str(suite.path.resolve()),
            "suite_hash": suite.suite_hash,
            "original_suite_hash": header.suite_hash,
            "cases_hash": suite.cases_hash,
            "mutator": header.mutator,
            "cases": len(header.case_ids),
        },
    )


async def rescore_with_phoenix(
    suite: Suite,
    journal: Journal,
    target: PhoenixTarget,
    *,
    fields_as: FieldsAs | None = None,
    on_scored: OnScored | None = None,
) -> RunOutcome:
    """Rescore ``journal``'s run under ``suite`` and log it to Phoenix as a new experiment.

    The mutator and the judge are not called (journaled verdicts are reused). If Phoenix cannot
    be reached or fails midway, the outcome's `UploadStatus` says so; the summary is complete
    either way. A rescoring that did not finish uploading is not resumed: rescore again.
    ``fields_as`` (default: the suite's ``phoenix.fields_as``) says where field scores go; as
    span annotations they go on the original run's mutator-call spans, kept apart from the
    original experiment's by their identifier (the new experiment's id). ``on_scored`` gets
    the summary as soon as every case is scored, with the upload's progress (None when no
    experiment could be made), as in `stateval.run.run_suite`.

    Raises:
        JournalError: The run has no results, or holds cases the suite does not.
    """
    from stateval.run._phoenix_sink import PhoenixSink
    from stateval.upload import PhoenixUploader

    n = _next_rescore(journal)
    async with PhoenixUploader(
        target.url, api_key=target.api_key, max_concurrency=_MAX_REQUESTS
    ) as uploader:
        sink = PhoenixSink(
            uploader,
            journal,
            target.url,
            scope=f"rescore-{n}:",
            fields_as=fields_as or suite.phoenix.fields_as,
        )
        try:
            await sink.prepare(suite, rescore_experiment(suite, journal, n))
        except PhoenixUnavailableError as exc:
            sink.error = str(exc)
        sink.start()
        scored: list[str] = []

        def submit(score: CaseScore) -> None:
            case = suite.case(score.case_id)
            assert case is not None  # rescored_tally only scores the suite's cases
            scored.append(score.case_id)
            sink.submit(case, score)

        tally = rescored_tally(suite, journal, submit, lambda e: submit_episode(sink, e))
        summary = run_summary(suite, journal, tally, sink.experiment_url)
        if on_scored is not None:
            on_scored(summary, sink.progress if sink.experiment_id is not None else None)
        await sink.finish()
        if sink.ready:
            await sink.record_summary(summary)
    return RunOutcome(summary, journal, sink.status(scored))


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
    suite: Suite,
    journal: Journal,
    target: PhoenixTarget,
    *,
    fields_as: FieldsAs | None = None,
    on_scored: OnScored | None = None,
) -> RunOutcome:
    """`rescore`, and log the rescored run to Phoenix as a new experiment on the run's dataset.

    One run per case (the stored output, linked to the original trace) with every evaluation
    of the new scoring; see `stateval.run._rescore`. Upload problems are in the outcome's
    `UploadStatus`; the summary is complete either way. ``on_scored`` gets the summary once
    every case is scored, while the upload goes on (to show its progress).

    Raises:
        JournalError: The run has no results, or holds cases the suite does not.
    """
    return await rescore_with_phoenix(
        suite, journal, target, fields_as=fields_as, on_scored=on_scored
    )


def rescored_tally(
    suite: Suite,
    journal: Journal,
    on_score: Callable[[CaseScore], None] | None = None,
    on_episode: Callable[[EpisodeScore], None] | None = None,
) -> RunTally:
    """The journaled cases scored under ``suite`` as it is now, counted (``on_score`` sees
    each case's scores, in suite order; ``on_episode`` each episode, once its last turn was).

    Raises:
        JournalError: The run has no results, or holds cases the suite does not.
    """
    known = set(suite.cases.ids)  # not `suite.case`: that reads and builds each case
    unknown = [c for c in journal.results if c not in known]
    if unknown:
        raise JournalError(
            f"run {journal.run_id} has cases {suite.path} does not define: {unknown[:5]}"
        )
    if not journal.results:
        raise JournalError(f"run {journal.run_id} has no case results to rescore")
    scoring = Scoring.from_suite(suite)
    planned = journal.header.case_ids
    tally = RunTally(
        scoring, episode_tracker(suite.episodes, planned, journal.header.mode, scoring)
    )
    index = {case_id: i for i, case_id in enumerate(planned)}
    done = {c for c in planned if c in journal.results}
    for case, result in journaled_results(suite, journal, done):
        score = score_case(case, result, scoring)
        episode = tally.add(case, score, index[case.id])
        if on_score is not None:
            on_score(score)
        if episode is not None and on_episode is not None:
            on_episode(episode)
    return tally
