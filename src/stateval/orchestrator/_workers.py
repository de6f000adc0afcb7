"""A run split over worker processes or Ray tasks (``--workers N``, ``--backend ray``), then
merged into one run.

The driver resolves Phoenix and the baseline, names a shared run no earlier run used, and hands
each backend N `ShardTask`s: shard ``I/N`` of the suite's cases (the stable hash of
`stateval.run.Shard`), every mode asked for. Each worker journals its shard and uploads it to
the experiment the shards of a mode share (`run_shard`) and hands back its running counts
(`stateval.run.TallyPart`); the driver then merges the shards of each mode (`merge_runs`): one
journal, and one summary made by adding up the shards' counts (no case is scored again unless a
per-case report reads them), one set of reports, one gate, one experiment per mode, as a single
process would make them. A backend is one function in `BACKENDS`.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, wait
from dataclasses import dataclass, fields, replace
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import Any

from stateval.errors import StatevalError, UsageError
from stateval.orchestrator._conclude import RunResult, RunView
from stateval.orchestrator._merge import merge_runs, merged_beside
from stateval.orchestrator._request import RunRequest
from stateval.run import (
    CaseScore,
    Journal,
    JournalIndex,
    PhoenixTarget,
    Shard,
    ShardLines,
    TallyPart,
    UploadStatus,
    run_counted,
    shard_lines,
    start_journal,
)
from stateval.suite import CasesPart, EpisodeMode, FieldsAs, Suite
from stateval.upload import resolve_phoenix, run_suite

__all__ = [
    "BACKENDS",
    "ShardDone",
    "ShardTask",
    "forked_parts",
    "run_shard",
    "run_workers",
    "shipped",
]


@dataclass(frozen=True, slots=True)
class ShardTask:
    """One shard of a run as a worker runs it: plain values, so it pickles to another process
    or machine.

    Attributes:
        suite_path: The suite file (at this path on the worker's machine too: its case file is
            read there).
        home: The stateval home the shard is journaled under (None: a temporary one, the
            journals shipped back in `ShardDone.journals`).
        shard: ``I/N``.
        groups: The shared run of each mode (the key of its experiment), in mode order.
        modes: The episode modes, one run each, the last the main one.
        limit: Plan only the suite's first ``limit`` cases.
        repetitions: ``--repeat``.
        fields_as: Where field scores go in Phoenix.
        phoenix_url: The Phoenix server (None: none).
        concurrency: Mutator calls at once in the worker.
    """

    suite_path: str
    home: str | None
    shard: str
    groups: tuple[str, ...]
    modes: tuple[EpisodeMode | None, ...]
    limit: int | None
    repetitions: int
    fields_as: FieldsAs | None
    phoenix_url: str | None
    concurrency: int | None


@dataclass(frozen=True, slots=True)
class ShardDone:
    """What a worker hands back.

    Attributes:
        run_ids: The shard's run per mode, in mode order.
        journals: Their journal files' bytes, when the worker journaled in a temporary home.
        upload: What reached Phoenix, summed over the modes (None without Phoenix).
        failure: Why the shard could not run (a `StatevalError`'s line).
        tallies: The shard's running counts per mode, in mode order (merged by the driver
            instead of scoring the cases again).
        indexes: What each mode's journal knows of its file, in mode order (the driver opens
            the journals from them instead of reading every record again).
        lines: Each mode's result lines as the merge copies them (`stateval.run.shard_lines`),
            in mode order.
    """

    run_ids: tuple[str, ...] = ()
    journals: tuple[bytes, ...] = ()
    upload: UploadStatus | None = None
    failure: str | None = None
    tallies: tuple[TallyPart, ...] = ()
    indexes: tuple[JournalIndex, ...] = ()
    lines: tuple[ShardLines, ...] = ()


def run_shard(task: ShardTask, loaded: Suite | None = None) -> ShardDone:
    """Run one shard in every mode of ``task`` (in a worker process or a Ray task): of the
    suite the driver loaded, inherited when forked, else ``loaded`` (`shipped`: its mutator
    and judge built here, its cases read from the file at its path, each line checked against
    the driver's load), else loaded here."""
    from stateval.suite import load_suite, with_mutator

    home = Path(task.home) if task.home is not None else Path(tempfile.mkdtemp(prefix="stateval-"))
    try:
        suite = _FORKED.suites.get(task.suite_path)
        if suite is None:
            suite = load_suite(task.suite_path) if loaded is None else with_mutator(loaded)
        _FORKED.slot = _SLOT * (Shard.parse(task.shard).index - 1)
        target = None
        if task.phoenix_url is not None:
            target = PhoenixTarget(task.phoenix_url, os.environ.get("PHOENIX_API_KEY") or None)
        ids: list[str] = []
        uploads: list[UploadStatus] = []
        tallies: list[TallyPart] = []
        indexes: list[JournalIndex] = []
        lines: list[ShardLines] = []
        paths: list[Path] = []
        for mode, group in zip(task.modes, task.groups, strict=True):
            journal = start_journal(
                home,
                suite,
                limit=task.limit,
                phoenix_url=task.phoenix_url,
                shard=Shard.parse(task.shard),
                shared_run=group,
                fields_as=task.fields_as,
                repetitions=task.repetitions,
                mode=mode,
            )
            concurrency = task.concurrency or suite.model.concurrency
            if target is None:  # the counts only: the driver summarises the whole run
                tally = asyncio.run(
                    run_counted(suite, journal, concurrency=concurrency, on_case=_FORKED.count)
                )
            else:
                outcome = asyncio.run(
                    run_suite(
                        suite,
                        journal,
                        concurrency=concurrency,
                        phoenix=target,
                        on_case=_FORKED.count,
                    )
                )
                assert outcome.tally is not None  # a run's outcome carries its counts
                tally = outcome.tally
                if outcome.upload is not None:
                    uploads.append(outcome.upload)
            ids.append(journal.run_id)
            tallies.append(tally.part())
            indexes.append(journal.index())
            lines.append(shard_lines(journal))
            paths.append(journal.path)
        journals = () if task.home is not None else tuple(Path(p).read_bytes() for p in paths)
        return ShardDone(
            tuple(ids),
            journals,
            _sum_uploads(uploads),
            tallies=tuple(tallies),
            indexes=tuple(indexes),
            lines=tuple(lines),
        )
    except StatevalError as exc:
        return ShardDone(failure=str(exc))
    finally:
        if task.home is None:
            shutil.rmtree(home, ignore_errors=True)


def shipped(suite: Suite) -> Suite:
    """What a spawned worker or a Ray task gets of the driver's loaded suite (pickled once):
    all `load_suite` found but the mutator and the judge, which `run_shard` builds where it
    runs; its path absolute, as a task loading it at ``ShardTask.suite_path`` would see it."""
    return replace(suite, path=suite.path.resolve(), mutator=None, judge=None)


def _sum_uploads(uploads: Sequence[UploadStatus]) -> UploadStatus | None:
    if not uploads:
        return None
    counts = [f.name for f in fields(UploadStatus) if isinstance(getattr(uploads[0], f.name), int)]
    sums = {name: sum(getattr(u, name) for u in uploads) for name in counts}
    error = next((u.error for u in uploads if u.error), None)
    return replace(uploads[-1], error=error, **sums)


Backend = Callable[[Sequence[ShardTask], RunRequest, "ShardsShown"], list[ShardDone]]
"""Runs the tasks somewhere and hands back their results, in task order, showing how many
cases they have scored where it can."""

ShardsShown = Callable[[int, int], None]
"""Shows how many cases the workers have scored so far, and how many of them failed."""


class _Inherited:
    """What the driver's local workers inherit when forked (`_FORKED`): the driver's loaded
    suite by path (imported, its cases validated and indexed: no second interpreter start and
    load per worker, about 1.5 s and 55 µs per case of the suite each), and the counters of
    the cases they have scored and of those that failed (shared memory the driver reads to
    show progress): each worker adds to its own two, a cache line apart, without a lock (one
    writer each; a lock shared by the workers cost ~3.5 µs a case, more when they met)."""

    def __init__(self) -> None:
        self.suites: dict[str, Suite] = {}
        self.scored: Any = None  # a multiprocessing RawArray("q"): scored, failed per worker
        self.slot = 0  # this worker's counters: scored[slot], scored[slot + 1]

    def count(self, score: CaseScore) -> None:
        """Count a scored case (in a worker forked while the driver counts them)."""
        scored = self.scored
        if scored is not None:
            scored[self.slot] += 1
            if not score.ok:
                scored[self.slot + 1] += 1

    def totals(self) -> tuple[int, int]:
        """The cases every worker has scored so far, and how many failed (in the driver)."""
        counts = self.scored[:]
        return sum(counts[0::_SLOT]), sum(counts[1::_SLOT])


_FORKED = _Inherited()
_SLOT = 8
"""Counters a worker's slot spans (64 bytes: two workers never write one cache line)."""
_SHOW_EVERY = 0.2
"""Seconds between two looks at the workers' counts."""


def _local(tasks: Sequence[ShardTask], request: RunRequest, shown: ShardsShown) -> list[ShardDone]:
    """One process per task on this machine: forked from the driver where the platform can
    (inheriting the loaded suite and the counters of scored cases, `_FORKED`), else spawned
    (a fresh interpreter each, handed the `shipped` suite, no progress shown)."""
    method = "fork" if "fork" in get_all_start_methods() else "spawn"
    context = get_context(method)
    forked = method == "fork"
    _FORKED.suites.update({task.suite_path: request.suite for task in tasks})
    _FORKED.scored = context.RawArray("q", _SLOT * len(tasks)) if forked else None
    loaded = None if forked else shipped(request.suite)
    try:
        with ProcessPoolExecutor(max_workers=len(tasks), mp_context=context) as pool:
            running = [pool.submit(run_shard, task, loaded) for task in tasks]
            while True:
                pending = wait(running, timeout=_SHOW_EVERY).not_done
                if _FORKED.scored is not None:
                    shown(*_FORKED.totals())
                if not pending:
                    return [future.result() for future in running]
    finally:
        _FORKED.suites.clear()
        _FORKED.scored = None


_LOADING: list[Callable[[int], CasesPart]] = []
"""The load of one part of the case file that `forked_parts`'s processes inherit."""


def _load_forked(part: int) -> CasesPart:
    return _LOADING[0](part)


def forked_parts(load: Callable[[int], CasesPart], parts: int) -> list[CasesPart]:
    """The `stateval.suite.PartsMap` of ``--workers N``: the suite's case file validated in
    ``parts`` byte ranges, the first in this process and the others side by side in processes
    forked from it (one after the other where the platform cannot fork)."""
    if parts <= 1 or "fork" not in get_all_start_methods():
        return [load(part) for part in range(parts)]
    _LOADING.append(load)
    try:
        context = get_context("fork")
        with ProcessPoolExecutor(max_workers=parts - 1, mp_context=context) as pool:
            others = [pool.submit(_load_forked, part) for part in range(1, parts)]
            first = load(0)
            return [first, *(future.result() for future in others)]
    finally:
        _LOADING.clear()


def _ray(tasks: Sequence[ShardTask], request: RunRequest, shown: ShardsShown) -> list[ShardDone]:
    """One Ray task per shard on the cluster at ``request.ray_address`` (``RAY_ADDRESS``
    when None; a local Ray when neither is set), each handed the `shipped` suite (put in
    the object store once), journaled on its node and shipped back (no progress shown until
    they are done)."""
    try:
        import ray
    except ImportError as exc:
        raise UsageError("--backend ray needs Ray: pip install 'stateval[ray]'") from exc
    if not ray.is_initialized():
        ray.init(address=request.ray_address, log_to_driver=False)
    run: Callable[[ShardTask, Suite], ShardDone] = run_shard  # the call Ray's types check
    remote = ray.remote(num_cpus=1)(run)
    loaded = ray.put(shipped(request.suite))  # once in the object store, read by every task
    homeless = [replace(task, home=None) for task in tasks]
    return list(ray.get([remote.remote(task, loaded) for task in homeless]))


BACKENDS: dict[str, Backend] = {"local": _local, "ray": _ray}
"""Where the shards of a ``--workers`` run go (``--backend``)."""


def run_workers(request: RunRequest, view: RunView) -> RunResult:
    """Run ``request`` as ``request.workers`` shards on its backend, then merge them.

    Raises:
        StatevalError: Options that do not combine, a shard that could not run, or what
            `merge_runs` raises.
    """
    from stateval.orchestrator._conclude import resolve_baseline

    if request.resume or request.shard is not None:
        which = "--resume" if request.resume else "--shard"
        raise UsageError(
            f"--workers and --backend do not combine with {which} (run the shards "
            "yourself with --shard I/N, then `stateval merge`)"
        )
    backend = BACKENDS.get(request.backend)
    if backend is None:
        raise UsageError(f"--backend {request.backend!r}: expected one of {', '.join(BACKENDS)}")
    suite = request.suite
    target = resolve_phoenix(request.phoenix_url, request.no_phoenix, None, view.note)
    base_run = resolve_baseline(request, target, None, view)
    key = request.shard_group or secrets.token_hex(6)
    groups = tuple(
        key if i == len(request.modes) - 1 else f"{key}-{mode}"
        for i, mode in enumerate(request.modes)
    )
    n = request.workers
    tasks = [
        ShardTask(
            suite_path=str(suite.path.resolve()),
            home=str(request.home.resolve()),
            shard=f"{i}/{n}",
            groups=groups,
            modes=request.modes,
            limit=request.limit,
            repetitions=request.repetitions,
            fields_as=request.fields_as,
            phoenix_url=None if target is None else target.url,
            concurrency=request.concurrency,
        )
        for i in range(1, n + 1)
    ]
    view.note(f"{n} {request.backend} workers, shared run {key}")
    planned = len(suite.cases) if request.limit is None else min(request.limit, len(suite.cases))
    with view.shards(suite.name, planned * request.repetitions * len(request.modes)) as shown:
        done = backend(tasks, request, shown)
    for task, shard in zip(tasks, done, strict=True):
        if shard.failure is not None:
            raise StatevalError(f"shard {task.shard}: {shard.failure}")
        for run_id, data in zip(shard.run_ids, shard.journals, strict=False):
            _store(request.home, run_id, data)
    per_mode = [
        (
            [Journal.from_index(request.home, d.indexes[m]) for d in done],
            [d.tallies[m] for d in done],
            [d.lines[m] for d in done],
        )
        for m in range(len(groups))
    ]
    *before, (main, tallies, lines) = per_mode
    compared = None
    for shards, parts, copies in before:
        compared = merged_beside(request, shards, view, parts, copies)
    result = merge_runs(
        request, main, view, compared, base_run=base_run, tallies=tallies, lines=lines
    )
    upload = _sum_uploads([d.upload for d in done if d.upload is not None])
    outcome = replace(result.outcome, upload=upload)
    return replace(result, outcome=outcome)


def _store(home: Path, run_id: str, data: bytes) -> None:
    """A shipped shard journal, journaled under ``home`` as the run it is."""
    folder = home / "runs" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "journal.jsonl").write_bytes(data)
