"""Running a suite: the runner, case results and scores, run summaries, rescoring.

Nothing here talks to Phoenix: scored cases go to `UploadSink`s and mutator calls into
`SpanFactory` spans, which the Phoenix edge (`stateval.upload`) implements.
"""

from __future__ import annotations

from stateval.episodes import SKIPPED, EpisodeScore, FieldTrajectory, TrajectorySummary, TurnPoint
from stateval.run._compact_scores import SCORES_KEY, compact_scores, scores_fingerprint
from stateval.run._home import ENV_HOME, stateval_home
from stateval.run._journal import Journal
from stateval.run._journal_index import JournalIndex
from stateval.run._merge import ShardLines, merge_shards, merged_tally, open_run, shard_lines
from stateval.run._outcome import (
    OnScored,
    PhoenixTarget,
    RunOutcome,
    UploadProgress,
    UploadStatus,
)
from stateval.run._rescore import rescore, rescored_tally
from stateval.run._results import CaseResult, CaseScore, Evaluation, Judgement
from stateval.run._run_header import RunHeader, list_runs, new_run_id
from stateval.run._runner import (
    AllSinks,
    CaseSpan,
    SpanFactory,
    UploadSink,
    execute,
    iter_repetitions,
    journaled_repetitions,
    submit_episode,
)
from stateval.run._scoring import Scoring, score_case
from stateval.run._session import (
    close_clients,
    find_latest,
    find_resumable,
    run_counted,
    run_local,
    start_journal,
    suite_run,
)
from stateval.run._shard import Shard
from stateval.run._summary import FieldRow, RunSummary, ThresholdResult, threshold_names
from stateval.run._tally import (
    JournalScores,
    RunTally,
    TallyPart,
    journaled_results,
    journaled_scores,
    run_summary,
    summarize,
)

__all__ = [
    "ENV_HOME",
    "SCORES_KEY",
    "SKIPPED",
    "AllSinks",
    "CaseResult",
    "CaseScore",
    "CaseSpan",
    "EpisodeScore",
    "Evaluation",
    "FieldRow",
    "FieldTrajectory",
    "Journal",
    "JournalIndex",
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
    "ShardLines",
    "SpanFactory",
    "TallyPart",
    "ThresholdResult",
    "TrajectorySummary",
    "TurnPoint",
    "UploadProgress",
    "UploadSink",
    "UploadStatus",
    "close_clients",
    "compact_scores",
    "execute",
    "find_latest",
    "find_resumable",
    "iter_repetitions",
    "journaled_repetitions",
    "journaled_results",
    "journaled_scores",
    "list_runs",
    "merge_shards",
    "merged_tally",
    "new_run_id",
    "open_run",
    "rescore",
    "rescored_tally",
    "run_counted",
    "run_local",
    "run_summary",
    "score_case",
    "scores_fingerprint",
    "shard_lines",
    "start_journal",
    "stateval_home",
    "submit_episode",
    "suite_run",
    "summarize",
    "threshold_names",
]
