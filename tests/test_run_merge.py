"""``stateval merge`` and ``stateval run --workers N``: the shards of a run reduced to the run,
its figures, reports, gate and exit code those of a single process."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import pickle
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.regressions import diff_runs, local_run
from stateval.run import (
    SCORES_KEY,
    Journal,
    Shard,
    list_runs,
    merge_shards,
    merged_tally,
    rescore,
    rescored_tally,
    run_summary,
    start_journal,
)
from stateval.suite import load_suite
from stateval.upload import run_suite

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "multiwoz" / "suite.yaml"

MUTATOR = """
from stateval.state import ValueConfidence


def track(state, input):
    out = state.copy()
    i = int(input.prompt)
    out.set_value("n", ValueConfidence(input.prompt if i % 5 else "wrong", 0.6 + (i % 4) / 10))
    out.set_value("odd", ValueConfidence(i % 2 == 1, 1.0))
    return out
"""
N = 30


def _report(path: Path) -> dict[str, Any]:
    """A JSON report without what differs between two runs of the same cases: the run id and
    the times the mutator took."""
    report = json.loads(path.read_text())
    report.pop("run_id")
    report.pop("mean_time")
    for case in report["cases"]:
        case.pop("time_used", None)
    for mode in report.get("modes", {}).values():  # --mode both: each mode's run
        mode.pop("run_id")
        mode.pop("mean_time", None)
    if "regressions" in report:
        diff = report["regressions"]
        diff.pop("cand")  # "run <id>"
        diff["metrics"] = [m for m in diff["metrics"] if m["name"] != "mean_time"]
    return dict(report)


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """A 30-case suite of a Python mutator: one field wrong in every fifth case, confidences
    spread for calibration, a threshold it misses (so runs exit 1)."""
    name = "merge_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    cases = [
        {"id": f"k{i}", "input": {"prompt": str(i)}, "expected_post_state": {"n": str(i)}}
        for i in range(N)
    ]
    suite = {
        "name": "merge-small",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
        "policies": {"*": {"confidence": "ignore"}},
        "thresholds": {"accuracy": 0.9},
        "phoenix": {"dataset": f"merge-{uuid.uuid4().hex[:8]}"},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    return tmp_path / "suite.yaml"


def _shards(suite: Path, home: Path, n: int, *extra: str) -> list[str]:
    before = set(list_runs(home))
    for i in range(1, n + 1):
        result = _invoke("run", str(suite), "--no-phoenix", "--shard", f"{i}/{n}", *extra)
        assert result.exit_code in (0, 1), result.output
    return [r for r in list_runs(home) if r not in before]


def test_merged_shards_of_the_multiwoz_example_report_what_the_single_run_does(
    home: Path,
) -> None:
    single = _invoke("run", str(EXAMPLE), "--no-phoenix", "--report-json", "single.json")
    assert single.exit_code == 0, single.output
    shards = _shards(EXAMPLE, home, 3)
    merged = _invoke("merge", *shards, "--report-json", "merged.json", "--junit", "m.xml")
    assert merged.exit_code == single.exit_code, merged.output
    one, parts = _report(Path("single.json")), _report(Path("merged.json"))
    assert parts == one
    assert one["n_cases"] == 213
    assert one["episodes"]
    journal = Journal.open(home)
    assert journal.header.merged_from == sorted(
        shards, key=lambda r: Journal.open(home, r).header.shard or ""
    )
    assert journal.complete
    assert journal.header.shard is None
    first = Journal.open(home, list_runs(home)[0])
    assert journal.header.case_ids == first.header.case_ids  # planned as the single run
    assert Path("m.xml").read_text().count("<testcase") == 213


def test_the_shards_counts_add_up_to_the_rescored_merged_run(home: Path, tmp_path: Path) -> None:
    """What ``--workers`` does instead of scoring the merged run again: each shard's counts,
    pickled as a worker sends them, added up; every figure equals the rescored run's (the
    MultiWOZ example with TRADE's convention: episodes, slots, slices, calibration, failing
    cases)."""
    suite_file = tmp_path / "trade.yaml"
    data = yaml.safe_load(EXAMPLE.read_text())
    data["mutator"]["path"] = data["slots"]["path"] = str(EXAMPLE.parent)
    data["cases"]["file"] = str(EXAMPLE.parent / data["cases"]["file"])
    data["metrics"] = {"convention": "trade"}
    suite_file.write_text(yaml.safe_dump(data, sort_keys=False))
    shards = [Journal.open(home, r) for r in _shards(suite_file, home, 3)]
    suite = load_suite(suite_file)
    parts = [pickle.loads(pickle.dumps(rescored_tally(suite, j).part())) for j in shards]
    merged = merge_shards(home, shards, suite.cases.ids)
    added = run_summary(suite, merged, merged_tally(suite, merged, shards[::-1], parts[::-1]))
    rescored = rescore(suite, merged)
    assert replace(added, cases=(), failing=()) == replace(rescored, cases=(), failing=())
    assert added.n_cases == 213
    assert 0 < added.n_failing < 213
    assert [f.case_id for f in added.failing] == [f.case_id for f in rescored.failing]
    assert added.episodes is not None
    assert added.episodes.n_episodes == 29
    assert added.metrics is not None
    assert added.metrics.slices["metadata.dialogue"]
    assert added.metrics.convention is not None
    assert added.calibration is not None
    assert added.calibration.overall.n > 0


def test_shards_counts_keep_the_judges_agreement_with_human_verdicts(
    judged_suite: Callable[..., Any], tmp_path: Path
) -> None:
    """The cases a summary keeps whole (human verdicts, the first failing) come back from the
    merged journal in plan order, so the judge's agreement is the single run's."""
    suite = judged_suite()
    home = tmp_path / "judged-home"
    single = asyncio.run(run_suite(suite, start_journal(home, suite), concurrency=2))
    shards, parts = [], []
    for i in (1, 2):
        journal = start_journal(home, suite, shard=Shard(i, 2), shared_run="judged")
        outcome = asyncio.run(run_suite(suite, journal, concurrency=2))
        assert outcome.tally is not None
        shards.append(journal)
        parts.append(pickle.loads(pickle.dumps(outcome.tally.part())))
    merged = merge_shards(home, shards, suite.cases.ids)
    added = run_summary(suite, merged, merged_tally(suite, merged, shards, parts))
    assert added.agreement is not None
    assert single.summary.agreement is not None
    assert added.agreement == rescore(suite, merged).agreement  # in plan order
    assert added.agreement.overall == single.summary.agreement.overall
    assert added.agreement.overall.kappa == pytest.approx(0.5)
    assert [f.case_id for f in added.failing] == [f.case_id for f in single.summary.failing]
    assert added.calibration == single.summary.calibration


def test_merge_keeps_the_exit_code_and_the_gate_of_a_single_run(home: Path, small: Path) -> None:
    base = _invoke("run", str(small), "--no-phoenix")
    assert base.exit_code == 1, base.output  # accuracy 0.8 < 0.9
    (baseline,) = list_runs(home)
    single = _invoke(
        "run", str(small), "--no-phoenix", "--baseline", baseline, "--report-json", "one.json"
    )
    shards = _shards(small, home, 2)
    merged = _invoke("merge", *shards, "--baseline", baseline, "--report-json", "two.json")
    assert merged.exit_code == single.exit_code == 1, merged.output
    assert "accuracy" in merged.output
    assert "regression gate" in merged.output
    one, two = _report(Path("one.json")), _report(Path("two.json"))
    assert two == one
    assert one["accuracy"] == pytest.approx(0.8)  # k0, k5, ... k25 wrong
    assert two["regressions"]["base"] == f"run {baseline}"
    assert two["calibration"]["overall"]["n"] >= N  # the calibration of every case


def test_a_merged_run_keeps_its_shards_journaled_scores_for_the_diff(
    home: Path, small: Path
) -> None:
    single = _invoke("run", str(small), "--no-phoenix")
    assert single.exit_code == 1, single.output
    (baseline,) = list_runs(home)
    shards = _shards(small, home, 2)
    assert _invoke("merge", *shards).exit_code == 1
    merged = Journal.open(home)
    fingerprint = Journal.open(home, shards[0]).header.scores_fingerprint
    assert fingerprint is not None
    assert merged.header.scores_fingerprint == fingerprint
    records = [r for _, r in merged.results.read(list(merged.results))]
    assert len(records) == N
    assert all(r is not None and SCORES_KEY in r for r in records)
    suite = load_suite(small, load_mutator=False)
    sides = [local_run(merged, suite, journaled=j) for j in (True, False)]
    base = local_run(Journal.open(home, baseline), suite)
    assert diff_runs(base, sides[0]).to_dict() == diff_runs(base, sides[1]).to_dict()


def test_merge_reads_shard_folders_copied_from_other_machines(home: Path, small: Path) -> None:
    shards = _shards(small, home, 2)
    elsewhere = [str(home / "runs" / r) for r in shards]
    result = _invoke("merge", elsewhere[0], elsewhere[1] + "/journal.jsonl")
    assert result.exit_code == 1, result.output
    assert Journal.open(home).header.merged_from == shards


def _refused(*args: str) -> str:
    result = _invoke("merge", *args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def test_merge_refuses_a_missing_shard(home: Path, small: Path) -> None:
    shards = _shards(small, home, 3)
    line = _refused(shards[0], shards[2])
    assert re.fullmatch(r"error: shard 2/3 of run \w+ is missing \(given: 1/3, 3/3\)", line)


def test_merge_refuses_a_shard_given_twice(home: Path, small: Path) -> None:
    shards = _shards(small, home, 2)
    # a retried CI job: shard 1/2 of the same run again
    assert _invoke("run", str(small), "--no-phoenix", "--shard", "1/2").exit_code == 1
    retried = list_runs(home)[-1]
    line = _refused(*shards, retried)
    assert line == f"error: shard 1/2 given twice: runs {shards[0]} and {retried}"


def test_merge_refuses_shards_of_different_repetitions_suites_or_modes(
    home: Path, small: Path
) -> None:
    first = _shards(small, home, 2)
    repeated = _shards(small, home, 2, "--repeat", "2")
    line = _refused(first[0], repeated[1])
    assert line.startswith(f"error: runs {first[0]} and {repeated[1]} are shards of different ")
    assert "repetitions: 1 != 2" in line
    tf = _shards(EXAMPLE, home, 2)
    free = _shards(EXAMPLE, home, 2, "--mode", "free_running")
    assert "different episode modes: 'teacher_forced' != 'free_running'" in _refused(tf[0], free[1])
    assert "different suites" in _refused(first[0], tf[1])
    assert _refused(first[0], "no-such-run").startswith("error: no run 'no-such-run' under ")
    assert _invoke("run", str(small), "--no-phoenix").exit_code == 1
    assert _refused(list_runs(home)[-1]) == (
        f"error: run {list_runs(home)[-1]} is not a shard (run with --shard I/N)"
    )


def test_merge_refuses_an_unfinished_shard(home: Path, small: Path) -> None:
    shards = _shards(small, home, 2)
    path = home / "runs" / shards[1] / "journal.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    kept = [line for line in lines if b'"kind":"end"' not in line][:-2]  # two results lost
    path.write_bytes(b"".join(kept))
    line = _refused(*shards)
    total = len(Journal.open(home, shards[1]).header.case_ids)
    assert line == (
        f"error: run {shards[1]} (shard 2/2) is unfinished: 2 of {total} results missing; "
        "`stateval run SUITE --shard 2/2 --resume` finishes it"
    )


def test_workers_make_one_run_with_the_single_runs_figures(home: Path, small: Path) -> None:
    single = _invoke("run", str(small), "--no-phoenix", "--report-json", "one.json")
    workers = _invoke(
        "run", str(small), "--no-phoenix", "--workers", "2", "--report-json", "two.json"
    )
    assert workers.exit_code == single.exit_code == 1, workers.output
    assert _report(Path("two.json")) == _report(Path("one.json"))
    assert workers.output.count("threshold accuracy") == 1  # one summary
    runs = [Journal.open(home, r) for r in list_runs(home)[1:]]
    assert sorted(j.header.shard or "" for j in runs) == ["", "1/2", "2/2"]
    by_shard = sorted(runs[:2], key=lambda j: j.header.shard or "")
    assert runs[-1].header.merged_from == [j.run_id for j in by_shard]
    # the workers' compact scores reach the merged run, for stateval diff to read
    assert runs[-1].header.scores_fingerprint == by_shard[0].header.scores_fingerprint
    assert all(SCORES_KEY in r for _, r in runs[-1].results.read(list(runs[-1].results)) if r)


def test_workers_without_per_case_reports_score_no_case_again_in_the_driver(
    home: Path, small: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver adds up the workers' counts: it scores only the failing cases a summary keeps
    whole, not every case as a merge of journals does (the Markdown report lists no case but
    the failing ones)."""
    import stateval.run._merge as merge_module
    import stateval.run._rescore as rescore_module
    import stateval.run._tally as tally_module

    scored: list[str] = []
    real = merge_module.score_case

    def counted(case: Any, result: Any, scoring: Any) -> Any:
        scored.append(case.id)  # in this process only: the workers count in theirs
        return real(case, result, scoring)

    for module in (merge_module, rescore_module, tally_module):
        monkeypatch.setattr(module, "score_case", counted)
    result = _invoke("run", str(small), "--no-phoenix", "--workers", "2", "--markdown", "r.md")
    assert result.exit_code == 1, result.output
    # at most the first 10 failing cases of each shard (those that may be among the run's 10)
    assert 0 < len(scored) <= 20 < N
    shown = re.findall(r"\bk\d+\b", Path("r.md").read_text())
    assert shown
    assert set(scored) >= set(shown)  # the failing cases the Markdown report lists
    scored.clear()
    merged = Journal.open(home)
    shards = [r for r in merged.header.merged_from]
    assert _invoke("merge", *shards).exit_code == 1
    assert len(scored) == N  # a merge of journals alone scores every case again


def test_workers_with_both_modes_merge_each_mode_as_the_single_run(home: Path) -> None:
    args = ("run", str(EXAMPLE), "--no-phoenix", "--mode", "both")
    single = _invoke(*args, "--report-json", "one.json")
    workers = _invoke(*args, "--workers", "2", "--report-json", "two.json")
    assert workers.exit_code == single.exit_code, workers.output
    one, two = _report(Path("one.json")), _report(Path("two.json"))
    assert two == one
    assert "modes" in one
    merged = [Journal.open(home, r) for r in list_runs(home)]
    merged = [j for j in merged if j.header.merged_from]
    assert [j.header.mode for j in merged] == ["teacher_forced", "free_running"]
    groups = {Journal.open(home, r).header.shared_run for j in merged for r in j.header.merged_from}
    assert len(groups) == 2  # a shared run (one experiment) per mode


def test_workers_refuse_options_that_do_not_combine(home: Path, small: Path) -> None:
    result = _invoke("run", str(small), "--no-phoenix", "--workers", "2", "--shard", "1/2")
    assert result.exit_code == 2
    assert "--workers and --backend do not combine with --shard" in result.output
    result = _invoke("run", str(small), "--no-phoenix", "--workers", "2", "--backend", "mpi")
    assert result.exit_code == 2
    assert "--backend 'mpi': expected one of local, ray" in result.output


def _get(url: str, path: str, **params: Any) -> Any:
    response = httpx.get(f"{url}{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


@pytest.mark.phoenix
def test_workers_fill_one_experiment_with_the_whole_runs_figures(
    home: Path, small: Path, phoenix_url: str
) -> None:
    result = _invoke("run", str(small), "--phoenix-url", phoenix_url, "--workers", "2")
    assert result.exit_code == 1, result.output
    assert f"Phoenix: {N} of {N} cases delivered" in result.output
    merged = Journal.open(home)
    experiment_id = merged.ack("experiment")["experiment_id"]  # type: ignore[index]
    dataset = yaml.safe_load(small.read_text())["phoenix"]["dataset"]
    (found,) = _get(phoenix_url, "/v1/datasets", name=dataset)["data"]
    experiments = _get(phoenix_url, f"/v1/datasets/{found['id']}/experiments")["data"]
    assert [e["id"] for e in experiments] == [experiment_id]
    assert len(_get(phoenix_url, f"/v1/experiments/{experiment_id}/runs")["data"]) == N
    meta = _get(phoenix_url, f"/v1/experiments/{experiment_id}")["data"]["metadata"]
    assert sorted(meta["shard_figures"]) == ["1/2", "2/2"]
    # the whole run's figures at the top level, as a single run stores its own
    assert meta["accuracy"] == pytest.approx(0.8)
    assert meta["fields"]["n"]["matching"] == N - N // 5


# -- --backend ray: the shards as Ray tasks on a local 2-CPU Ray (`cluster`) -------------------


def test_ray_shards_make_the_single_runs_report(cluster: Any, home: Path, small: Path) -> None:
    single = _invoke("run", str(small), "--no-phoenix", "--report-json", "one.json")
    result = _invoke(
        "run", str(small), "--no-phoenix", "--workers", "2", "--backend", "ray",
        "--report-json", "two.json",
    )  # fmt: skip
    assert result.exit_code == single.exit_code == 1, result.output
    assert _report(Path("two.json")) == _report(Path("one.json"))
    merged = Journal.open(home)
    shards = [Journal.open(home, r) for r in merged.header.merged_from]
    # the workers journaled in temporary homes of their own; their journals came back here
    assert [j.header.shard for j in shards] == ["1/2", "2/2"]
    assert sorted(c for j in shards for c in j.header.case_ids) == sorted(merged.header.case_ids)
    assert len(list_runs(home)) == 4  # the single run, two shards, the merged run


@pytest.mark.phoenix
def test_ray_workers_upload_into_one_experiment(
    cluster: Any, home: Path, small: Path, phoenix_url: str
) -> None:
    result = _invoke(
        "run", str(small), "--phoenix-url", phoenix_url, "--workers", "2", "--backend", "ray"
    )
    assert result.exit_code == 1, result.output
    assert f"Phoenix: {N} of {N} cases delivered" in result.output
    experiment_id = Journal.open(home).ack("experiment")["experiment_id"]  # type: ignore[index]
    dataset = yaml.safe_load(small.read_text())["phoenix"]["dataset"]
    (found,) = _get(phoenix_url, "/v1/datasets", name=dataset)["data"]
    experiments = _get(phoenix_url, f"/v1/datasets/{found['id']}/experiments")["data"]
    assert [e["id"] for e in experiments] == [experiment_id]
    runs = _get(phoenix_url, f"/v1/experiments/{experiment_id}/runs")["data"]
    assert len({r["dataset_example_id"] for r in runs}) == N
    meta = _get(phoenix_url, f"/v1/experiments/{experiment_id}")["data"]["metadata"]
    assert meta["n_cases"] == N
    assert meta["accuracy"] == pytest.approx(0.8)


def _no_kernel_copy(*args: object) -> int:
    raise OSError(errno.EXDEV, "cross-device")


@pytest.mark.parametrize("kernel_copy", ["copy_file_range", "none", "refused"])
def test_a_merge_copying_the_workers_lines_writes_the_journal_it_writes_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel_copy: str
) -> None:
    import stateval.run._journal_file as journal_file

    if kernel_copy != "copy_file_range":  # a platform without it, or a file system refusing it
        copy = None if kernel_copy == "none" else _no_kernel_copy
        monkeypatch.setattr(journal_file, "_kernel_copy", copy)
    # the workers hand over their result lines as byte ranges (shard_lines); copied, they make
    # the journal a merge reading the shards line by line makes: interleaved acknowledgements,
    # repetitions and a line the merge must encode again (\u-escaped: an unpaired surrogate)
    from stateval.run import RunHeader, shard_lines

    def shard(i: int, ids: list[str]) -> Journal:
        header = RunHeader(
            suite_path="s.yaml", suite_name="s", suite_hash="h", cases_hash="c",
            case_ids=ids, shard=f"{i}/2", shared_run="g", repetitions=2,
        )  # fmt: skip
        journal = Journal.create(tmp_path / "shards", header)
        for n, case_id in enumerate(ids):
            journal.append_result(case_id, {"post_state": {"n": n}, "error": None})
            if n == 2:
                journal.append_ack("run", case_id, run_id=f"R{case_id}")
            if n == 3:
                journal.append_result(case_id, {"post_state": {"n": "\ud800"}, "error": None})
            journal.append_result(case_id, {"post_state": None, "error": "x", "repetition": 2})
        journal.append_end()
        return journal

    ids = [f"c{n:02d}\u00e9" for n in range(12)]
    parts = [shard(1, ids[1::2]), shard(2, ids[::2])]
    handed = pickle.loads(pickle.dumps([shard_lines(j) for j in parts]))
    assert any(lines.parsed for lines in handed)
    assert all(len(lines.blocks) > 1 for lines in handed)  # broken by the acknowledgements
    copied = merge_shards(tmp_path / "a", parts, ids, handed)
    alone = merge_shards(tmp_path / "b", parts, ids)
    read = Journal.open(tmp_path / "a", copied.run_id)
    for journal in (copied, read):
        assert dict(journal.results) == dict(alone.results)
        assert journal.repeated == alone.repeated
        assert journal.current_acks() == alone.current_acks()
        assert journal.complete
    records = [j.path.read_bytes().split(b"\n")[1:-2] for j in (copied, alone)]  # no header, end
    assert records[0] == records[1]


def test_workers_show_the_progress_bar_of_a_single_run(home: Path, small: Path) -> None:
    suite = yaml.safe_load(small.read_text())
    bad = {"id": "bad", "input": {"prompt": "x"}, "expected_post_state": {"n": "x"}}
    suite["cases"]["inline"].append(bad)  # the mutator fails on it: an error
    small.write_text(yaml.safe_dump(suite, sort_keys=False))

    def bar(*extra: str) -> str:
        result = _invoke("run", str(small), "--no-phoenix", *extra)
        assert result.exit_code == 1, result.output
        lines = [line for line in result.output.splitlines() if line.startswith("merge-small ")]
        assert lines, result.output
        return re.sub(r"\d+:\d\d:\d\d$", "", lines[-1])  # the time it took aside

    single = bar()
    assert f"{N + 1}/{N + 1} 1 errors" in single
    assert bar("--workers", "2") == single


@pytest.mark.parametrize("wait", [True, False])
def test_a_copy_failing_midway_leaves_no_half_record_in_the_merged_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wait: bool
) -> None:
    import stateval.run._journal_file as journal_file
    from stateval.errors import JournalWriteError
    from stateval.run import RunHeader

    journals = []
    for i, ids in ((1, ["a", "c"]), (2, ["b"])):
        header = RunHeader(
            suite_path="s.yaml", suite_name="s", suite_hash="h", cases_hash="c",
            case_ids=ids, shard=f"{i}/2", shared_run="g",
        )  # fmt: skip
        journal = Journal.create(tmp_path / "shards", header)
        for case_id in ids:
            journal.append_result(case_id, {"post_state": {"v": "x" * 100}, "error": None})
        journal.append_end()
        journals.append(journal)

    def disk_full(source: int, target: int, count: int, offset: int) -> int:
        os.write(target, os.pread(source, count // 2, offset))  # half a record, then full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_file, "_kernel_copy", disk_full)
    with pytest.raises(JournalWriteError, match="No space left"):  # when waited for
        merge_shards(tmp_path / "merged", journals, ["a", "b", "c"], wait=wait).flush()
    (folder,) = (tmp_path / "merged" / "runs").iterdir()
    lines = (folder / "journal.jsonl").read_bytes().splitlines(keepends=True)
    assert [json.loads(line)["kind"] for line in lines] == ["header"]  # cut back whole


def test_workers_are_forked_from_a_driver_with_no_other_thread(home: Path, small: Path) -> None:
    # a process forked while it has threads may deadlock (Python 3.12 warns): the progress
    # bar's refresh thread starts once the workers are forked
    code = (
        "import os, sys, threading\n"
        "os.register_at_fork(before=lambda: print('fork:', threading.active_count(),"
        " file=sys.stderr))\n"
        "from stateval.cli import main\n"
        "main()\n"
    )
    argv = [sys.executable, "-c", code, "run", str(small), "--no-phoenix", "--workers", "2"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert re.findall(r"^fork: (\d+)$", done.stderr, re.M) == ["1", "1"], done.stderr
    assert f"{N}/{N}" in done.stderr  # the bar was shown after all
