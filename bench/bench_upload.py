"""Upload speed: Phoenix's own run_experiment vs stateval's uploader vs the server's ceiling.

For each workload, on the same server in one process:

(a) ``phoenix.client.AsyncClient.experiments.run_experiment`` with a trivial task and N evaluators;
(b) stateval: ``PhoenixUploader`` (dataset, experiment, one run per case linked to a traced
    CHAIN span batched over OTLP, N evaluations per run), the way ``stateval run`` uploads;
(c) the server's ceiling: a bare concurrent POST loop of experiment evaluations;
(d) a bulk path: the same scores as span annotations, 100 per ``POST /v1/span_annotations``
    (visible on the traces, not as experiment columns).

Usage:
    python bench/bench_upload.py --url http://127.0.0.1:6006
    STATEVAL_PHOENIX_BIN=/path/to/phoenix python bench/bench_upload.py   # starts its own server
    python bench/bench_upload.py --database-url postgresql://...        # ... on PostgreSQL
    python bench/bench_upload.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from phoenix_server import add_server_options, phoenix_server

from stateval.tracing import configure_tracing, mutator_call_span
from stateval.upload import EvaluationRecord, Example, PhoenixUploader, RunRecord

SETTLE = 2.0  # seconds between phases


@dataclass(frozen=True)
class Workload:
    title: str
    cases: int
    evaluators: int

    def examples(self) -> list[Example]:
        fields = [f"f{i}" for i in range(self.evaluators)]
        return [
            Example(
                case_id=f"case-{c}",
                input={"pre_state": {}, "input": f"message {c}: " + " ".join(fields)},
                output={f: f"value {c}.{f}" for f in fields},
                metadata={"bench": self.title},
            )
            for c in range(self.cases)
        ]

    @property
    def evaluations(self) -> int:
        return self.cases * self.evaluators


def _task(example_input: dict[str, Any], fields: int) -> dict[str, Any]:
    """The system under test: fills every field but gets every third one wrong."""
    case = str(example_input["input"]).split(":")[0].split()[-1]
    return {f"f{i}": f"value {case}.f{i}" if i % 3 else "wrong" for i in range(fields)}


# -- (a) phoenix.client --------------------------------------------------------------------------


def _field_evaluator(field: str) -> Callable[..., float]:
    def evaluator(output: dict[str, Any], expected: dict[str, Any]) -> float:
        return float(output.get(field) == expected.get(field))

    evaluator.__name__ = evaluator.__qualname__ = f"field_{field}"
    return evaluator


async def bench_run_experiment(url: str, workload: Workload, concurrency: int) -> float:
    from phoenix.client import AsyncClient  # imported here: only this bench needs it

    client = AsyncClient(base_url=url)
    examples = workload.examples()
    start = time.perf_counter()
    dataset = await client.datasets.create_dataset(
        name=f"bench-phx-{uuid.uuid4().hex[:8]}",
        inputs=[dict(e.input) for e in examples],
        outputs=[dict(e.output) for e in examples],
        metadata=[e.stored_metadata() for e in examples],
    )
    evaluators = {f"field:f{i}": _field_evaluator(f"f{i}") for i in range(workload.evaluators)}
    with _quiet():
        await client.experiments.run_experiment(
            dataset=dataset,
            task=lambda input: _task(input, workload.evaluators),
            evaluators=evaluators,
            concurrency=concurrency,
            print_summary=False,
        )
    return time.perf_counter() - start


# -- (b) stateval --------------------------------------------------------------------------------


@dataclass
class OursResult:
    seconds: float
    dataset_id: str
    example_ids: list[str]
    run_ids: list[str]
    span_ids: list[str]
    stored_evaluations: int


async def bench_stateval(url: str, workload: Workload, concurrency: int) -> OursResult:
    examples = workload.examples()
    run_ids: list[str] = []
    span_ids: list[str] = []
    start = time.perf_counter()
    async with PhoenixUploader(url, max_concurrency=concurrency) as phoenix:
        dataset = await phoenix.ensure_dataset(f"bench-sv-{uuid.uuid4().hex[:8]}", examples)
        experiment = await phoenix.create_experiment(dataset, name="bench", metadata={"n": 1})
        tracing = configure_tracing(experiment.project_name or "bench", url)

        async def one(example: Example) -> None:
            started = datetime.now(UTC)
            with mutator_call_span(
                tracing.tracer, case_id=example.case_id, input=example.input
            ) as sp:
                output = _task(dict(example.input), workload.evaluators)
                sp.set_output(output)
            run = RunRecord(
                dataset.example_ids[example.case_id],
                output,
                started,
                datetime.now(UTC),
                trace_id=sp.trace_id,
            )
            run_id = await phoenix.post_run(experiment.id, run)
            run_ids.append(run_id)
            span_ids.append(sp.span_id or "")
            await phoenix.post_evaluations(
                EvaluationRecord(
                    run_id,
                    f"field:{field}",
                    score=float(output[field] == example.output[field]),
                    label="matching" if output[field] == example.output[field] else "mismatched",
                )
                for field in example.output
            )

        await asyncio.gather(*(one(e) for e in examples))
        await asyncio.to_thread(tracing.force_flush)
        seconds = time.perf_counter() - start
        tracing.shutdown()
        stored = len(await phoenix.list_evaluations(experiment.id))
    example_ids = list(dataset.example_ids.values())
    return OursResult(seconds, dataset.id, example_ids, run_ids, span_ids, stored)


# -- (c) the ceiling, (d) the bulk path ----------------------------------------------------------


async def bench_ceiling(url: str, run_ids: list[str], total: int, concurrency: int) -> float:
    """Seconds for a bare concurrent loop of ``total`` evaluation POSTs."""
    now = datetime.now(UTC).isoformat()
    bodies = [
        {
            "experiment_run_id": run_ids[i % len(run_ids)],
            "name": f"ceiling:{i // len(run_ids)}",
            "annotator_kind": "CODE",
            "start_time": now,
            "end_time": now,
            "result": {"score": 1.0, "label": "matching"},
        }
        for i in range(total)
    ]
    return await _post_loop(url, "/v1/experiment_evaluations", bodies, concurrency)


async def bench_run_ceiling(url: str, dataset_id: str, example_ids: list[str], c: int) -> float:
    """Seconds for a bare concurrent loop of one run POST per example, on a new experiment."""
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        response = await client.post(f"/v1/datasets/{dataset_id}/experiments", json={})
        experiment_id = response.raise_for_status().json()["data"]["id"]
    now = datetime.now(UTC).isoformat()
    bodies = [
        {
            "dataset_example_id": example_id,
            "output": {"f0": "value"},
            "repetition_number": 1,
            "start_time": now,
            "end_time": now,
        }
        for example_id in example_ids
    ]
    return await _post_loop(url, f"/v1/experiments/{experiment_id}/runs", bodies, c)


async def _post_loop(url: str, path: str, bodies: list[dict[str, Any]], concurrency: int) -> float:
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def worker() -> None:
            while not queue.empty():
                body = queue.get_nowait()
                (await client.post(path, json=body)).raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - start


async def bench_span_annotations(
    url: str, span_ids: list[str], per_span: int, concurrency: int, batch: int = 100
) -> float:
    items = [
        {
            "span_id": span_id,
            "name": f"field:f{i}",
            "annotator_kind": "CODE",
            "result": {"score": 1.0, "label": "matching"},
            "identifier": "",
        }
        for span_id in span_ids
        for i in range(per_span)
    ]
    batches = [items[i : i + batch] for i in range(0, len(items), batch)]
    semaphore = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:

        async def send(chunk: list[dict[str, Any]]) -> None:
            async with semaphore:
                response = await client.post(
                    "/v1/span_annotations", params={"sync": "true"}, json={"data": chunk}
                )
                response.raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(send(chunk) for chunk in batches))
        return time.perf_counter() - start


# -- driver --------------------------------------------------------------------------------------


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence run_experiment's progress bars and banners (they would flood the report)."""
    with (
        open(os.devnull, "w") as devnull,
        contextlib.redirect_stdout(devnull),
        contextlib.redirect_stderr(devnull),
    ):
        yield


async def run(
    url: str,
    workloads: list[Workload],
    concurrency: int,
    skip_phoenix: bool,
    ceiling_sample: int,
) -> None:
    print(f"server {url}, concurrency {concurrency}")
    warm = await bench_stateval(url, Workload("warm-up", 20, 3), concurrency)  # first requests
    await bench_ceiling(url, warm.run_ids, 60, concurrency)  # after a start are slow
    await asyncio.sleep(SETTLE)
    for workload in workloads:
        n = workload.evaluations
        print(f"\n== {workload.title}: {workload.cases} cases x {workload.evaluators} evaluators")
        # Each phase starts after a pause: the server ingests spans in the background, and the
        # previous phase's tail must not be billed to the next one.
        phx = None
        if not skip_phoenix:
            phx = await bench_run_experiment(url, workload, concurrency)
            await asyncio.sleep(SETTLE)
        ours = await bench_stateval(url, workload, concurrency)
        await asyncio.sleep(SETTLE)
        sample = min(n, ceiling_sample)
        ceiling = await bench_ceiling(url, ours.run_ids, sample, concurrency) * n / sample
        await asyncio.sleep(SETTLE)
        runs = await bench_run_ceiling(url, ours.dataset_id, ours.example_ids, concurrency)
        await asyncio.sleep(SETTLE)
        bulk = await bench_span_annotations(url, ours.span_ids, workload.evaluators, 2)
        await asyncio.sleep(SETTLE)
        if ours.stored_evaluations != n:
            print(f"!! stateval stored {ours.stored_evaluations} evaluations, expected {n}")
        rows = [
            ("(a) phoenix run_experiment", phx),
            ("(b) stateval uploader", ours.seconds),
            ("(c) ceiling: bare eval POSTs", ceiling),  # scaled from the sample
            ("(d) span annotations, bulk", bulk),
        ]
        for label, seconds in rows:
            if seconds is not None:
                print(f"   {label:32s} {seconds:7.2f} s  {n / seconds:7.1f} evaluations/s")
        if phx is not None:
            print(f"   stateval vs run_experiment: {phx / ours.seconds:5.2f}x faster")
        print(f"   bare run POSTs ({workload.cases}):         {runs:7.2f} s")
        print(
            f"   stateval / ceiling, evaluation POSTs only: {ours.seconds / ceiling:5.2f}x "
            "(target <= 1.25)"
        )
        print(
            f"   stateval / ceiling, same POSTs (runs + evaluations): "
            f"{ours.seconds / (ceiling + runs):5.2f}x"
        )
        print(
            f"   (stateval's time also covers the dataset upload and exporting "
            f"{workload.cases} spans)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_server_options(parser)
    parser.add_argument("--quick", action="store_true", help="50 cases instead of 200")
    parser.add_argument("--cases", type=int, help="cases per workload")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workload", choices=["all", "case", "field"], default="all")
    parser.add_argument("--skip-run-experiment", action="store_true")
    parser.add_argument(
        "--ceiling-sample",
        type=int,
        default=800,
        help="evaluations POSTed to measure the ceiling's rate (scaled to the workload)",
    )
    args = parser.parse_args()
    cases = args.cases or (50 if args.quick else 200)
    workloads = []
    if args.workload in ("all", "case"):
        workloads.append(Workload("case-level", cases, 3))
    if args.workload in ("all", "field"):
        workloads.append(Workload("per-field", cases, 20))

    options = (args.concurrency, args.skip_run_experiment, args.ceiling_sample)
    if args.url:
        asyncio.run(run(args.url.rstrip("/"), workloads, *options))
        return
    with phoenix_server(database_url=args.database_url) as url:
        asyncio.run(run(url, workloads, *options))


if __name__ == "__main__":
    main()
