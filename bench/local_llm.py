"""Measure the real LLM path on the registration demo: local model server, client, mutator.

Starts the packaged SmolLM2-135M behind llama.cpp's server (or uses ``--url``), runs every case of
``examples/registration`` through `LLMMutator` + `OpenAICompatibleClient` with constrained
output, and prints: server load time, per-call latency, completion tokens per second (end to end,
grammar included), case errors by type, and expected fields right (with the suite's policies).

    python bench/local_llm.py [--url http://127.0.0.1:8765/v1] [--limit N] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from stateval.evaluation import EvaluationContext, LLMEvaluator
from stateval.local_model import LOCAL_MODEL_ALIAS, start_local_model_server
from stateval.mutators import UPDATES_JSON_SCHEMA, LLMMutator
from stateval.mutators._openai import LLMCall, OpenAICompatibleClient
from stateval.suite import load_suite

SUITE = Path(__file__).parents[1] / "examples" / "registration" / "suite.yaml"


async def measure(url: str, model: str, limit: int | None, max_tokens: int) -> dict[str, Any]:
    suite = load_suite(SUITE, load_mutator=False)
    cases = suite.cases[:limit] if limit else suite.cases
    calls: list[LLMCall] = []
    client = OpenAICompatibleClient(
        model, base_url=url, api_key_env=None, response_schema=UPDATES_JSON_SCHEMA,
        max_tokens=max_tokens, timeout=300.0, on_call=calls.append,
    )  # fmt: skip
    mutator = LLMMutator(client, suite.model.mutator.instructions)  # type: ignore[union-attr]
    evaluator = LLMEvaluator(suite.policies)
    results = []
    async with client:
        for case in cases:
            context = EvaluationContext(
                mutator, case.pre_state, case.expected_post_state, case.input
            )
            result = await evaluator.evaluate(context)
            results.append((case, result))
            status = result.error_type or f"{len(result.comparison.matching)} right"
            print(f"{case.id}: {status}  {result.error or ''}"[:200], flush=True)
    expected = sum(len(c.expected_post_state.paths()) for c, _ in results)
    changed = sum(len(c.metadata.get("changed_fields", [])) for c, _ in results)
    right = sum(len(r.comparison.matching) for _, r in results)
    right_changed = sum(
        len(set(r.comparison.matching) & set(c.metadata.get("changed_fields", [])))
        for c, r in results
    )
    latencies = [c.latency_s for c in calls]
    tokens = [c.completion_tokens or 0 for c in calls]
    return {
        "cases": len(results),
        "case_errors": dict(Counter(r.error_type for _, r in results if r.error_type)),
        "expected_fields": expected,
        "fields_right": right,
        "changed_fields": changed,
        "changed_fields_right": right_changed,
        "finish_reasons": dict(Counter(c.finish_reason for c in calls)),
        "latency_median_s": statistics.median(latencies) if latencies else None,
        "latency_max_s": max(latencies) if latencies else None,
        "completion_tokens_per_s": sum(tokens) / sum(latencies) if latencies else None,
        "prompt_tokens_median": statistics.median(c.prompt_tokens or 0 for c in calls)
        if calls
        else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an OpenAI-compatible base URL (default: start one)")
    parser.add_argument("--model", default=LOCAL_MODEL_ALIAS)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    server = None
    figures: dict[str, Any] = {}
    if args.url is None:
        started = time.monotonic()
        server = start_local_model_server()
        figures["server_start_to_healthy_s"] = round(time.monotonic() - started, 2)
        url = server.url
    else:
        url = args.url
    try:
        figures.update(asyncio.run(measure(url, args.model, args.limit, args.max_tokens)))
    finally:
        if server is not None:
            server.stop()
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
