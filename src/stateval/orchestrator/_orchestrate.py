"""The one orchestrator: `carry_out` runs a `RunRequest` the same way for every entry point.

It starts or resumes the journal, resolves Phoenix and the baseline, runs the episode modes
asked for (the last one the main run), writes the reports as soon as the summary is known,
adds each field's stability over repetitions and the diff against the baseline, and hands back
a `RunResult`. How the run is shown (progress bars, notes, the summary on a terminal, or
nothing in pytest) is the entry point's `RunView`.
"""

from __future__ import annotations

from dataclasses import replace

from stateval.orchestrator._conclude import (
    RunResult,
    RunView,
    conclude,
    resolve_baseline,
    undelivered,
)
from stateval.orchestrator._request import RunRequest
from stateval.run import (
    Journal,
    PhoenixTarget,
    RunSummary,
    find_resumable,
    start_journal,
)
from stateval.suite import EpisodeMode
from stateval.upload import resolve_phoenix

__all__ = ["carry_out"]


def carry_out(request: RunRequest, view: RunView) -> RunResult:
    """Run ``request``: every mode asked for, the reports, the baseline's diff and gate.

    Raises:
        StatevalError: Invalid options, suite, journal or baseline (before any mutator call),
            or a report that cannot be written.
    """
    suite = request.suite
    if suite.drafts:
        view.note(
            f"{len(suite.drafts)} unreviewed drafts left out (no expected_post_state yet; "
            "see docs/traces.md, From traces to a suite)"
        )
    for line in suite.warnings:
        view.note(f"warning: {line}")
    if request.workers > 1 or request.backend != "local":
        from stateval.orchestrator._workers import run_workers

        return run_workers(request, view)
    *before, episode_run = request.modes
    recorded: str | None = None
    if request.resume:
        journal = _resume(request, episode_run, view)
        recorded = journal.header.phoenix_url if not request.no_phoenix else None
    target = resolve_phoenix(request.phoenix_url, request.no_phoenix, recorded, view.note)
    base_run = resolve_baseline(request, target, journal.run_id if request.resume else None, view)
    if not request.resume:
        journal = _start(request, target, episode_run, shared_run=request.shard_group)
    compared = None
    for other_mode in before:  # --mode both: the teacher-forced run first, shown beside
        compared = _run_beside(request, other_mode, target, view)
        view.note(f"Run {journal.run_id}: {journal.header.mode}")
    if not request.resume and request.shard is not None:
        planned = suite.cases if request.limit is None else suite.cases[: request.limit]
        view.note(
            f"Shard {request.shard}: {len(journal.header.case_ids)} of {len(planned)} cases "
            f"(shared run {journal.header.shared_run})"
        )

    def finish(summary: RunSummary) -> None:
        summary = replace(summary, compared=compared)
        view.summary(summary)
        for report in request.reports:
            report.writer.run(summary, report.path)  # whole or not at all (ReportWriteError)

    outcome = view.drive(suite, journal, target, _concurrency(request), finish)
    return conclude(request, RunResult(outcome, compared), base_run, target, view)


def _concurrency(request: RunRequest) -> int:
    return request.concurrency or request.suite.model.concurrency


def _start(
    request: RunRequest,
    target: PhoenixTarget | None,
    mode: EpisodeMode | None,
    shared_run: str | None = None,
) -> Journal:
    return start_journal(
        request.home,
        request.suite,
        limit=request.limit,
        phoenix_url=None if target is None else target.url,
        shard=request.shard,
        shared_run=shared_run,
        fields_as=request.fields_as,
        repetitions=request.repetitions,
        mode=mode,
    )


def _resume(request: RunRequest, mode: EpisodeMode | None, view: RunView) -> Journal:
    """The run ``--resume`` finishes, saying which options it keeps from its first start."""
    journal = find_resumable(request.home, request.suite, request.shard, mode)
    if request.limit is not None:
        view.note("--limit is ignored with --resume (the run keeps its planned cases)")
    if request.fields_as is not None and request.fields_as != journal.header.fields_as:
        view.note(
            f"--fields-as is ignored with --resume (the run keeps {journal.header.fields_as})"
        )
    if request.repetitions != 1:
        view.note("--repeat is ignored with --resume (the run keeps its repetitions)")
    retried = journal.retry_errors() if request.retry_errors else []
    view.note(
        f"Resuming run {journal.run_id}: {len(journal.missing)} of "
        f"{len(journal.header.case_ids)} cases left to run"
        + (f" ({len(retried)} failed, run again)" if request.retry_errors else "")
    )
    return journal


def _run_beside(
    request: RunRequest, mode: EpisodeMode | None, target: PhoenixTarget | None, view: RunView
) -> RunSummary:
    """The run of another episode mode, shown beside the main one (``--mode both``)."""
    if request.resume:
        other = find_resumable(request.home, request.suite, request.shard, mode)
    else:
        other = start_journal(
            request.home,
            request.suite,
            limit=request.limit,
            phoenix_url=None if target is None else target.url,
            shard=request.shard,
            # its own shared run (experiment), apart from the main mode's
            shared_run=None if request.shard_group is None else f"{request.shard_group}-{mode}",
            fields_as=request.fields_as,
            mode=mode,
        )
    view.note(f"Run {other.run_id}: {mode}")
    first = view.drive(request.suite, other, target, _concurrency(request), lambda _: None)
    if undelivered(first.upload):
        assert first.upload is not None
        view.note(
            f"warning: {first.upload.pending} case(s) not uploaded to Phoenix"
            f"{': ' + first.upload.error if first.upload.error else ''}; "
            f"`stateval run {request.suite.path} --resume` uploads them",
            style="yellow",
        )
    return first.summary
