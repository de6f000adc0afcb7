"""Smoke tests for bench/: each bench runs end to end at tiny sizes (no timing is asserted).

They keep the benches from rotting as the pipeline, the uploader or phoenix.client change; the
figures themselves are in docs/benchmarks.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _bench(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "!!" not in done.stdout, done.stdout  # the bench's own check of what was stored
    return done.stdout


@pytest.mark.phoenix
def test_bench_run_compares_every_line_on_a_tiny_suite(phoenix_url: str) -> None:
    out = _bench(
        "bench_run.py",
        *("--url", phoenix_url, "--cases", "3", "--fields", "2"),
        *("--settle", "0", "--ceiling-sample", "12"),
    )
    assert "3 cases x 4 evaluations (3 case-level + 1 field) = 12" in out
    assert "3 cases x 5 evaluations (3 case-level + 2 field) = 15" in out
    for line in ("(a) phoenix run_experiment", "(b) stateval run", "(c) ceiling", "(e) case-level"):
        assert out.count(line) == 2, line
    for mode in ("annotations", "both", "failing"):  # every upload mode in the same run
        assert out.count(f"stateval run, fields_as: {mode}") == 2, mode
    assert "stateval vs run_experiment" in out


@pytest.mark.phoenix
def test_bench_upload_runs_on_a_tiny_workload(phoenix_url: str) -> None:
    out = _bench(
        "bench_upload.py",
        *("--url", phoenix_url, "--cases", "3", "--workload", "field", "--ceiling-sample", "12"),
    )
    assert "(b) stateval uploader" in out
    assert "stateval vs run_experiment" in out


def test_bench_startup_times_stateval_and_skips_a_missing_server_env(tmp_path: Path) -> None:
    out = _bench("bench_startup.py", "--repeat", "1", "--server-python", str(tmp_path / "none"))
    assert "import stateval " in out
    assert "stateval --help" in out
    assert "import phoenix.evals (server env)" in out
    assert "skipped" in out


def test_bench_scale_measures_every_figure_on_tiny_sizes() -> None:
    slice_file = BENCH.parent / "examples" / "multiwoz" / "data" / "multiwoz21_slice.jsonl"
    out = _bench(
        "bench_scale.py",
        *("--sizes", "300,200", "--pairs", "50", "--repeat", "1", "--no-stickler"),
        *("--report-cases", "50", "--multiwoz", str(slice_file), "--mutate-limit", "40"),
    )
    assert "    300 cases" in out
    assert "cases/CPU-s" in out
    assert "peak RSS" in out
    assert "x the bare loop" in out
    assert "orjson is" in out
    assert "40 cases x" in out
    assert "case-mutants/s" in out


def test_bench_episodes_runs_on_a_tiny_suite() -> None:
    out = _bench("bench_episodes.py", "--episodes", "8", "--turns", "3")
    assert "8 episodes x 3 turns = 24 cases" in out
    for line in ("(a) no episodes", "(b) episodes, teacher-forced", "(c) episodes, free-running"):
        assert line in out


def test_bench_updates_runs_on_the_multiwoz_slice() -> None:
    suite = Path(__file__).resolve().parents[1] / "examples" / "multiwoz" / "suite.yaml"
    out = _bench("bench_updates.py", "--suite", str(suite), "--rounds", "1")
    assert "round 1: baseline" in out
    assert "median ratio" in out
    assert "free_running: errors {" in out
    assert "retention_at_5" in out


@pytest.mark.phoenix
def test_bench_sessions_stores_both_ways_on_a_tiny_run(phoenix_url: str) -> None:
    out = _bench("bench_sessions.py", "--url", phoenix_url, "--episodes", "4", "--turns", "2")
    assert "4 episodes x 2 turns traced and ingested" in out
    assert "12 annotations each way" in out
    for line in ("(a) span annotations:", "(b) session annotations:", "(b)/(a) = "):
        assert line in out


@pytest.mark.phoenix
def test_bench_traces_gold_exports_and_imports_a_few_spans(phoenix_url: str) -> None:
    out = _bench("bench_traces_gold.py", "--url", phoenix_url, "--spans", "20")
    assert "ok 2 of 2 corrected" in out
    for line in ("(a) raw REST read", "(b) export", "(c) export with linked", "(d) import"):
        assert line in out


def test_bench_structured_agrees_with_the_stored_stickler_figures() -> None:
    out = _bench("bench_structured.py", "--no-stickler", "--list-size", "100", "--repeat", "1")
    assert "using the stored figures of stickler_scores.json" in out
    line = out.split("with item_threshold 0 (stickler credits sub-threshold pairs): ", 1)[1]
    overall, listed = line.split("\n", 1)[0].removeprefix("overall ").split(", list ")
    assert float(overall) < 1e-9
    assert float(listed) < 1e-9
    assert "cases differing in score, paired items or sub-field counts: 20" in out
    assert "every item with one wrong sub-field" in out


@pytest.mark.phoenix
def test_bench_traces_scores_a_few_spans(phoenix_url: str) -> None:
    out = _bench("bench_traces.py", "--url", phoenix_url, "--spans", "20")
    assert "checks: ok" in out
    for line in (
        "(a) raw REST read",
        "(b) traces score, dry run",
        "(c) traces score, e2e",
        "(d) raw queued write",
        "(e) raw sync=true write",
    ):
        assert line in out
    assert "peak Python memory" in out


def test_bench_diff_measures_every_implementation_on_tiny_runs() -> None:
    out = _bench(
        "bench_diff.py", "--sizes", "120,240", "--old-size", "120", "--rescore-size", "120"
    )
    assert "    120 cases  new:" in out
    assert "    120 cases  rescore:" in out
    assert "    120 cases  old:" in out
    assert "regressed: f5; improved: f3" in out
    assert "new/rescore: CPU" in out
    assert "new/old: CPU" in out
    assert "!!" not in out  # every implementation's verdicts agree
    assert "growth 120 -> 240" in out
    assert "peak RSS" in out


@pytest.mark.skipif(
    not (BENCH.parents[1] / "shared" / "data" / "multiwoz21").exists(),
    reason="the shared MultiWOZ data is absent",
)
def test_bench_merge_checks_merged_shards_and_times_workers_on_a_tiny_slice() -> None:
    out = _bench("bench_merge.py", "--every", "100", "--cases", "200")
    assert "JSON reports identical (ids and times aside): yes" in out
    assert "--workers 1" in out
    assert "--workers 2" in out
    assert "speed-up" in out


def test_bench_ray_suite_times_a_tasks_suite_step_both_ways_on_a_tiny_suite() -> None:
    pytest.importorskip("ray")
    out = _bench("bench_ray_suite.py", "--cases", "200", "--shards", "4", "--rounds", "1")
    assert "the shipped suite pickles to" in out
    assert "load_suite (before)" in out
    assert "ray.get(shipped) + with_mutator (now)" in out
    assert "before / now:" in out


def test_bench_record_scores_a_tiny_suite_and_hashes_its_records() -> None:
    out = _bench("bench_record.py", "--cases", "60", "--rounds", "2", "--parts")
    # each round scores the same results: the same records and headline figures
    records = [line for line in out.splitlines() if line.strip().startswith("records ")]
    assert len(records) == 2
    assert records[0] == records[1]
    assert "headline (0.0, 0.95, 0.95" in records[0]  # every case has one wrong field of 20
    assert "x the floor" in out
    assert "RunTally.add" in out


@pytest.mark.parametrize(
    ("flags", "match"),
    [((), "0.000"), (("--varied",), "0.333"), (("--varied", "--async-mutator"), "0.333")],
)
def test_bench_pipeline_runs_and_rescores_the_uniform_and_the_varied_suite(
    flags: tuple[str, ...], match: str
) -> None:
    out = _bench("bench_pipeline.py", "--cases", "30", "--rounds", "1", *flags)
    # uniform: every case has its fourth field wrong; varied: one case in three is all right
    assert f"overall match {match}" in out
    assert ("varied fields" in out) is ("--varied" in flags)
    assert ("an async def mutator" in out) is ("--async-mutator" in flags)
    assert "x the floor" in out
    assert "x the run" in out


@pytest.mark.parametrize("flags", [(), ("--sync-mutator",)])
def test_bench_case_step_measures_both_steps_of_one_run(flags: tuple[str, ...]) -> None:
    out = _bench("bench_case_step.py", "--cases", "60", "--rounds", "2", "--block", "10", *flags)
    assert out.count("pipeline step") == 2
    assert "the step around the mutator call:" in out
    assert ("a sync def mutator" in out) is bool(flags)


def test_bench_repeat_runs_one_and_n_repetitions_on_a_tiny_suite() -> None:
    out = _bench("bench_repeat.py", "--cases", "40", "--repetitions", "2", "--rounds", "1")
    assert "40 cases of 20 fields (f5 flaky on 30% of calls), --repeat 2" in out
    assert "CPU: --repeat 2" in out
    assert "peak RSS: --repeat 2" in out
