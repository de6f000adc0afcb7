"""``stateval diff`` reads the compact scores a run journals with each result (issue 25), and
gives exactly what scoring the journals again gives: the same verdicts, figures and
intervals; a suite whose scoring settings changed since the runs is scored again, and a
journal written before compact scores still diffs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.regressions import ColumnsBuilder, Observation, RunColumns, diff_runs, local_run
from stateval.run import SCORES_KEY, Journal, Scoring, iter_repetitions, scores_fingerprint
from stateval.suite import Suite, load_suite

MUTATOR = """
from pathlib import Path
from stateval.state import ValueConfidence

def track(state, input):
    mode = Path(__file__).with_name("mode").read_text().strip()
    i = int(input.prompt)
    if mode == "bad" and i % 11 == 0:
        raise RuntimeError("the tracker fell over")
    out = state.copy()
    area = ["north", "south", "centre"][i % 3]
    name = f"Hotel{i}"
    items = [f"item{i}", "water"]
    if mode == "bad" and i % 3 == 0:
        area = "west"                      # a regression on hotel.area
    if mode == "bad" and i % 4 == 0:
        name = name.upper()                # wrong unless the policy folds case
    if mode == "good" and i % 2 == 0:
        items = [f"item{i}", "juice"]      # the candidate improves on order.items
    out.set_value("hotel.area", ValueConfidence(area, 1.0))
    out.set_value("hotel.name", ValueConfidence(name, 1.0))
    out.set_value("order.items", ValueConfidence(items, 1.0))
    if mode == "bad" and i % 7 == 0:
        out.set_value("hotel.parking", ValueConfidence("yes", 1.0))   # an extra field
    if i % 6 == 0 and not (mode == "bad" and i % 12 == 0):
        out.remove("hotel.stars")          # a delete the case expects
    return out
"""

N = 60
SLOTS = ["hotel.area", "hotel.name", "hotel.stars", "order.items"]
SUITE: dict[str, Any] = {
    "policies": {"order.items": {"list_mode": "set"}},
    "slots": SLOTS,
    "metrics": {"convention": "mwzeval"},
}


def _cases() -> list[dict[str, Any]]:
    out = []
    for i in range(N):
        pre = {"hotel.area": "east", "hotel.name": "Old", "hotel.stars": 3}
        expected = {
            "hotel.area": ["north", "south", "centre"][i % 3],
            "hotel.name": f"Hotel{i}",
            "order.items": [f"item{i}", "water"],
        }
        if i % 6:
            expected["hotel.stars"] = 3
        out.append(
            {
                "id": f"c{i:02d}",
                "input": {"prompt": str(i)},
                "pre_state": pre,
                "expected_post_state": expected,
            }
        )
    return out


def _write_suite(project: Path, **changes: Any) -> Path:
    name = "journaled_mut_" + re.sub(r"\W", "_", project.name)
    (project / f"{name}.py").write_text(MUTATOR)
    suite = {
        "name": "hotels",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": _cases()},
        **SUITE,
        **changes,
    }
    path = project / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _run(project: Path, mode: str, *extra: str) -> str:
    (project / "mode").write_text(mode)
    result = CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix", *extra])
    assert result.exit_code in (0, 1), result.output
    return Journal.open(project / ".stateval", "latest").run_id


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    _write_suite(tmp_path)
    return tmp_path


def _side(project: Path, run_id: str, *, journaled: bool = True) -> RunColumns:
    suite = load_suite(project / "suite.yaml", load_mutator=False)
    return local_run(Journal.open(project / ".stateval", run_id), suite, journaled=journaled)


def _diff(project: Path, base: str, cand: str, *, journaled: bool = True) -> dict[str, Any]:
    diff = diff_runs(
        _side(project, base, journaled=journaled), _side(project, cand, journaled=journaled)
    )
    data: dict[str, Any] = diff.to_dict()
    return data


def _observed_columns(suite: Suite, journal: Journal) -> RunColumns:
    """The columns as the diff made them before compact scores: each repetition scored and
    read through every evaluation it has (`Observation.from_case_score`)."""
    scoring = Scoring.from_suite(suite)
    figures = scoring.accumulator()
    builder = ColumnsBuilder()
    for case_id, reps in iter_repetitions(suite, journal, scoring):
        case = suite.case(case_id)
        assert case is not None
        builder.add(
            case_id,
            [
                Observation.from_case_score(
                    s,
                    figures.case_shares(
                        s.metrics_under(scoring, case), case.metadata, s.comparison
                    ),
                )
                for s in reps
            ],
        )
    return builder.build(f"run {journal.run_id}")


def _same_columns(left: RunColumns, right: RunColumns) -> None:
    assert sorted(left.case_ids) == sorted(right.case_ids)
    order = {c: i for i, c in enumerate(right.case_ids)}
    move = [order[c] for c in left.case_ids]
    assert left.fields.keys() == right.fields.keys()
    for path, column in left.fields.items():
        other = right.fields[path]
        found = dict(
            zip((move[i] for i in column.cases.tolist()), column.values.tolist(), strict=True)
        )
        assert found == dict(zip(other.cases.tolist(), other.values.tolist(), strict=True)), path
    assert [m.name for m in left.measures] == [m.name for m in right.measures]
    for name, rows in left.metrics.items():
        assert rows.tolist() == right.metrics[name][move].tolist(), name
    assert left.repetitions == right.repetitions


def test_journaled_scores_diff_exactly_as_scoring_the_journals_again(project: Path) -> None:
    base = _run(project, "good")
    cand = _run(project, "bad")
    journal = Journal.open(project / ".stateval", cand)
    suite = load_suite(project / "suite.yaml", load_mutator=False)
    # the run journaled its scores under the suite's fingerprint: the diff reads them
    assert journal.header.scores_fingerprint == scores_fingerprint(
        Scoring.from_suite(suite), suite.cases_hash
    )
    records = [r for _, r in journal.results.read(list(journal.results))]
    assert all(r is not None and SCORES_KEY in r for r in records)
    read = _diff(project, base, cand)
    rescored = _diff(project, base, cand, journaled=False)
    assert read == rescored
    # and the diff finds what the candidate did: every kind of figure is compared
    fields = {f["path"]: f["verdict"] for f in read["fields"]}
    assert fields["hotel.area"] == "regressed"
    assert fields["order.items"] == "improved"
    metrics = {m["name"]: m for m in read["metrics"]}
    for name in ("slot_accuracy", "changed_fields_accuracy", "deletion_success", "error_rate"):
        assert metrics[name]["cand"] != metrics[name]["base"], name
    assert any(name.startswith("mwzeval_") for name in metrics)
    # the CLI prints the same diff
    printed = CliRunner().invoke(app, ["diff", base, cand, "--json"])
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.output)["fields"] == read["fields"]
    # the compact scores hold what every evaluation of the case held before them
    _same_columns(_side(project, cand), _observed_columns(suite, journal))


def test_repetitions_are_journaled_and_read_alike(project: Path) -> None:
    base = _run(project, "good", "--repeat", "2")
    cand = _run(project, "bad", "--repeat", "2")
    journal = Journal.open(project / ".stateval", cand)
    assert journal.repeated
    assert all(SCORES_KEY in r for r in journal.repeated.values())
    assert _diff(project, base, cand) == _diff(project, base, cand, journaled=False)
    suite = load_suite(project / "suite.yaml", load_mutator=False)
    _same_columns(_side(project, cand), _observed_columns(suite, journal))


CHANGES: dict[str, dict[str, Any]] = {
    "policy": {"policies": {**SUITE["policies"], "hotel.name": {"normalize": ["case"]}}},
    "slots": {"slots": SLOTS[:2]},
    "metrics": {"metrics": {"averaging": "case", "list_credit": "partial"}},
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_scoring_setting_scores_both_runs_again(project: Path, change: str) -> None:
    base = _run(project, "good")
    cand = _run(project, "bad")
    before = _diff(project, base, cand)
    _write_suite(project, **CHANGES[change])
    after = _diff(project, base, cand)
    # the journaled scores are stale: both runs are scored under the suite as it is now
    assert after == _diff(project, base, cand, journaled=False)
    assert after != before
    if change == "policy":  # the upper-cased names are right now: only the failed calls regress
        was = {f["path"]: f["regressed"] for f in before["fields"]}
        now = {f["path"]: f["regressed"] for f in after["fields"]}
        failed = len(range(0, N, 11))
        assert was["hotel.name"] == failed + len([i for i in range(N) if i % 4 == 0 and i % 11])
        assert now["hotel.name"] == failed


def _strip_scores(project: Path, run_id: str) -> None:
    """Make a run's journal as stateval wrote it before compact scores."""
    path = project / ".stateval" / "runs" / run_id / "journal.jsonl"
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        record.pop(SCORES_KEY, None)
        record.pop("scores_fingerprint", None)
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")


def test_a_journal_without_compact_scores_still_diffs(project: Path) -> None:
    base = _run(project, "good")
    cand = _run(project, "bad")
    read = _diff(project, base, cand)
    _strip_scores(project, base)
    assert Journal.open(project / ".stateval", base).header.scores_fingerprint is None
    assert _diff(project, base, cand) == read
    _strip_scores(project, cand)
    assert _diff(project, base, cand) == read
    printed = CliRunner().invoke(app, ["diff", base, cand, "--json"])
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.output)["fields"] == read["fields"]
