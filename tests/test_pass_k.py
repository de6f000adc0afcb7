"""pass^k (τ-bench's reliability estimator) by hand, against its definition by simulation, and in
``stateval run --repeat N``."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from stateval.calibration import pass_hat_k, pass_k_curve
from stateval.cli import app
from stateval.regressions import Observation, ScoredRun, field_stability, reliability


def test_pass_hat_k_by_hand() -> None:
    # C(c, k) / C(n, k)
    assert pass_hat_k(5, 5, 5) == 1.0
    assert pass_hat_k(4, 5, 1) == 4 / 5
    assert pass_hat_k(4, 5, 2) == 6 / 10
    assert pass_hat_k(4, 5, 4) == 1 / 5
    assert pass_hat_k(4, 5, 5) == 0.0
    assert pass_hat_k(2, 3, 3) == 0.0
    assert pass_hat_k(0, 3, 1) == 0.0
    assert pass_k_curve([(3, 3), (1, 3), (2, 2)], 3) == {
        1: pytest.approx((1 + 1 / 3 + 1) / 3),
        2: pytest.approx((1 + 0 + 1) / 3),
        3: pytest.approx((1 + 0) / 2),  # the item with two tries does not count at k = 3
    }
    with pytest.raises(ValueError, match="k must be in"):
        pass_hat_k(1, 3, 4)
    with pytest.raises(ValueError, match="successes must be in"):
        pass_hat_k(4, 3, 1)


def test_pass_hat_k_matches_its_definition_by_simulation() -> None:
    """Items with success rates q_i, each tried n = 8 times: the mean estimate is within 0.01 of
    the chance that k fresh tries all succeed (mean of q_i^k), estimated by drawing them."""
    rng = random.Random(20261201)
    rates = [rng.random() ** 0.5 for _ in range(4000)]
    n = 8
    counts = [(sum(rng.random() < q for _ in range(n)), n) for q in rates]
    estimated = pass_k_curve(counts, n)
    for k in (1, 2, 4, 8):
        fresh = sum(all(rng.random() < q for _ in range(k)) for q in rates) / len(rates)
        exact = sum(q**k for q in rates) / len(rates)
        assert estimated[k] == pytest.approx(exact, abs=0.01), k
        assert fresh == pytest.approx(exact, abs=0.02), k


def test_field_case_and_episode_pass_k() -> None:
    ok = Observation({"field:a": 1.0, "overall_match": 1.0})
    bad = Observation({"field:a": 0.0, "overall_match": 0.0})
    failed = Observation({"field:a": 0.0, "overall_match": 0.0}, error=True)
    run = ScoredRun("r", {"t0": (ok, ok, ok), "t1": (ok, bad, ok), "t2": (ok, ok, failed)})
    [a] = field_stability(run)
    assert a.pass_k == {1: pytest.approx(7 / 9), 2: pytest.approx(5 / 9), 3: 1 / 3}
    r = reliability(run, {"d1": ["t0", "t1"], "d2": ["t2"]})
    assert r.cases == a.pass_k
    # d1 passes repetitions 1 and 3, d2 repetitions 1 and 2
    assert r.episodes == {1: pytest.approx(2 / 3), 2: pytest.approx(1 / 3), 3: 0.0}
    assert r.n_episodes == 2


MUTATOR = """
from collections import Counter
from stateval.state import ValueConfidence

CALLS = Counter()

def track(state, input):
    name, index = input.prompt.split()
    CALLS[index] += 1
    out = state.copy()
    wrong = int(index) < 4 and CALLS[index] == 2
    out.set_value("user.name", ValueConfidence("Nobody" if wrong else name, 1.0))
    return out
"""


def test_repeat_reports_pass_k_beside_flakiness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEVAL_HOME", raising=False)
    name = "passk_mut_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(MUTATOR)
    cases = [
        {
            "id": f"d{i // 2}:{i % 2}",
            "input": {"prompt": f"Ada{i} {i}"},
            "expected_post_state": {"user.name": f"Ada{i}"},
            "metadata": {"dialogue": f"d{i // 2}", "turn": i % 2},
        }
        for i in range(8)
    ]
    suite = {
        "name": "names",
        "mutator": {"type": "python", "callable": f"{name}:track", "path": "."},
        "cases": {"inline": cases},
        "episodes": {"by": "metadata.dialogue", "order": "metadata.turn"},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    # The mutator errs on a case's second call; which repetition that is depends on a case's
    # calls running in repetition order, which only one call at a time makes sure of (with
    # several in flight, two threads may take one case's calls in either order).
    result = CliRunner().invoke(
        app,
        [
            *("run", "suite.yaml", "--no-phoenix", "--repeat", "3"),
            *("--concurrency", "1", "--report-json", "r.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "pass^3" in result.output
    repetitions = json.loads((tmp_path / "r.json").read_text())["repetitions"]
    # cases 0-3 are wrong in one of 3 repetitions (their second call): pass^3 = 4/8 over cases;
    # episodes d0 and d1 (cases 0-3) fail that repetition, d2 and d3 pass all three
    [field] = repetitions["fields"]
    assert field["pass_k"]["3"] == pytest.approx(0.5)
    assert field["pass_k"]["1"] == pytest.approx((4 + 4 * 2 / 3) / 8)
    assert repetitions["pass_k"]["cases"]["3"] == pytest.approx(0.5)
    assert repetitions["pass_k"]["n_episodes"] == 4
    assert repetitions["pass_k"]["episodes"]["1"] == pytest.approx((2 + 2 * 2 / 3) / 4)
    assert repetitions["pass_k"]["episodes"]["3"] == pytest.approx(0.5)
