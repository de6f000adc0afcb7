"""Bulk span annotations and experiment lookups against a real Phoenix, read back over REST."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from opentelemetry import trace

from stateval.errors import PhoenixUnavailableError
from stateval.tracing import configure_tracing
from stateval.upload import Example, PhoenixUploader, SpanAnnotationRecord

pytestmark = pytest.mark.phoenix


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _records(span_ids: list[str], fields: int) -> list[SpanAnnotationRecord]:
    return [
        SpanAnnotationRecord(
            span_id=span_id,
            name=f"field:f{j}",
            score=float((i + j) % 3 != 0),
            label="matching" if (i + j) % 3 else "mismatched",
            explanation=f"span {i} field {j}",
            metadata={"case_id": f"case-{i}"},
        )
        for i, span_id in enumerate(span_ids)
        for j in range(fields)
    ]


async def test_annotations_posted_before_their_spans_are_ingested_are_all_stored(
    phoenix_url: str,
) -> None:
    project = _name("annotations")
    tracing = configure_tracing(project, phoenix_url)
    # The spans are started but not ended, so none can be on the server when the annotations
    # are first posted: the uploader must wait for their ingestion.
    spans = [tracing.tracer.start_span(f"case-{i}") for i in range(12)]
    span_ids = [format(s.get_span_context().span_id, "016x") for s in spans]
    records = _records(span_ids, 5)
    stored_counts: list[int] = []
    async with PhoenixUploader(phoenix_url) as phoenix:
        posting = asyncio.create_task(
            phoenix.post_span_annotations(records, batch_size=16, on_stored=stored_counts.append)
        )
        await asyncio.sleep(0)
        for span in spans:
            span.end()
        await asyncio.to_thread(tracing.shutdown)
        assert await posting == len(records)
        # Posting again replaces: still one annotation per span and name.
        assert await phoenix.post_span_annotations(records[:7]) == 7
        stored = await phoenix.list_span_annotations(project, span_ids)

    assert sum(stored_counts) == len(records)
    assert len(stored) == len(records)
    got = {(a.span_id, a.name): a for a in stored}
    first = got[(span_ids[0], "field:f0")]
    assert (first.score, first.label, first.annotator_kind) == (0.0, "mismatched", "CODE")
    assert first.explanation == "span 0 field 0"
    assert first.metadata == {"case_id": "case-0"}
    assert got[(span_ids[10], "field:f4")].score == 1.0


async def test_annotations_of_a_span_that_never_arrives_fail_with_its_id(
    phoenix_url: str,
) -> None:
    project = _name("annotations-lost")
    tracing = configure_tracing(project, phoenix_url)
    with tracing.tracer.start_as_current_span("present"):
        present = format(trace.get_current_span().get_span_context().span_id, "016x")
    await asyncio.to_thread(tracing.shutdown)
    lost = "00000000deadbeef"
    records = _records([present], 2) + _records([lost], 2)
    async with PhoenixUploader(phoenix_url) as phoenix:
        with pytest.raises(PhoenixUnavailableError, match=f"not ingested 1 span.*{lost}"):
            await phoenix.post_span_annotations(records, ingest_timeout=1.0)
        # The annotations of the span the server has were stored all the same.
        stored = await phoenix.list_span_annotations(project, [present, lost])
    assert sorted(a.name for a in stored) == ["field:f0", "field:f1"]
    assert {a.span_id for a in stored} == {present}


async def test_experiments_are_listed_updated_and_deleted(phoenix_url: str) -> None:
    async with PhoenixUploader(phoenix_url) as phoenix:
        dataset = await phoenix.ensure_dataset(_name("exps"), [Example("c1", {"q": 1}, {})])
        first = await phoenix.create_experiment(dataset, name="first", metadata={"k": 1})
        second = await phoenix.create_experiment(dataset, name="second")
        listed = await phoenix.list_experiments(dataset.id)
        assert [e.id for e in listed] == [second.id, first.id]
        assert listed[1].metadata == {"k": 1}

        updated = await phoenix.update_experiment_metadata(
            first.id, {"k": 1, "field_scores": {"field:a": {"mean": 0.5, "count": 2}}}
        )
        assert updated.metadata["field_scores"] == {"field:a": {"mean": 0.5, "count": 2}}
        assert (await phoenix.get_experiment(first.id)).metadata == updated.metadata

        await phoenix.delete_experiment(second.id)
        await phoenix.delete_experiment(second.id)  # gone already: fine
        assert [e.id for e in await phoenix.list_experiments(dataset.id)] == [first.id]
