"""Running a suite: the runner, case results and scores, run summaries, rescoring."""

from __future__ import annotations

from stateval.episodes import SKIPPED, EpisodeScore, FieldTrajectory, TrajectorySummary, TurnPoint
from stateval.run._experiment_writer import ExperimentSpec, ExperimentWriter, create_experiment
from stateval.run._journal import Journal, RunHeader, list_runs, new_run_id
from stateval.run._merge import merge_shards, open_run
from stateval.run._outcome import (
    OnScored,
    PhoenixTarget,
    RunOutcome,
    UploadProgress,
    UploadStatus,
)
from stateval.run._rescore import (
    rescore,
    rescore_to_phoenix,
    rescored_tally,
)
from stateval.run._results import CaseResult, CaseScore, Evaluation, Judgement
from stateval.run._runner import (
    AllSinks,
    CaseSpan,
    SpanFactory,
    UploadSink,
    execute,
    iter_repetitions,
    journaled_repetitions,
)
from stateval.run._scoring import Scoring, score_case
from stateval.run._session import (
    close_clients,
    find_latest,
    find_resumable,
    run_suite,
    start_journal,
)
from stateval.run._shard import Shard
from stateval.run._summary import FieldRow, RunSummary, ThresholdResult, threshold_names
from stateval.run._tally import JournalScores, RunTally, journaled_scores, summarize
from stateval.run._target import ENV_HOME, resolve_phoenix, stateval_home

__all__ = [
    "ENV_HOME",
    "SKIPPED",
    "AllSinks",
    "CaseResult",
    "CaseScore",
    "CaseSpan",
    "EpisodeScore",
    "Evaluation",
    "ExperimentSpec",
    "ExperimentWriter",
    "FieldRow",
    "FieldTrajectory",
    "Journal",
    "JournalScores",
    "Judgement",
    "OnScored",
    "PhoenixTarget",
    "RunHeader",
    "RunOutcome",
    "RunSummary",
    "RunTally",
    "Scoring",
    "Shard",
    "SpanFactory",
    "ThresholdResult",
    "TrajectorySummary",
    "TurnPoint",
    "UploadProgress",
    "UploadSink",
    "UploadStatus",
    "close_clients",
    "create_experiment",
    "execute",
    "find_latest",
    "find_resumable",
    "iter_repetitions",
    "journaled_repetitions",
    "journaled_scores",
    "list_runs",
    "merge_shards",
    "new_run_id",
    "open_run",
    "rescore",
    "rescore_to_phoenix",
    "rescored_tally",
    "resolve_phoenix",
    "run_suite",
    "score_case",
    "start_journal",
    "stateval_home",
    "summarize",
    "threshold_names",
]
