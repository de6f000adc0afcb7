"""Naming the two sides of a diff: a journaled run (``latest``, ``latest~1``, a run id) or a
Phoenix experiment (an id or a UI URL)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stateval.compare import MetricsAccumulator
from stateval.errors import DiffError
from stateval.regressions._columns import ColumnsBuilder, RunColumns
from stateval.regressions._phoenix_rest import parse_experiment, read_experiment
from stateval.regressions._scores import ExperimentLink, Observation, ScoredRun
from stateval.run import (
    SCORES_KEY,
    CaseResult,
    CaseScore,
    Journal,
    RunHeader,
    Scoring,
    compact_scores,
    journaled_results,
    list_runs,
    score_case,
    scores_fingerprint,
)
from stateval.suite import Case, Suite, load_suite

__all__ = ["RunResolver", "experiment_link", "local_run"]

_LATEST = re.compile(r"^latest(?:~(?P<back>\d+))?$")
_RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")  # stateval.run.new_run_id's shape


def experiment_link(journal: Journal) -> ExperimentLink | None:
    """The Phoenix experiment a journaled run was uploaded to, if it was."""
    dataset = journal.ack("dataset")
    experiment = journal.ack("experiment")
    if dataset is None or experiment is None:
        return None
    url = experiment.get("url") or dataset.get("url") or journal.header.phoenix_url
    if not isinstance(url, str):
        return None
    return ExperimentLink(
        url.rstrip("/"), str(dataset["dataset_id"]), str(experiment["experiment_id"])
    )


def local_run(
    journal: Journal,
    suite: Suite,
    *,
    journaled: bool = True,
    each: Callable[[str, Sequence[Observation]], None] | None = None,
) -> RunColumns:
    """A journaled run, every repetition of every case scored under ``suite``'s current
    policies (both sides of a diff are scored alike), as the columns a diff reads: each case
    is reduced to its place in the columns, then dropped.

    A run whose header's scores fingerprint is the suite's (`stateval.run.scores_fingerprint`)
    is read from the compact scores its result records hold, unless ``journaled`` is False;
    otherwise, and for a record without them, the case is scored again. Both ways give the
    same columns. ``each`` is handed each case's repetitions before they are dropped (a
    repeated run's stability, `stateval.regressions.RepetitionsBuilder`).
    """
    known = set(suite.cases.ids)  # ids only: no case is parsed twice
    unknown = [c for c in journal.results if c not in known]
    if unknown:
        raise DiffError(
            f"run {journal.run_id} has cases {suite.path} no longer defines: {unknown[:5]}; "
            "compare it under its own suite file (--suite)"
        )
    scoring = Scoring.from_suite(suite)
    figures = scoring.accumulator()  # counts nothing: gives each case's share of the figures
    builder = ColumnsBuilder()
    current = journal.header.scores_fingerprint == scores_fingerprint(scoring, suite.cases_hash)
    if journaled and current:
        cases = _journaled_cases(journal, suite, scoring, figures)
    else:
        cases = _scored_cases(journal, suite, scoring, figures)
    for case_id, reps in cases:
        builder.add(case_id, reps)
        if each is not None:
            each(case_id, reps)
    held = None
    if not journal.complete:
        held = f"{len(journal.results)} of {len(journal.header.case_ids)} planned cases"
    return builder.build(
        f"run {journal.run_id}",
        experiment=experiment_link(journal),
        suite_name=journal.header.suite_name,
        unfinished=held,
    )


def _observed(
    case: Case, score: CaseScore, scoring: Scoring, figures: MetricsAccumulator
) -> Observation:
    """One scored repetition as the diff reads it: through its compact scores, as the run
    journals them, so a case scored again reads as its journaled scores do."""
    compact = compact_scores(case, score, scoring, figures)
    if compact is None:  # no scoring core: read its evaluations
        shares = figures.case_shares(
            score.metrics_under(scoring, case), case.metadata, score.comparison
        )
        return Observation.from_case_score(score, shares)
    return Observation.from_compact(compact, error=not score.ok, time_used=score.result.time_used)


def _from_record(
    record: dict[str, Any], suite: Suite, scoring: Scoring, figures: MetricsAccumulator
) -> Observation | None:
    """A journaled repetition's observation: its compact scores, else the case scored again
    (None when the suite no longer has the case)."""
    compact = record.get(SCORES_KEY)
    if compact is not None:
        error = record.get("error") is not None or record.get("post_state") is None
        return Observation.from_compact(
            compact, error=error, time_used=float(record.get("time_used") or 0.0)
        )
    case = suite.case(str(record["case_id"]))
    if case is None:
        return None
    return _observed(
        case, score_case(case, CaseResult.from_dict(record), scoring), scoring, figures
    )


def _journaled_cases(
    journal: Journal, suite: Suite, scoring: Scoring, figures: MetricsAccumulator
) -> Iterator[tuple[str, list[Observation]]]:
    """(case id, its repetitions' observations) read from the journal's compact scores, in
    the order `_scored_cases` gives them, without reading the case file."""
    later = _later_repetitions(journal)
    ids = [c for c in suite.cases.ids if c in journal.results]
    with journal.repeated.opened() as record_of:
        for case_id, first in journal.results.read(ids):
            if first is not None:
                records = (first, *(record_of((case_id, r)) for r in later.pop(case_id, ())))
                reps = [_from_record(r, suite, scoring, figures) for r in records]
                yield case_id, [obs for obs in reps if obs is not None]
        for case_id, repetitions in later.items():  # repetitions whose first was not journaled
            if suite.case(case_id) is not None:
                reps = [
                    _from_record(record_of((case_id, r)), suite, scoring, figures)
                    for r in repetitions
                ]
                yield case_id, [obs for obs in reps if obs is not None]


def _scored_cases(
    journal: Journal, suite: Suite, scoring: Scoring, figures: MetricsAccumulator
) -> Iterator[tuple[str, list[Observation]]]:
    """(case id, its journaled repetitions scored again), the case file and the journal each
    read through once in suite order (no seek per case)."""
    later = _later_repetitions(journal)
    with journal.repeated.opened() as record_of:
        for case, result in journaled_results(suite, journal, journal.results.keys()):
            records = (record_of((case.id, r)) for r in later.pop(case.id, ()))
            results = (result, *map(CaseResult.from_dict, records))
            yield (
                case.id,
                [_observed(case, score_case(case, r, scoring), scoring, figures) for r in results],
            )
        for case_id, repetitions in later.items():  # repetitions whose first was not journaled
            found = suite.case(case_id)
            if found is not None:
                again = [CaseResult.from_dict(record_of((case_id, r))) for r in repetitions]
                yield (
                    case_id,
                    [
                        _observed(found, score_case(found, r, scoring), scoring, figures)
                        for r in again
                    ],
                )


def _later_repetitions(journal: Journal) -> dict[str, list[int]]:
    """Case id -> its journaled repetitions after the first, in repetition order (the cases in
    the order of their first such record among the second repetitions, then the third...)."""
    later: dict[str, list[int]] = {}
    for case_id, repetition in sorted(journal.repeated, key=lambda key: key[1]):
        later.setdefault(case_id, []).append(repetition)
    return later


@dataclass(slots=True)
class RunResolver:
    """Turns the names a user gives into runs.

    Args:
        home: The stateval home (run journals).
        suite: The suite file ``latest`` refers to, and whose policies score local runs
            (default: the suite of the run named by id, else of the newest run).
        phoenix: Returns (server URL, API key) for experiment ids given without a URL.
        exclude: A run id ``latest`` skips (the run being gated).
    """

    home: Path
    suite: Path | None = None
    phoenix: Callable[[], tuple[str, str | None]] | None = None
    exclude: str | None = None
    api_key: str | None = None
    _suites: dict[Path, Suite] = field(default_factory=dict, repr=False)

    def load(self, path: Path) -> Suite:
        """The suite at ``path`` (its mutator not loaded), read once per resolver.

        Raises:
            SuiteProblemsError: The suite does not load.
        """
        key = path.resolve()
        suite = self._suites.get(key)
        if suite is None:
            suite = self._suites[key] = load_suite(path, load_mutator=False)
        return suite

    def is_local(self, name: str) -> bool:
        """True for ``latest``, ``latest~N`` and run ids under the home."""
        return bool(_LATEST.match(name)) or name in list_runs(self.home)

    def suite_path(self, *names: str) -> Path:
        """The suite that scores local runs and scopes ``latest``."""
        if self.suite is not None:
            return self.suite.resolve()
        runs = list_runs(self.home)
        for name in names:
            if name in runs:
                return Path(Journal.open(self.home, name).header.suite_path)
        headers = self._headers()
        if not headers:
            raise DiffError(f"no runs under {self.home / 'runs'}")
        return Path(headers[-1].suite_path)

    def _headers(self) -> list[RunHeader]:
        """Every run's header, oldest first by creation time (run ids made within one second
        do not sort by time)."""
        headers = [Journal.open(self.home, r).header for r in list_runs(self.home)]
        return sorted(headers, key=lambda h: h.created_at)

    def run_id(self, name: str, suite_path: Path) -> str:
        """The run id ``name`` stands for (``latest~N`` within the suite)."""
        match = _LATEST.match(name)
        if match is None:
            return name
        target = str(suite_path.resolve())
        runs = [
            h.run_id for h in self._headers() if h.run_id != self.exclude and h.suite_path == target
        ]
        back = int(match["back"] or 0)
        if back >= len(runs):
            raise DiffError(
                f"{name}: {suite_path} has {len(runs)} run(s) under {self.home / 'runs'}"
            )
        return runs[-1 - back]

    def resolve(self, name: str, *others: str) -> ScoredRun | RunColumns:
        """The run or experiment ``name`` names (``others``: the other names given, which
        help find the suite).

        Raises:
            DiffError: Nothing by that name.
        """
        if self.is_local(name):
            suite_path = self.suite_path(name, *others)
            journal = Journal.open(self.home, self.run_id(name, suite_path))
            return local_run(journal, self.load(suite_path))
        if _RUN_ID.fullmatch(name):  # a run id, mistyped: no experiment is named like one
            known = ", ".join(list_runs(self.home)[-5:]) or "none"
            raise DiffError(f"no run {name!r} under {self.home / 'runs'} (latest: {known})")
        address = parse_experiment(name)
        url, key = address.phoenix_url, self.api_key
        if url is None:
            if self.phoenix is None:
                raise DiffError(
                    f"{name}: no run by that id under {self.home / 'runs'}, and no Phoenix "
                    "server to look for an experiment (give --phoenix-url)"
                )
            try:
                url, key = self.phoenix()
            except DiffError as exc:
                raise DiffError(f"{name}: {exc}") from None
        return read_experiment(url, address.experiment_id, api_key=key)
