"""``stateval merge``: the shards of a run reduced to the run, shown and reported as one.

`merge_runs` writes the merged journal (`stateval.run.merge_shards`), makes its summary (from
the shards' counts when the workers handed them back, `stateval.run.merged_tally`; else by
scoring the merged journal as a single run of the suite is scored), shows the summary, writes
the reports, puts the whole run's figures on the experiment the shards shared (where a single
run puts its own), and then, as `carry_out` does, adds the stability over repetitions and the
diff against the baseline with its gate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from stateval.errors import PhoenixUnavailableError
from stateval.orchestrator._conclude import RunResult, RunView, conclude, resolve_baseline
from stateval.orchestrator._request import RunRequest
from stateval.regressions import RunColumns, ScoredRun
from stateval.run import (
    Journal,
    PhoenixTarget,
    RunOutcome,
    RunSummary,
    ShardLines,
    TallyPart,
    merge_shards,
    merged_tally,
    rescore,
    run_summary,
)
from stateval.upload import resolve_phoenix

__all__ = ["merge_runs", "merged_beside"]


_RESOLVE = object()


def merge_runs(
    request: RunRequest,
    shards: Sequence[Journal],
    view: RunView,
    compared: RunSummary | None = None,
    *,
    base_run: ScoredRun | RunColumns | object | None = _RESOLVE,
    tallies: Sequence[TallyPart] | None = None,
    lines: Sequence[ShardLines] | None = None,
) -> RunResult:
    """Merge ``shards`` into one run of ``request.suite`` and conclude it as `carry_out` would.

    Args:
        request: The suite, home, reports, baseline and Phoenix options.
        shards: The journals of every shard of the run.
        view: How the merged run is shown.
        compared: The merged run of the other episode mode, shown beside (``--mode both``).
        base_run: The baseline, when already resolved (default: resolved from ``request``).
        tallies: The shards' counts, in the order of ``shards`` (the workers'): the summary
            adds them up instead of scoring every case again.
        lines: The shards' result lines as the merge copies them, in the order of ``shards``
            (made by the workers, `stateval.run.shard_lines`).

    Raises:
        JournalError: The journals are not every finished shard of one run of the suite.
        StatevalError: A report cannot be written, or the baseline cannot be found.
    """
    merged, summary, target = _merge(request, shards, view, tallies, lines)
    if base_run is _RESOLVE:
        base_run = resolve_baseline(request, target, merged.run_id, view)
    assert base_run is None or isinstance(base_run, ScoredRun | RunColumns)
    summary = replace(summary, compared=compared)
    view.summary(summary)
    for report in request.reports:
        report.writer.run(summary, report.path)
    outcome = RunOutcome(summary, merged)
    return conclude(request, RunResult(outcome, compared), base_run, target, view)


def merged_beside(
    request: RunRequest,
    shards: Sequence[Journal],
    view: RunView,
    tallies: Sequence[TallyPart] | None = None,
    lines: Sequence[ShardLines] | None = None,
) -> RunSummary:
    """The merged run of the other episode mode of ``--mode both`` (shown beside the main)."""
    return _merge(request, shards, view, tallies, lines)[1]


def _merge(
    request: RunRequest,
    shards: Sequence[Journal],
    view: RunView,
    tallies: Sequence[TallyPart] | None,
    lines: Sequence[ShardLines] | None,
) -> tuple[Journal, RunSummary, PhoenixTarget | None]:
    """The merged journal, its summary (the whole run's figures also stored on the shards'
    experiment), and the Phoenix server the shards reported to."""
    suite = request.suite
    # the merged journal is written (in the kernel, by its writer's thread) while the summary
    # is made from the shards' counts; it is durable before anything is shown or reported
    merged = merge_shards(request.home, shards, suite.cases.ids, lines, wait=False)
    header = merged.header
    view.note(
        f"Run {merged.run_id}: {len(header.case_ids)} cases merged from "
        f"{len(shards)} shards ({', '.join(header.merged_from)}), {header.mode}"
    )
    target = _target(request, header.phoenix_url, view)
    experiment = merged.ack("experiment") or {}
    if tallies is None:
        summary = rescore(suite, merged)
    else:
        summary = run_summary(suite, merged, merged_tally(suite, merged, shards, tallies))
    merged.flush()  # JournalError: a write failed
    summary = replace(summary, experiment_url=experiment.get("experiment_url"))
    if target is not None and experiment.get("experiment_id"):
        _record_figures(target, str(experiment["experiment_id"]), summary, view)
    return merged, summary, target


def _target(request: RunRequest, recorded: str | None, view: RunView) -> PhoenixTarget | None:
    """The shards' Phoenix server (or ``--phoenix-url``); None when they had none."""
    if request.no_phoenix or (recorded is None and request.phoenix_url is None):
        return None
    return resolve_phoenix(request.phoenix_url, False, recorded, view.note)


def _record_figures(
    target: PhoenixTarget, experiment_id: str, summary: RunSummary, view: RunView
) -> None:
    """The whole run's figures on the shared experiment's top level, as a single run's."""
    from stateval.upload import PhoenixUploader

    async def record() -> None:
        async with PhoenixUploader(target.url, api_key=target.api_key) as uploader:
            await uploader.update_experiment_metadata(experiment_id, summary.experiment_metadata())

    try:
        asyncio.run(record())
    except PhoenixUnavailableError as exc:
        view.note(f"warning: the run's figures were not stored on its experiment: {exc}")
    else:
        view.note(f"Phoenix: the run's figures stored on experiment {experiment_id}")
