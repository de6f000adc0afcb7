"""Where per-field scores go in Phoenix: ``phoenix.fields_as`` (``--fields-as``).

The run's Phoenix sink (`stateval.upload._sink.PhoenixSink`) asks
`stateval.upload.as_evaluation` and `as_annotation` of every score; the modes are
`stateval.upload.UPLOAD_MODES`.

- ``evaluations`` (the default): every score is an experiment evaluation of the case's run, so
  every field is a column of the experiment's compare table. One request per score: the server
  stores 120-195 per second here, which bounds a run with many fields.
- ``annotations``: the case-level scores (and checks) are experiment evaluations; each
  ``field:<path>`` score is a **span annotation** on the case's ``stateval.mutate`` span, posted
  200 per request (about 4x faster on the server). The experiment's metadata gets the per-field
  means (``field_scores``), so the compare page still shows them; the annotations show on each
  run's trace and as columns (with averages and filters) of the spans table of the run's
  project (``phoenix.project``).
- ``both``: all of ``evaluations`` plus the annotations of ``annotations``.
- ``failing``: as ``annotations``, but only the fields that did not pass (score below 1) are
  annotations, queued on the server's bulk inserter (one ``INSERT`` for many rows, no wait for
  span ingestion) and read back until stored; the means on the metadata count every field.

A field score whose case has no recorded span (a run without tracing, or journaled before
stateval recorded span ids) stays an experiment evaluation whatever the mode.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stateval.compare import FIELD_PREFIX
from stateval.run import CaseScore
from stateval.suite import FieldsAs
from stateval.upload._modes import as_annotation
from stateval.upload._rest import SpanAnnotationRecord
from stateval.upload._uploader import PhoenixUploader

__all__ = [
    "FIELD_PARTS_KEY",
    "FIELD_PREFIX",
    "FIELD_SCORES_KEY",
    "FieldAggregates",
    "field_annotations",
    "record_field_scores",
]

FIELD_SCORES_KEY = "field_scores"
"""Experiment metadata key holding ``{name: {"mean", "count"}}`` of the per-field scores."""
FIELD_PARTS_KEY = "field_scores_by_shard"
"""With shards: ``{"I/N": {name: [sum, count]}}``, what `FIELD_SCORES_KEY` is merged from."""


@dataclass(slots=True)
class FieldAggregates:
    """Sums and counts of the ``field:<path>`` scores of some cases (one shard's, or a run's).

    Example:
        >>> agg = FieldAggregates()
        >>> agg.add("c1", [("field:a", 1.0), ("state_accuracy", 0.5)])
        >>> agg.add("c2", [("field:a", 0.0)])
        >>> agg.means()
        {'field:a': {'mean': 0.5, 'count': 2}}
    """

    sums: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    _cases: set[str] = field(default_factory=set)

    def add(self, case_id: str, scores: Iterable[tuple[str, float]]) -> None:
        """Count one case's field scores (a case added twice counts once)."""
        if case_id in self._cases:
            return
        self._cases.add(case_id)
        for name, score in scores:
            if name.startswith(FIELD_PREFIX):
                self.sums[name] = self.sums.get(name, 0.0) + score
                self.counts[name] = self.counts.get(name, 0) + 1

    def means(self) -> dict[str, dict[str, Any]]:
        """``{name: {"mean", "count"}}``, by name."""
        return {
            name: {"mean": round(self.sums[name] / count, 6), "count": count}
            for name, count in sorted(self.counts.items())
        }

    def to_json(self) -> dict[str, list[float]]:
        """``{name: [sum, count]}``, for merging parts kept in experiment metadata."""
        return {name: [self.sums[name], self.counts[name]] for name in sorted(self.counts)}

    @classmethod
    def merged(cls, parts: Iterable[Mapping[str, Any]]) -> FieldAggregates:
        """The sum of parts in `to_json` form (malformed entries are skipped)."""
        total = cls()
        for part in parts:
            for name, pair in part.items():
                if isinstance(pair, list) and len(pair) == 2:
                    total.sums[name] = total.sums.get(name, 0.0) + float(pair[0])
                    total.counts[name] = total.counts.get(name, 0) + int(pair[1])
        return total


async def record_field_scores(
    uploader: PhoenixUploader,
    experiment_id: str,
    aggregates: FieldAggregates,
    shard: str | None = None,
) -> None:
    """Store the per-field means on the experiment's metadata (``field_scores``).

    With ``shard``, each shard keeps its sums under ``field_scores_by_shard`` and
    ``field_scores`` is the merge of every shard's: the metadata is read, merged and written
    back, then read again, and written again if a shard finishing at the same moment overwrote
    this one's part.

    Raises:
        PhoenixUnavailableError: The server cannot be reached or refused the update.
    """
    mine = aggregates.to_json()
    for _ in range(6):
        current = (await uploader.get_experiment(experiment_id)).metadata
        if shard is None:
            await uploader.update_experiment_metadata(
                experiment_id, {FIELD_SCORES_KEY: aggregates.means()}
            )
            return
        parts = dict(current.get(FIELD_PARTS_KEY) or {})
        parts[shard] = mine
        total = FieldAggregates.merged(p for p in parts.values() if isinstance(p, Mapping))
        await uploader.update_experiment_metadata(
            experiment_id, {FIELD_PARTS_KEY: parts, FIELD_SCORES_KEY: total.means()}
        )
        stored = (await uploader.get_experiment(experiment_id)).metadata.get(FIELD_PARTS_KEY)
        if isinstance(stored, Mapping) and stored.get(shard) == mine:
            return
        await asyncio.sleep(0.2 + random.random())


def field_annotations(
    score: CaseScore, experiment_id: str, mode: FieldsAs
) -> list[SpanAnnotationRecord]:
    """The case's scores that ``mode`` posts as annotations of its mutator-call span (none
    without a span), under the experiment's id as identifier: one per experiment, so a
    rescoring keeps the original's."""
    span_id = score.result.span_id
    if span_id is None:
        return []
    return [
        SpanAnnotationRecord(
            span_id=span_id,
            name=e.name,
            annotator_kind=e.annotator_kind,
            score=e.score,
            label=e.label,
            explanation=e.explanation,
            identifier=experiment_id,
        )
        for e in score.evaluations
        if as_annotation(e.name, mode, has_span=True, score=e.score)
    ]
