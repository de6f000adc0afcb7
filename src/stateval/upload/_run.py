"""A run reported to Phoenix: traced mutator calls, their results through the run's Phoenix sink.

`run_suite` is the run every entry point starts: local (`stateval.run.run_local`) without a
Phoenix target, else `run_with_phoenix`, both in the run's frame (`stateval.run.suite_run`).

Each mutator call is a CHAIN span exported in batches to the suite's Phoenix project
(``phoenix.project``, default: the suite name), in its episode's session when it is a turn of
one (`stateval.upload._episode_sessions`); scored cases go to the `PhoenixSink`
(`stateval.upload._sink`), which uploads them in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

from stateval.errors import PhoenixUnavailableError
from stateval.mutators import LLMMutator, Mutator
from stateval.run import (
    AllSinks,
    CaseScore,
    CaseSpan,
    Journal,
    OnScored,
    PhoenixTarget,
    RunHeader,
    RunOutcome,
    Scoring,
    UploadSink,
    execute,
    run_local,
    run_summary,
    suite_run,
)
from stateval.suite import Case, Suite
from stateval.upload._episode_sessions import case_session_id, session_run
from stateval.upload._sink import PhoenixSink
from stateval.upload._uploader import PhoenixUploader

if TYPE_CHECKING:
    from stateval.tracing import MutatorCallSpan, RecordedCall, Tracing

__all__ = ["run_suite", "run_with_phoenix"]

_MAX_REQUESTS = 16


class _TracedCase:
    """A case's mutator-call span that the judge's LLM spans can be parented to after it ended."""

    __slots__ = ("_span",)

    def __init__(self, span: MutatorCallSpan) -> None:
        self._span = span

    @property
    def trace_id(self) -> str | None:
        return self._span.trace_id

    @property
    def span_id(self) -> str | None:
        return self._span.span_id

    def set_output(self, value: object) -> None:
        self._span.set_output(value)

    def reenter(self) -> AbstractContextManager[object]:
        from opentelemetry import trace

        return trace.use_span(self._span.span, end_on_exit=False)


def _span_factory(
    tracing: Tracing, header: RunHeader | None = None
) -> Callable[[Case], AbstractContextManager[CaseSpan]]:
    """Opens each case's mutator-call span, in its episode's session when ``header`` (the run's)
    is given and the case is a turn of an episode."""
    from opentelemetry import context as otel_context

    from stateval.tracing import mutator_call_span

    @contextlib.contextmanager
    def open_span(case: Case) -> Iterator[CaseSpan]:
        # Each mutator call is the root of its own trace (what its experiment run links to),
        # even when the run itself happens inside someone else's span.
        token = otel_context.attach(otel_context.Context())
        try:
            with mutator_call_span(
                tracing.tracer,
                case_id=case.id,
                input=case.input,
                pre_state=case.pre_state,
                message_id=case.input.message_id,
                session_id=None if header is None else case_session_id(header, case),
                source_span_id=case.source_span_id,
                source_trace_id=case.source_trace_id,
                run=None if header is None else session_run(header),
                mode=None if header is None else header.mode,
            ) as span:
                yield _TracedCase(span)
        finally:
            otel_context.detach(token)

    return open_span


def _trace_llm_calls(mutator: Mutator, tracing: Tracing) -> None:
    """Have an `LLMMutator`'s client record an LLM span per call, when it can (``tracer``)."""
    client = mutator.client if isinstance(mutator, LLMMutator) else None
    if client is not None and hasattr(client, "tracer") and client.tracer is None:
        client.tracer = tracing.tracer


async def run_suite(
    suite: Suite,
    journal: Journal,
    *,
    concurrency: int,
    phoenix: PhoenixTarget | None = None,
    sink: UploadSink | None = None,
    on_case: Callable[[CaseScore], None] | None = None,
    on_scored: OnScored | None = None,
) -> RunOutcome:
    """Run (or resume) ``journal``'s planned cases of ``suite`` and summarise them.

    With ``phoenix``, the cases become a dataset, the run an experiment, each case a traced,
    linked experiment run with its evaluations (field scores as the journal's ``fields_as``
    says); uploads overlap the mutator calls. ``sink`` receives every scored case as well (or
    alone, without ``phoenix``): an `UploadSink` of your own streams results anywhere. With
    neither, the run is local: journal and summary only. The suite's LLM clients are closed at
    the end (also on error).

    Args:
        suite: The suite, loaded with its mutator.
        journal: The run's journal (new, or one to resume).
        concurrency: Mutator calls at once.
        phoenix: The Phoenix server to report to.
        sink: Receives every scored case (journaled ones of a resumed run too).
        on_case: Called with each newly scored case.
        on_scored: Called when scoring has ended, while the upload may still be going on (to
            show the summary at once and then the upload's progress).

    Raises:
        SuiteError: The suite was loaded without its mutator.
    """
    if phoenix is None:
        return await run_local(
            suite, journal, concurrency=concurrency, sink=sink, on_case=on_case, on_scored=on_scored
        )
    async with suite_run(suite, journal) as scoring:
        return await run_with_phoenix(
            suite,
            journal,
            scoring,
            phoenix,
            concurrency=concurrency,
            on_case=on_case,
            on_scored=on_scored,
            extra=sink,
        )


async def run_with_phoenix(
    suite: Suite,
    journal: Journal,
    scoring: Scoring,
    target: PhoenixTarget,
    *,
    concurrency: int,
    on_case: Callable[[CaseScore], None] | None = None,
    on_scored: OnScored | None = None,
    extra: UploadSink | None = None,
) -> RunOutcome:
    """Run the journal's missing cases and upload every case Phoenix does not have yet
    (``extra``, a sink of the caller's, receives every case too).

    If Phoenix cannot be reached (or fails midway), the run goes on locally; the outcome's
    `UploadStatus` says what is pending, for ``stateval run --resume``. ``on_scored`` gets the
    summary as soon as scoring ends, with the upload's progress, before the upload is waited
    for.
    """
    from stateval.tracing import configure_tracing

    assert suite.mutator is not None
    async with PhoenixUploader(
        target.url, api_key=target.api_key, max_concurrency=_MAX_REQUESTS
    ) as uploader:
        header = journal.header
        sink = PhoenixSink(
            uploader, journal, target.url, fields_as=header.fields_as, shard=header.shard
        )
        try:
            await sink.prepare(suite)
        except PhoenixUnavailableError as exc:
            sink.error = str(exc)
        tracing = None
        resent = 0
        if sink.ready:
            # The suite's project (phoenix.project, default: the suite name), as the run
            # recorded it: Phoenix lists it under Tracing, unlike the experiment's own
            # auto-named project; the experiment's runs link to their traces by trace id.
            project = journal.header.project or suite.phoenix.project
            resent = await _send_kept_spans(journal, target)
            resent += await _recreate_lost_spans(suite, journal, target, project)
            tracing = configure_tracing(
                project,
                target.url,
                api_key=target.api_key,
                on_undelivered=journal.append_spans,
                on_delivered=journal.append_delivered,
            )
            sink.flush_spans = functools.partial(asyncio.to_thread, tracing.force_flush)
            _trace_llm_calls(suite.mutator, tracing)
            if suite.judge is not None:
                suite.judge.trace_calls(tracing.tracer)
        sink.start()
        drained = False
        try:
            tally = await execute(
                suite,
                journal,
                scoring,
                mutator=suite.mutator,
                concurrency=concurrency,
                span=None if tracing is None else _span_factory(tracing, journal.header),
                sink=sink if extra is None else AllSinks((sink, extra)),
                on_case=on_case,
                judge=suite.judge,
            )
            summary = run_summary(suite, journal, tally, sink.experiment_url)
            if on_scored is not None:
                on_scored(summary, sink.progress if sink.experiment_id is not None else None)
            await sink.finish()
            drained = True
        finally:
            if not drained:
                await sink.finish(drain=False)
            if tracing is not None:
                await asyncio.to_thread(tracing.shutdown)
        if sink.ready:
            await sink.record_summary(summary)
    status = sink.status(journal.header.case_ids)
    if tracing is not None:
        status = replace(
            status,
            spans=tracing.delivery.delivered + resent,
            spans_kept=sum(count for _, _, count in journal.unsent_spans()),
        )
    return RunOutcome(summary, journal, status, tally)


async def _send_kept_spans(journal: Journal, target: PhoenixTarget) -> int:
    """Send the span batches an earlier invocation kept (Phoenix did not accept them then);
    the number of spans delivered now."""
    from stateval.tracing import send_otlp

    sent = 0
    for key, payload, count in journal.unsent_spans():
        if not await asyncio.to_thread(send_otlp, target.url, payload, api_key=target.api_key):
            break
        await asyncio.to_thread(journal.append_ack, "spans", key, count=count)
        sent += count
    return sent


_RECREATE_BATCH = 256


async def _recreate_lost_spans(
    suite: Suite, journal: Journal, target: PhoenixTarget, project: str
) -> int:
    """Re-create, from their journaled results, the mutator-call spans an earlier invocation never
    exported (it was killed while its exporter held them: no ``delivered`` record and no kept
    batch has them) and send them; the number delivered now. Spans keep their ids, so one
    Phoenix got after all is stored once."""
    from stateval.tracing import otlp_span_ids, recreated_mutator_call_spans, send_otlp

    if not journal.results and not journal.repeated:
        return 0
    accounted = set(journal.delivered_spans)
    for payload in journal.kept_spans():
        accounted |= otlp_span_ids(payload)
    # read one record at a time: only the lost calls, a batch at a time, are held
    records = chain(
        (r for _, r in journal.results.read(list(journal.results)) if r is not None),
        journal.repeated.values(),
    )
    calls = (
        call
        for record in records
        if record.get("span_id") not in accounted
        and (call := _recorded_call(suite, journal.header, record)) is not None
    )
    sent = 0
    while batch := list(islice(calls, _RECREATE_BATCH)):
        payload = recreated_mutator_call_spans(project, batch)
        if not await asyncio.to_thread(send_otlp, target.url, payload, api_key=target.api_key):
            break
        await asyncio.to_thread(journal.append_delivered, [c.span_id for c in batch])
        sent += len(batch)
    return sent


def _recorded_call(
    suite: Suite, header: RunHeader, record: Mapping[str, Any]
) -> RecordedCall | None:
    """The mutator call a journaled result record describes (None without a span)."""
    from stateval.tracing import RecordedCall

    span_id, trace_id = record.get("span_id"), record.get("trace_id")
    case = suite.case(str(record.get("case_id")))
    if not isinstance(span_id, str) or not isinstance(trace_id, str) or case is None:
        return None
    try:
        start = datetime.fromisoformat(str(record.get("started_at")))
    except ValueError:
        return None
    start_ns = int(start.timestamp() * 1e9)
    post = record.get("post_state")
    output = (
        post
        if post is not None
        else {"error": record.get("error"), "error_type": record.get("error_type")}
    )
    return RecordedCall(
        trace_id=trace_id,
        span_id=span_id,
        case_id=case.id,
        input=case.input,
        pre_state=case.pre_state,
        message_id=case.input.message_id,
        output=output,
        start_ns=start_ns,
        end_ns=start_ns + int(float(record.get("time_used") or 0.0) * 1e9),
        session_id=case_session_id(header, case),
        source_span_id=case.source_span_id,
        source_trace_id=case.source_trace_id,
        run=session_run(header),
        mode=header.mode,
    )
