"""The LLM judge's calls in a traced run: LLM spans under the case's mutator-call span."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import yaml
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from stateval.mutators import PythonMutator, StructuredInput
from stateval.phoenix import FieldJudge, ScriptedJudgeLLM
from stateval.run import Scoring, execute, start_journal
from stateval.state import InterpretiveState, ValueConfidence
from stateval.suite import load_suite
from stateval.tracing import SPAN_LLM, SPAN_MUTATE, configure_tracing
from stateval.upload._run import _span_factory

CASES = [
    {"id": "c1", "input": {"prompt": "centre"}, "expected_post_state": {"hotel.area": "center"}},
    {"id": "c2", "input": {"prompt": "north"}, "expected_post_state": {"hotel.area": "north"}},
]


def _mutator(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    out = state.copy()
    out.set_value("hotel.area", ValueConfidence(input.prompt, 1.0))
    return out


def test_each_judge_call_is_an_llm_span_child_of_its_case_mutator_call_span(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    data = {
        "name": "areas",
        "mutator": {"type": "python", "callable": "builtins:print"},
        "cases": {"inline": CASES},
        "policies": {"hotel.area": {"judge": "llm", "rubric": "spelling variants agree"}},
    }
    path.write_text(yaml.safe_dump(data))
    llm = ScriptedJudgeLLM(["equivalent"])
    judge = FieldJudge(llm)
    suite = dataclasses.replace(
        load_suite(path, load_mutator=False), mutator=PythonMutator(_mutator), judge=judge
    )
    exporter = InMemorySpanExporter()
    tracing = configure_tracing("areas", exporter=exporter)
    judge.trace_calls(tracing.tracer)
    journal = start_journal(tmp_path / ".stateval", suite)
    assert suite.mutator is not None
    asyncio.run(
        execute(
            suite,
            journal,
            Scoring.from_suite(suite),
            mutator=suite.mutator,
            concurrency=2,
            span=_span_factory(tracing),
            judge=judge,
        )
    )
    tracing.shutdown()
    assert llm.calls == 1  # only c1's values differ by rule
    assert journal.results["c1"]["judgements"][0]["label"] == "equivalent"

    spans = exporter.get_finished_spans()
    mutations = {s.attributes["stateval.case_id"]: s for s in spans if s.name == SPAN_MUTATE}  # type: ignore[index]
    (judged,) = [s for s in spans if s.name == SPAN_LLM]
    parent = mutations["c1"]
    assert judged.parent is not None
    assert judged.parent.span_id == parent.context.span_id
    assert judged.context.trace_id == parent.context.trace_id
    assert format(parent.context.trace_id, "032x") == journal.results["c1"]["trace_id"]
    attributes = dict(judged.attributes or {})
    assert attributes["openinference.span.kind"] == "LLM"
    assert attributes["llm.model_name"] == llm.model
    assert attributes["llm.input_messages.0.message.role"] == "user"
    content = str(attributes["llm.input_messages.0.message.content"])
    assert "hotel.area" in content
    assert '"centre"' in content
    assert "spelling variants agree" in content
    assert json.loads(str(attributes["output.value"]))["label"] == "equivalent"
    assert not any("key" in name.lower() for name in attributes)
