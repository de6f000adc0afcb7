"""A rescored run logged to Phoenix: a new experiment on the run's dataset, with the new scores.

The journaled post-states are scored under the suite as it is now (`stateval.run.rescored_tally`)
and go through the same `PhoenixSink` as a run's: one experiment run per case (the stored output,
linked to the original trace, so the mutator call still opens from it) with every evaluation of
the new scoring. Each rescoring is a new experiment, ``<prefix>-rescore-<run_id>-<n>``; its
acknowledgements are journaled under ``rescore-<n>:`` so the original experiment's stay intact.
"""

from __future__ import annotations

from stateval.errors import PhoenixUnavailableError
from stateval.run import (
    CaseScore,
    Journal,
    OnScored,
    PhoenixTarget,
    RunOutcome,
    rescored_tally,
    run_summary,
    submit_episode,
)
from stateval.suite import FieldsAs, Suite
from stateval.upload._experiment_writer import ExperimentSpec
from stateval.upload._sink import PhoenixSink
from stateval.upload._uploader import PhoenixUploader

__all__ = ["rescore_experiment", "rescore_to_phoenix"]

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


async def rescore_to_phoenix(
    suite: Suite,
    journal: Journal,
    target: PhoenixTarget,
    *,
    fields_as: FieldsAs | None = None,
    on_scored: OnScored | None = None,
) -> RunOutcome:
    """`rescore`, and log the rescored run to Phoenix as a new experiment on the run's dataset:
    one run per case (the stored output, linked to the original trace) with every evaluation of
    the new scoring.

    The mutator and the judge are not called (journaled verdicts are reused). If Phoenix cannot
    be reached or fails midway, the outcome's `UploadStatus` says so; the summary is complete
    either way. A rescoring that did not finish uploading is not resumed: rescore again.
    ``fields_as`` (default: the suite's ``phoenix.fields_as``) says where field scores go; as
    span annotations they go on the original run's mutator-call spans, kept apart from the
    original experiment's by their identifier (the new experiment's id). ``on_scored`` gets
    the summary as soon as every case is scored, with the upload's progress (None when no
    experiment could be made), as in `stateval.upload.run_suite`.

    Raises:
        JournalError: The run has no results, or holds cases the suite does not.
    """
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
