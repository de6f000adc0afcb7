"""The edit-operation matrix: each error kind injected into 100 generated cases is attributed to
its cell, and to no other, in the core and through ``stateval run``'s reports."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stateval.cli import app
from stateval.compare import (
    CELLS,
    EditError,
    EditOp,
    EditTally,
    MatchPolicy,
    compare_states,
    field_edits,
)
from stateval.state import InterpretiveState

K, A, U, D, N = EditOp.KEEP, EditOp.ADD, EditOp.UPDATE, EditOp.DELETE, EditOp.NONE
_ABSENT = object()

#: error -> (pre, expected, actual) of the target field, as value names (None: absent)
INJECTED: dict[EditError, tuple[str | None, str | None, str | None]] = {
    EditError.STALE: ("old", "new", "old"),
    EditError.WRONG_UPDATE: ("old", "new", "bad"),
    EditError.WRONG_ADD: (None, "new", "bad"),
    EditError.CLOBBER: ("old", "old", "bad"),
    EditError.HALLUCINATED_ADD: (None, None, "bad"),
    EditError.MISSED_ADD: (None, "new", None),
    EditError.MISSED_DELETE: ("old", None, "old"),
    EditError.SPURIOUS_DELETE: ("old", "old", None),
}
CELL_OF = {
    EditError.STALE: (U, K),
    EditError.WRONG_UPDATE: (U, U),
    EditError.WRONG_ADD: (A, A),
    EditError.CLOBBER: (K, U),
    EditError.HALLUCINATED_ADD: (N, A),
    EditError.MISSED_ADD: (A, N),
    EditError.MISSED_DELETE: (D, K),
    EditError.SPURIOUS_DELETE: (K, D),
}
#: right operations the other fields of a case make: (pre, expected = actual)
RIGHT = [("old", "old"), (None, "new"), ("old", "new"), ("old", None)]


def _case(rng: random.Random, error: EditError, i: int) -> dict[str, Any]:
    """A case whose target field ``t`` carries ``error`` and whose 2-5 other fields are right."""
    word = {"old": f"o{i}", "new": f"n{i}", "bad": f"b{i}", None: None}
    pre: dict[str, str] = {}
    want: dict[str, str] = {}
    got: dict[str, str] = {}
    p, e, a = INJECTED[error]
    for state, value in ((pre, p), (want, e), (got, a)):
        if value is not None:
            state["t"] = str(word[value])
    for j in range(rng.randint(2, 5)):
        before, after = rng.choice(RIGHT)
        path = f"f{j}"
        if before is not None:
            pre[path] = str(word[before])
        if after is not None:
            want[path] = got[path] = str(word[after])
    return {"id": f"{error.value}-{i}", "pre": pre, "want": want, "got": got}


def _fixture() -> list[dict[str, Any]]:
    rng = random.Random(27)
    return [_case(rng, error, i) for error in INJECTED for i in range(100)]


def test_every_cell_the_pre_state_allows_is_named() -> None:
    assert set(CELL_OF.values()) <= set(CELLS)
    assert {e for e in CELLS.values() if e is not None} == set(EditError)


def test_each_injected_error_lands_in_its_cell_and_no_other() -> None:
    tally = EditTally()
    for case in _fixture():
        pre, want, got = (InterpretiveState.from_flat(case[k]) for k in ("pre", "want", "got"))
        edits = field_edits(pre, want, got, comparison=compare_states(want, got))
        tally.add(edits)
        wrong = [e for e in edits if e.error is not None]
        error = EditError(case["id"].split("-")[0])
        assert [(e.path, e.error, (e.expected, e.actual)) for e in wrong] == [
            ("t", error, CELL_OF[error])
        ]
    m = tally.result()
    assert m.n_cases == 800
    assert m.pooled.errors == {e.value: 100 for e in EditError}  # exact: 100 each, nothing else
    assert dict(m.pooled.wrong) == {cell: 100 for cell in CELL_OF.values()}  # no other cell
    assert set(m.fields["t"].errors) == {e.value for e in EditError}
    assert all(not m.fields[f].errors for f in m.fields if f != "t")
    # rates of the target field: 200 updates expected (stale, wrong update), none right
    t = m.fields["t"]
    assert t.expected(U) == 200
    assert (t.update_propagation_rate, t.staleness_rate, t.deletion_success) == (0.0, 0.5, 0.0)


def test_rates_per_field_and_pooled_by_hand() -> None:
    pre = InterpretiveState.from_flat({"a": "1", "b": "1", "c": "1"})
    want = InterpretiveState.from_flat({"a": "2", "b": "2"})
    tally = EditTally()
    tally.add(field_edits(pre, want, InterpretiveState.from_flat({"a": "2", "b": "1"})))
    tally.add(field_edits(pre, want, InterpretiveState.from_flat({"a": "2", "b": "2", "c": "1"})))
    pooled = tally.result().pooled
    assert pooled.update_propagation_rate == 3 / 4
    assert pooled.staleness_rate == 1 / 4
    assert pooled.deletion_success == 1 / 2
    assert pooled.errors == {"stale": 1, "missed_delete": 1}


def test_a_policy_decides_keep_from_update_and_a_confidence_move_is_no_update() -> None:
    pre = InterpretiveState.from_flat({"city": "Rome"}, confidence=0.5)
    want = InterpretiveState.from_flat({"city": "rome"}, confidence=0.9)
    got = InterpretiveState.from_flat({"city": "Rome"}, confidence=0.9)
    loose = MatchPolicy(normalize=("case",))
    [edit] = field_edits(pre, want, got, loose)
    assert (edit.expected, edit.actual, edit.error) == (K, K, None)
    [strict] = field_edits(pre, want, got)
    assert (strict.expected, strict.actual, strict.error) == (U, K, EditError.STALE)


def test_run_reports_the_matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same 800 cases through ``stateval run`` (a replay mutator): the JSON report's counts
    are exact, the terminal, Markdown and HTML reports show the matrix."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    lines = [
        json.dumps(
            {
                "id": c["id"],
                "pre_state": c["pre"],
                "input": {"prompt": c["id"]},
                "expected_post_state": c["want"],
                "actual_post_state": c["got"],
            }
        )
        for c in _fixture()
    ]
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    suite = {
        "name": "edits",
        "mutator": {"type": "replay"},
        "cases": {"file": "cases.jsonl"},
        "policies": {"*": {"confidence": "ignore"}},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    result = CliRunner().invoke(
        app,
        [
            "run",
            "suite.yaml",
            "--no-phoenix",
            "--report-json",
            "r.json",
            "--markdown",
            "r.md",
            "--report-html",
            "r.html",
        ],
    )
    assert result.exit_code in (0, 1), result.output
    edits = json.loads((tmp_path / "r.json").read_text())["edits"]
    assert edits["n_cases"] == 800
    assert edits["pooled"]["errors"] == {e.value: 100 for e in EditError}
    assert edits["pooled"]["matrix"]["update"] == {"keep": 100, "update": 100 + _right(U)}
    assert edits["fields"]["t"]["staleness_rate"] == 0.5
    assert "edit operations" in result.stdout
    assert "missed_delete 100" in result.stdout
    assert "**Edit operations**" in (tmp_path / "r.md").read_text()
    assert "Edit operations (expected by row" in (tmp_path / "r.html").read_text()


def _right(op: EditOp) -> int:
    """Right fields of operation ``op`` among the generated cases' other fields."""
    rng = random.Random(27)
    n = 0
    for error in INJECTED:
        for i in range(100):
            case = _case(rng, error, i)
            for path, value in case["want"].items():
                if path == "t":
                    continue
                before = case["pre"].get(path, _ABSENT)
                n += op is U and before is not _ABSENT and before != value
    return n


# -- the operators that make each update error --------------------------------------------------


def _mutated(operator: str, pre: InterpretiveState, want: InterpretiveState) -> list[EditError]:
    """The errors the one mutant of ``operator`` makes on a mutator that is right."""
    import asyncio

    from stateval import StructuredInput
    from stateval.mutation import System, generate_mutants

    def right(state: InterpretiveState, _: StructuredInput) -> InterpretiveState:
        return want.copy()

    system = System.from_cases(right, [(pre, want)])
    [mutant] = generate_mutants(system, [operator])
    assert mutant.system.mutator is not None
    got = asyncio.run(mutant.system.mutator.mutate(pre, StructuredInput("x", "m-1")))
    return [e.error for e in field_edits(pre, want, got) if e.error is not None]


def test_missed_and_spurious_delete_operators_land_in_their_cells() -> None:
    pre = InterpretiveState.from_flat({"gone": "x", "kept": "y"})
    want = InterpretiveState.from_flat({"kept": "y"})
    assert _mutated("missed_delete", pre, want) == [EditError.MISSED_DELETE]
    assert _mutated("spurious_delete", pre, want) == [EditError.SPURIOUS_DELETE]


def test_stale_after_k_turns_loses_late_updates_only() -> None:
    from stateval.mutation import STALE_AFTER_TURNS
    from stateval.mutation._update_operators import _StaleAfter

    values = ["a", "a", "a", "a", "b", "b", "c"]  # the mutator's (right) outputs, turn by turn
    turns = [(InterpretiveState(), None, InterpretiveState.from_flat({"f": v})) for v in values]
    out = _StaleAfter("f", STALE_AFTER_TURNS).over_episode(turns)  # type: ignore[arg-type]
    assert [s.best("f").value for s in out] == ["a", "a", "a", "a", "a", "a", "a"]  # type: ignore[union-attr]
    early = ["a", "b", "b", "b", "c"]
    turns = [(InterpretiveState(), None, InterpretiveState.from_flat({"f": v})) for v in early]
    out = _StaleAfter("f", STALE_AFTER_TURNS).over_episode(turns)  # type: ignore[arg-type]
    assert [s.best("f").value for s in out] == ["a", "b", "b", "b", "b"]  # type: ignore[union-attr]


STALE_MUTATOR = """
from pathlib import Path
from stateval.state import ValueConfidence

def track(state, input):
    out = state.copy()
    index = int(input.prompt)
    if not (Path(__file__).with_name("stale").exists() and index < 30):
        out.set_value("u", ValueConfidence(f"new{index}", 1.0))
    return out
"""


def test_diff_says_which_operation_got_worse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run that keeps the old value in 30 of 60 updates: the diff's update propagation
    and staleness regress, keeps do not move."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    name = "stale_mut_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{name}.py").write_text(STALE_MUTATOR)
    cases = [
        {
            "id": f"c{i}",
            "pre_state": {"u": f"old{i}", "k": "kept"},
            "input": {"prompt": str(i)},
            "expected_post_state": {"u": f"new{i}", "k": "kept"},
        }
        for i in range(60)
    ]
    suite = {
        "name": "updates",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    runner = CliRunner()
    assert runner.invoke(app, ["run", "suite.yaml", "--no-phoenix"]).exit_code in (0, 1)
    (tmp_path / "stale").write_text("")
    assert runner.invoke(app, ["run", "suite.yaml", "--no-phoenix"]).exit_code in (0, 1)
    diffed = runner.invoke(app, ["diff", "latest~1", "latest", "--json"])
    assert diffed.exit_code == 0, diffed.output
    metrics = {m["name"]: m for m in json.loads(diffed.stdout)["metrics"]}
    update, stale, keep = (
        metrics["update_propagation_rate"],
        metrics["staleness_rate"],
        metrics["keep_success"],
    )
    assert (update["base"], update["cand"], update["verdict"]) == (1.0, 0.5, "regressed")
    assert (stale["base"], stale["cand"], stale["verdict"]) == (0.0, 0.5, "regressed")
    assert (keep["base"], keep["cand"]) == (1.0, 1.0)
    text = runner.invoke(app, ["diff", "latest~1", "latest"])
    assert "staleness_rate" in text.stdout


FORGETFUL = """
from stateval.state import ValueConfidence

def track(state, input):
    out = state.copy()
    if input.prompt != "skip":
        out.set_value(input.prompt, ValueConfidence("v", 1.0))
    return out
"""


def test_free_running_edits_start_from_the_mutators_own_empty_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turn 0 misses ``a`` and leaves an empty state; turn 1 starts from it: ``a`` is a missed
    add there too (from the empty state it was given), not a spurious delete of the gold
    pre-state's ``a``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STATEVAL_HOME", str(tmp_path / "home"))
    name = "forgetful_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{name}.py").write_text(FORGETFUL)
    cases = [
        {
            "id": "d:0",
            "input": {"prompt": "skip"},
            "expected_post_state": {"a": "v"},
            "metadata": {"d": "d", "t": 0},
        },
        {
            "id": "d:1",
            "pre_state": {"a": "v"},
            "input": {"prompt": "b"},
            "expected_post_state": {"a": "v", "b": "v"},
            "metadata": {"d": "d", "t": 1},
        },
    ]
    suite = {
        "name": "forgetful",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
        "episodes": {"by": "metadata.d", "order": "metadata.t", "mode": "free_running"},
        "policies": {"*": {"confidence": "ignore"}},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    result = CliRunner().invoke(app, ["run", "suite.yaml", "--no-phoenix", "--report-json", "r"])
    assert result.exit_code in (0, 1), result.output
    edits = json.loads((tmp_path / "r").read_text())["edits"]["pooled"]
    assert edits["errors"] == {"missed_add": 2}
    assert edits["matrix"] == {"add": {"add": 1, "none": 2}}
