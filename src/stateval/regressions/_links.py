"""Phoenix compare-page links that show the cases a field regressed on.

The filter is written in Phoenix's experiment-run filter language over the two experiments'
``field:<path>`` evaluations (``experiments[0]`` is the baseline): the candidate scored lower,
or the baseline did not evaluate the field (nothing expected, nothing produced: right) and the
candidate got it wrong. With one repetition per case that is exactly the diff's regressed cases.
A filter naming the cases instead (``metadata['case_id'] == ...``) cannot be used: Phoenix 20.26
compiles example-metadata terms without joining the example revisions, so on the compare page
such a filter matches every example.

Phoenix 20.26's compare page does not read a filter from its URL either: the URL opens the two
experiments side by side (baseline first) and carries the filter as ``filterCondition`` for
pasting into the page's filter box (and for tools that pass it to Phoenix's
``compareExperiments`` query).
"""

from __future__ import annotations

from urllib.parse import urlencode

__all__ = ["compare_url", "regression_filter"]


def regression_filter(path: str) -> str:
    """The compare-page filter of the cases where field ``path`` regressed.

    Example:
        >>> for part in regression_filter("a").split(" or "):
        ...     print(part)
        experiments[1].evals['field:a'].score < experiments[0].evals['field:a'].score
        experiments[0].evals['field:a'].score is None and experiments[1].evals['field:a'].score < 1
    """
    name = repr(f"field:{path}")
    base, cand = f"experiments[0].evals[{name}].score", f"experiments[1].evals[{name}].score"
    return f"{cand} < {base} or {base} is None and {cand} < 1"


def compare_url(
    phoenix_url: str, dataset_id: str, base_experiment: str, cand_experiment: str, condition: str
) -> str:
    """The compare page of two experiments (baseline first, as Phoenix expects) with a filter."""
    query = urlencode(
        [
            ("experimentId", base_experiment),
            ("experimentId", cand_experiment),
            ("filterCondition", condition),
        ]
    )
    return f"{phoenix_url.rstrip('/')}/datasets/{dataset_id}/compare?{query}"
