"""The whole ``stateval run`` pipeline vs Phoenix's own run_experiment vs the server's ceiling.

For each workload (a generated suite: N cases, a python mutator that awaits 100 ms and returns the
expected state with every third field wrong), on the same server in one process:

(a) ``phoenix.client.AsyncClient.experiments.run_experiment`` on the same cases, with the same
    evaluations as evaluators (state_accuracy, overall_match, changed_fields_accuracy and one
    ``field:<path>`` per field), an async task that awaits 100 ms, the same concurrency;
(b) stateval: ``run_suite`` with a ``PhoenixTarget`` -- the code path of
    ``stateval run SUITE --phoenix-url URL`` without the progress bar: suite file, journal,
    dataset, experiment, one traced CHAIN span per mutator call, one run and all evaluations per
    case; (b0) the same with ``--no-phoenix`` (mutator + scoring + journal only);
    (b2) the same as (b) with ``phoenix.fields_as: annotations``: the case-level scores as
    experiment evaluations, the per-field ones as span annotations in bulk, the per-field means
    on the experiment's metadata (checked: every annotation read back); (b3) ``both``; (b4)
    ``failing``: as (b2) with only the fields that did not pass, queued on the server's bulk
    inserter (each mode's time to its summary is printed beside its total);
(c) the server's ceiling: the same requests without a pipeline, one kind after the other -- the
    dataset upload, bare concurrent POST loops of the runs and of the evaluations, and the
    ingestion of as many mutator-call spans (exported in one batch, timed until stored);
(d) the ideal: N x 100 ms / concurrency;
(e) a way past the ceiling: only the case-level evaluations as experiment evaluations, the
    per-field ones as span annotations on each run's CHAIN span, 100 per request.

Usage:
    STATEVAL_PHOENIX_BIN=/path/to/phoenix python bench/bench_run.py     # starts its own server
    python bench/bench_run.py --url http://127.0.0.1:6006
    python bench/bench_run.py --quick                                   # 40 cases
    python bench/bench_run.py --profile prof.html                       # pyinstrument on (b)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_upload import _post_loop, _quiet, bench_run_ceiling
from phoenix_server import add_server_options, phoenix_server

from stateval.run import PhoenixTarget, start_journal
from stateval.suite import load_suite
from stateval.upload import PhoenixUploader, run_suite

DELAY = 0.1  # the mutator's (and run_experiment task's) wait per case
MODES = ("evaluations", "annotations", "both", "failing")  # (b), (b2), (b3), (b4)
CASE_LEVEL = ("state_accuracy", "overall_match", "changed_fields_accuracy")
# stateval also scores each case's edit operations (op:add: the pre-state is empty, so every
# field is an add): one more evaluation per case than the run_experiment baseline posts.
EDIT_OPS = ("op:add",)

MUTATOR = f'''"""bench_run's mutator: the expected state after a wait, every third field wrong."""

import asyncio

from stateval.state import ValueConfidence

DELAY = {DELAY}


async def mutate(state, input):
    await asyncio.sleep(DELAY)
    case, fields = input.prompt.split()
    for j in range(int(fields)):
        state.set_value(f"f{{j}}", ValueConfidence(value(int(case), j), 1.0))
    return state


def value(case, j):
    return "wrong" if (case + j) % 3 == 0 else f"{{case}}.v{{j}}"
'''


def _value(case: int, j: int) -> str:
    return "wrong" if (case + j) % 3 == 0 else f"{case}.v{j}"


@dataclass(frozen=True)
class Workload:
    title: str
    cases: int
    fields: int

    @property
    def per_case(self) -> int:
        """Evaluations ``stateval run`` posts per case (empty pre-state: no preserved fields)."""
        return len(CASE_LEVEL) + self.fields

    @property
    def evaluations(self) -> int:
        return self.cases * self.per_case

    def expected(self, case: int) -> dict[str, str]:
        return {f"f{j}": f"{case}.v{j}" for j in range(self.fields)}

    def write_suite(self, folder: Path, tag: str, fields_as: str = "evaluations") -> Path:
        """A suite file, its cases and its mutator module under ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "bench_mutator.py").write_text(MUTATOR)
        with (folder / "cases.jsonl").open("w") as out:
            for c in range(self.cases):
                case = {
                    "id": f"case-{c}",
                    "input": {"prompt": f"{c} {self.fields}"},
                    "expected_post_state": self.expected(c),
                }
                out.write(json.dumps(case) + "\n")
        suite = {
            "name": f"bench-{tag}",
            "mutator": {"type": "python", "callable": "bench_mutator:mutate", "path": "."},
            "cases": {"file": "cases.jsonl"},
            "phoenix": {
                "dataset": f"bench-run-{tag}",
                "experiment_prefix": "bench",
                "project": f"bench-run-{tag}",
                "fields_as": fields_as,
            },
        }
        path = folder / "suite.json"
        path.write_text(json.dumps(suite, indent=1))
        return path


# -- (a) phoenix.client run_experiment -----------------------------------------------------------


async def bench_run_experiment(url: str, w: Workload, concurrency: int) -> tuple[float, float, int]:
    """Seconds (wall, then this process's CPU) for dataset upload + run_experiment; and the
    evaluations stored."""
    from phoenix.client import AsyncClient  # imported here: only this bench needs it

    async def task(input: dict[str, Any]) -> dict[str, str]:
        await asyncio.sleep(DELAY)
        case, fields = str(input["prompt"]).split()
        return {f"f{j}": _value(int(case), j) for j in range(int(fields))}

    def accuracy(output: dict[str, Any], expected: dict[str, Any]) -> float:
        return sum(bool(output.get(k) == v) for k, v in expected.items()) / len(expected)

    def overall(output: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
        match = all(output.get(k) == v for k, v in expected.items())
        return {"score": float(match), "label": "match" if match else "mismatch"}

    def field(name: str) -> Any:
        def evaluator(output: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
            match = output.get(name) == expected.get(name)
            return {"score": float(match), "label": "matching" if match else "mismatched"}

        return evaluator

    evaluators: dict[str, Any] = {
        "state_accuracy": accuracy,
        "overall_match": overall,
        "changed_fields_accuracy": accuracy,
    }
    evaluators |= {f"field:f{j}": field(f"f{j}") for j in range(w.fields)}
    client = AsyncClient(base_url=url)
    start, cpu = time.perf_counter(), time.process_time()
    dataset = await client.datasets.create_dataset(
        name=f"bench-run-phx-{uuid.uuid4().hex[:8]}",
        inputs=[{"prompt": f"{c} {w.fields}"} for c in range(w.cases)],
        outputs=[w.expected(c) for c in range(w.cases)],
    )
    with _quiet():
        ran = await client.experiments.run_experiment(
            dataset=dataset,
            task=task,
            evaluators=evaluators,
            concurrency=concurrency,
            print_summary=False,
        )
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    async with PhoenixUploader(url) as phoenix:
        stored = len(await phoenix.list_evaluations(ran["experiment_id"]))
    return seconds, cpu, stored


# -- (b) stateval run ----------------------------------------------------------------------------


@dataclass
class RunResult:
    seconds: float
    cpu: float
    stored: int
    experiment_id: str | None
    dataset_id: str | None
    example_ids: list[str]
    project: str | None
    error: str | None
    annotations: int = 0
    summary: float = 0.0  # seconds until the run's summary was ready (scoring done)


async def bench_stateval(
    url: str | None,
    w: Workload,
    concurrency: int,
    root: Path,
    profile: str | None = None,
    fields_as: str = "evaluations",
) -> RunResult:
    """Seconds for ``stateval run`` (minus the progress bar) with ``url``, or locally."""
    tag = uuid.uuid4().hex[:8]
    suite_path = w.write_suite(root / f"suite-{tag}", tag, fields_as)
    profiler = None
    if profile:
        from pyinstrument import Profiler

        profiler = Profiler(async_mode="enabled")
        profiler.start()
    start, cpu = time.perf_counter(), time.process_time()
    ready: list[float] = []
    suite = load_suite(suite_path)
    journal = start_journal(root / f"home-{tag}", suite, phoenix_url=url)
    target = None if url is None else PhoenixTarget(url)
    outcome = await run_suite(
        suite,
        journal,
        concurrency=concurrency,
        phoenix=target,
        on_scored=lambda *_: ready.append(time.perf_counter() - start),
    )
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if profiler is not None and profile:
        profiler.stop()
        await asyncio.to_thread(Path(profile).write_text, profiler.output_html())
        print(profiler.output_text(unicode=False, color=False, show_all=False))
    upload = outcome.upload
    if url is None or upload is None:
        return RunResult(seconds, cpu, 0, None, None, [], None, None)
    ack = journal.ack("experiment") or {}
    experiment_id = ack.get("experiment_id")
    stored = annotations = 0
    if experiment_id:
        async with PhoenixUploader(url) as phoenix:
            stored = len(await phoenix.list_evaluations(str(experiment_id)))
            if fields_as != "evaluations":
                span_ids = [str(r["span_id"]) for r in journal.results.values()]
                project = str(journal.header.project)
                annotations = len(await phoenix.list_span_annotations(project, span_ids))
    return RunResult(
        seconds,
        cpu,
        stored,
        experiment_id,
        ack.get("dataset_id"),
        list((journal.ack("dataset") or {}).get("example_ids", {}).values()),
        journal.header.project,
        upload.error,
        annotations,
        ready[0] if ready else seconds,
    )


# -- (c) the ceiling, (e) past it ----------------------------------------------------------------


async def bench_dataset_upload(url: str, dataset_id: str) -> float:
    """Seconds for a bare upload of the same examples as a new dataset."""
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        response = await client.get(f"/v1/datasets/{dataset_id}/examples")
        examples = response.raise_for_status().json()["data"]["examples"]
        body = {
            "action": "create",
            "name": f"bench-run-bare-{uuid.uuid4().hex[:8]}",
            "inputs": [e["input"] for e in examples],
            "outputs": [e["output"] for e in examples],
            "metadata": [e["metadata"] for e in examples],
        }
        start = time.perf_counter()
        response = await client.post("/v1/datasets/upload", params={"sync": "true"}, json=body)
        response.raise_for_status()
        return time.perf_counter() - start


async def bench_span_ingest(url: str, w: Workload) -> float:
    """Seconds until the server has stored ``w.cases`` mutator-call spans like a run's.

    The server ingests spans in the background, competing with the uploads for its CPU; this is
    that cost: the spans are exported in one batch, then the project is polled until all are in.
    """
    from stateval.tracing import configure_tracing, mutator_call_span

    project = f"bench-run-spans-{uuid.uuid4().hex[:8]}"
    tracing = configure_tracing(project, url)
    start = time.perf_counter()
    for c in range(w.cases):
        with mutator_call_span(
            tracing.tracer,
            case_id=f"case-{c}",
            input={"prompt": f"{c} {w.fields}", "message_id": f"case-{c}", "metadata": {}},
            pre_state={},
            message_id=f"case-{c}",
        ) as span:
            span.set_output(w.expected(c))
    await asyncio.to_thread(tracing.shutdown)
    stored = await _root_span_ids(url, project, w.cases, tries=1200, pause=0.1)
    if len(stored) < w.cases:
        print(f"!! the server stored {len(stored)} of {w.cases} spans")
    return time.perf_counter() - start


async def _run_ids(url: str, experiment_id: str) -> list[str]:
    async with PhoenixUploader(url) as phoenix:
        return [r.id for r in await phoenix.list_runs(experiment_id)]


async def _root_span_ids(
    url: str, project: str, count: int, tries: int = 60, pause: float = 0.5
) -> list[str]:
    """Span ids of the project's ``stateval.mutate`` spans (they arrive in batches)."""
    found: list[str] = []
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        for _ in range(tries):
            found, cursor = [], None
            while True:
                params: dict[str, Any] = {"limit": 1000}
                if cursor:
                    params["cursor"] = cursor
                response = await client.get(f"/v1/projects/{project}/spans", params=params)
                if response.status_code == 404:
                    break
                page = response.raise_for_status().json()
                found += [
                    s["context"]["span_id"] for s in page["data"] if s["name"] == "stateval.mutate"
                ]
                cursor = page.get("next_cursor")
                if not cursor:
                    break
            if len(found) >= count:
                return found
            await asyncio.sleep(pause)
    return found


def _eval_bodies(run_ids: list[str], total: int, prefix: str) -> list[dict[str, Any]]:
    now = datetime.now(UTC).isoformat()
    return [
        {
            "experiment_run_id": run_ids[i % len(run_ids)],
            "name": f"{prefix}:{i // len(run_ids)}",
            "annotator_kind": "CODE",
            "start_time": now,
            "end_time": now,
            "result": {"score": 1.0, "label": "matching"},
        }
        for i in range(total)
    ]


async def bench_eval_ceiling(url: str, run_ids: list[str], total: int, c: int) -> float:
    return await _post_loop(
        url, "/v1/experiment_evaluations", _eval_bodies(run_ids, total, "ceil"), c
    )


async def bench_span_annotations(
    url: str, span_ids: list[str], per_span: int, c: int, batch: int = 100
) -> float:
    """Seconds to store ``per_span`` annotations on each span, ``batch`` per request (sync)."""
    items = [
        {
            "span_id": span_id,
            "name": f"field:f{j}",
            "annotator_kind": "CODE",
            "result": {"score": 1.0, "label": "matching"},
            "identifier": "",
        }
        for span_id in span_ids
        for j in range(per_span)
    ]
    bodies = [{"data": items[i : i + batch]} for i in range(0, len(items), batch)]
    return await _post_loop(url, "/v1/span_annotations?sync=true", bodies, c)


# -- driver --------------------------------------------------------------------------------------


def _row(label: str, seconds: float | None, n: int, note: str = "") -> None:
    if seconds is None:
        return
    print(f"   {label:44s} {seconds:7.2f} s  {n / seconds:7.1f} evals/s  {note}")


async def run(
    url: str,
    workloads: list[Workload],
    concurrency: int,
    post_concurrency: int,
    skip_phoenix: bool,
    ceiling_sample: int,
    profile: str | None,
    settle: float,
) -> None:
    print(f"server {url}, concurrency {concurrency} (mutator), {post_concurrency} (bare POSTs)")
    with tempfile.TemporaryDirectory(prefix="stateval-bench-run-") as tmp:
        root = Path(tmp)
        # The first requests after a start are slow; each phase starts after a pause (``settle``)
        # so that the server's background ingestion of the previous phase is not billed to it.
        warm_up = Workload("warm-up", min(20, workloads[0].cases), 3)
        await bench_stateval(url, warm_up, concurrency, root)
        await asyncio.sleep(settle)
        for w in workloads:
            n = w.evaluations
            print(
                f"\n== {w.title}: {w.cases} cases x {w.per_case} evaluations "
                f"({len(CASE_LEVEL)} case-level + {w.fields} field) = {n}, "
                f"+{w.cases} runs, {w.cases} spans"
            )
            phx = phx_cpu = phx_stored = None
            if not skip_phoenix:
                phx, phx_cpu, phx_stored = await bench_run_experiment(url, w, concurrency)
                await asyncio.sleep(settle)
            local = await bench_stateval(None, w, concurrency, root)
            ours = await bench_stateval(url, w, concurrency, root, profile)
            await asyncio.sleep(settle)
            modes: dict[str, RunResult] = {}
            for mode in MODES[1:]:
                modes[mode] = await bench_stateval(url, w, concurrency, root, fields_as=mode)
                await asyncio.sleep(settle)
            assert ours.experiment_id, ours.error
            assert ours.dataset_id, ours.error
            assert ours.project, ours.error
            run_ids = await _run_ids(url, ours.experiment_id)
            sample = min(n, ceiling_sample)
            evals = await bench_eval_ceiling(url, run_ids, sample, post_concurrency) * n / sample
            await asyncio.sleep(settle)
            runs = await bench_run_ceiling(url, ours.dataset_id, ours.example_ids, post_concurrency)
            await asyncio.sleep(settle)
            dataset = await bench_dataset_upload(url, ours.dataset_id)
            await asyncio.sleep(settle)
            spans = await bench_span_ingest(url, w)
            ceiling = dataset + runs + evals + spans
            await asyncio.sleep(settle)
            span_ids = await _root_span_ids(url, ours.project, w.cases)
            bulk = await bench_span_annotations(url, span_ids, w.fields, 2)
            case_level = w.cases * len(CASE_LEVEL)
            past = dataset + runs + evals * case_level / n + spans + bulk
            await asyncio.sleep(settle)
            ideal = w.cases * DELAY / concurrency

            ours_n = n + w.cases * len(EDIT_OPS)
            for who, stored, want in (
                ("run_experiment", phx_stored, n),
                ("stateval", ours.stored, ours_n),
            ):
                if stored is not None and stored != want:
                    print(f"!! {who} stored {stored} evaluations, expected {want}")
            if ours.error:
                print(f"!! stateval upload error: {ours.error}")
            case_level_stored = w.cases * (len(CASE_LEVEL) + len(EDIT_OPS))
            failing = sum(_value(c, j) == "wrong" for c in range(w.cases) for j in range(w.fields))
            expected = {
                "annotations": (case_level_stored, w.cases * w.fields),
                "both": (ours_n, w.cases * w.fields),
                "failing": (case_level_stored, failing),
            }
            for mode, result in modes.items():
                if (result.stored, result.annotations) != expected[mode]:
                    print(
                        f"!! {mode} mode stored {result.stored} evaluations and "
                        f"{result.annotations} annotations, expected {expected[mode]} "
                        f"({result.error})"
                    )
            _row("(a) phoenix run_experiment (async)", phx, n, f"(client CPU {phx_cpu or 0:.2f} s)")
            _row(
                "(b) stateval run (run_suite + Phoenix)",
                ours.seconds,
                n,
                f"(client CPU {ours.cpu:.2f} s)",
            )
            for label, mode in (("b2", "annotations"), ("b3", "both"), ("b4", "failing")):
                result = modes[mode]
                _row(
                    f"({label}) stateval run, fields_as: {mode}",
                    result.seconds,
                    n,
                    f"(summary at {result.summary:.2f} s, {result.stored} evaluations, "
                    f"{result.annotations} annotations)",
                )
            _row(
                "(b0) stateval run --no-phoenix",
                local.seconds,
                n,
                f"(client CPU {local.cpu:.2f} s)",
            )
            _row(
                "(c) ceiling: the same requests, bare",
                ceiling,
                n,
                f"(dataset {dataset:.2f}, runs {runs:.2f}, spans {spans:.2f}, evals {evals:.2f} s)",
            )
            _row("(d) ideal: cases x 0.1 s / concurrency", ideal, n)
            _row("(e) case-level evals + bulk span annots", past, n, f"(annotations {bulk:.2f} s)")
            if phx is not None:
                print(f"   stateval vs run_experiment: {phx / ours.seconds:5.2f}x faster")
            print(f"   stateval / ceiling:         {ours.seconds / ceiling:5.2f}x (target <= 1.25)")
            print(f"   (b) summary at {ours.summary:.2f} s; (b0) {local.seconds:.2f} s")
            for mode, result in modes.items():
                print(
                    f"   {mode + ' / evaluations:':28s}{result.seconds / ours.seconds:5.2f}x, "
                    f"/ ceiling {result.seconds / ceiling:5.2f}x, "
                    f"/ (b0) {result.seconds / local.seconds:5.2f}x"
                )
            print(f"   stateval / ideal:           {ours.seconds / ideal:5.1f}x")
            print(f"   (e) / ceiling:              {past / ceiling:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_server_options(parser)
    parser.add_argument("--quick", action="store_true", help="40 cases instead of 200")
    parser.add_argument("--cases", type=int, help="cases per workload")
    parser.add_argument("--fields", type=int, default=20, help="fields of the per-field workload")
    parser.add_argument("--concurrency", type=int, default=32, help="mutator calls at once")
    parser.add_argument(
        "--post-concurrency", type=int, default=16, help="requests in flight in the bare loop"
    )
    parser.add_argument("--workload", choices=["all", "case", "field"], default="all")
    parser.add_argument("--skip-run-experiment", action="store_true")
    parser.add_argument("--ceiling-sample", type=int, default=800)
    parser.add_argument("--profile", metavar="HTML", help="profile (b) with pyinstrument")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds between phases")
    args = parser.parse_args()
    cases = args.cases or (40 if args.quick else 200)
    workloads = []
    if args.workload in ("all", "case"):
        workloads.append(Workload("case-level", cases, 1))
    if args.workload in ("all", "field"):
        workloads.append(Workload("per-field", cases, args.fields))
    options = (
        args.concurrency,
        args.post_concurrency,
        args.skip_run_experiment,
        args.ceiling_sample,
        args.profile,
        args.settle,
    )
    if args.url:
        asyncio.run(run(args.url.rstrip("/"), workloads, *options))
        return
    with phoenix_server(database_url=args.database_url) as url:
        asyncio.run(run(url, workloads, *options))


if __name__ == "__main__":
    main()
