"""From spans to gold at scale: export and import against the raw read of the same spans.

    python bench/bench_traces_gold.py --url http://127.0.0.1:6006 --spans 2000

Sends N calls of the instrumented CRM app (examples/traces/crm_app.py) over OTLP, then times,
against the same Phoenix in the same process:

    (a) the raw REST read of the project's spans (every page, nothing else): the baseline;
    (b) ``export_drafts`` without a dataset (read, map, flags, queue, case file);
    (c) ``export_drafts`` with the dataset (adds the upload of N examples linked to their spans);
    (d) ``import_corrections`` after correction notes on 10% of the spans.

and prints each as seconds and as a ratio to (a). It checks what it measured: N drafts, N
examples, the corrected cases' gold ("!!" marks a mismatch).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

from stateval.suite import load_monitor
from stateval.traces import ExportOptions, correction_note, export_drafts, import_corrections
from stateval.upload import PhoenixUploader

APP = Path(__file__).resolve().parents[1] / "examples" / "traces" / "crm_app.py"


def _app() -> Any:
    spec = importlib.util.spec_from_file_location("crm_app", APP)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _send(url: str, project: str, n: int) -> None:
    app = _app()
    provider = app.instrument(url, project)
    tracer = provider.get_tracer("crm_app")
    for i in range(n):
        profile = {"name": f"P{i}", "phone": f"555-{i:04d}"}
        email = f"My new number is 555-{i + 5000:04d}." if i % 2 else "Thanks!\n--\n+1 212 555 0142"
        app.record_call(tracer, profile, email, app.update_profile(profile, email))
    provider.shutdown()


async def _raw_read(phoenix: PhoenixUploader, project: str) -> int:
    count = 0
    async for page in phoenix.span_pages(project, page_size=1000):
        count += len(page)
    return count


async def bench(url: str, n: int) -> None:
    project = f"bench-gold-{uuid.uuid4().hex[:8]}"
    folder = Path(tempfile.mkdtemp(prefix="bench-gold-"))
    monitor_path = folder / "monitor.yaml"
    traces = {
        "project": project,
        "span_name": "update_profile",
        "pre_state": "input.value#/profile",
        "input": "input.value#/email",
        "post_state": "output.value",
    }
    monitor_path.write_text(yaml.safe_dump({"name": "crm", "traces": traces}))
    monitor = load_monitor(monitor_path)
    _send(url, project, n)
    async with PhoenixUploader(url) as phoenix:
        while True:  # OTLP ingestion is asynchronous
            if await _raw_read(phoenix, project) >= n:
                break
            await asyncio.sleep(0.5)
        start = time.perf_counter()
        assert await _raw_read(phoenix, project) == n
        raw = time.perf_counter() - start

        start = time.perf_counter()
        plain = await export_drafts(phoenix, monitor, ExportOptions(folder / "a.jsonl"))
        export_plain = time.perf_counter() - start

        cases = folder / "b.jsonl"
        start = time.perf_counter()
        linked = await export_drafts(
            phoenix, monitor, ExportOptions(cases, dataset=f"review-{project}")
        )
        export_linked = time.perf_counter() - start

        drafts = [json.loads(line) for line in cases.read_text().splitlines()]
        chosen = drafts[:: max(1, 10)]
        await asyncio.gather(
            *(
                phoenix.post_span_note(c["id"], correction_note({"phone": "555-0000"}))
                for c in chosen
            )
        )
        start = time.perf_counter()
        result = await import_corrections(phoenix, cases)
        imported = time.perf_counter() - start
    gold = [json.loads(line) for line in cases.read_text().splitlines()]
    right = sum(c.get("expected_post_state", {}).get("phone") == "555-0000" for c in gold)
    checks = [
        (len(plain.drafts) == n, f"{len(plain.drafts)} drafts"),
        (len(linked.drafts) == n, f"{len(linked.drafts)} drafts with the dataset"),
        (result.corrected == len(chosen) == right, f"{right} of {len(chosen)} corrected"),
    ]
    load = os.getloadavg()[0]
    print(f"{n} spans, {len(chosen)} corrected; load average {load:.2f}")
    print(f"(a) raw REST read of the spans   {raw:7.2f} s   1.00x")
    print(f"(b) export, case file only       {export_plain:7.2f} s  {export_plain / raw:5.2f}x")
    print(f"(c) export with linked dataset   {export_linked:7.2f} s  {export_linked / raw:5.2f}x")
    print(f"(d) import of the corrections    {imported:7.2f} s  {imported / raw:5.2f}x")
    for ok, what in checks:
        print(("ok " if ok else "!! ") + what)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--spans", type=int, default=2000)
    args = parser.parse_args()
    asyncio.run(bench(args.url, args.spans))


if __name__ == "__main__":
    main()
