"""Rescoring a journaled run: its journaled post-states scored under the suite as it is now
(`rescored_tally`), the mutator and the judge not called again. Logging the rescored run to
Phoenix is `stateval.upload.rescore_to_phoenix`.
"""

from __future__ import annotations

from collections.abc import Callable

from stateval.episodes import EpisodeScore
from stateval.errors import JournalError
from stateval.run._episode_tracker import episode_tracker
from stateval.run._journal import Journal
from stateval.run._results import CaseScore
from stateval.run._scoring import Scoring, score_case
from stateval.run._summary import RunSummary
from stateval.run._tally import RunTally, journaled_results, run_summary
from stateval.suite import Suite

__all__ = ["rescore", "rescored_tally"]


def rescore(suite: Suite, journal: Journal) -> RunSummary:
    """Score a journaled run again under ``suite``'s policies, slots, checks and thresholds.

    The mutator is not called: the journaled post-states are compared with the suite's
    expected states. Nothing is sent to Phoenix (`stateval.upload.rescore_to_phoenix` does).

    Raises:
        JournalError: The run has no results, or holds cases the suite does not.
    """
    tally = rescored_tally(suite, journal)
    # no experiment URL: the run's own experiment holds the old scores, not these
    return run_summary(suite, journal, tally, None)


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
