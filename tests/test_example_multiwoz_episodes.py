"""The MultiWOZ example over whole dialogues (examples/multiwoz/episodes.py): the rule-based
tracker's cumulative joint goal accuracy beside the teacher-forced one, the per-turn curve and
the first-divergence distribution, as docs/episodes.md quotes them."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "multiwoz"
SHARED = ROOT.parent / "shared" / "data" / "multiwoz21" / "multiwoz21_test_full.jsonl"


@pytest.fixture(scope="module")
def episodes() -> Iterator[ModuleType]:
    sys.path.insert(0, str(EXAMPLE))
    try:
        yield importlib.import_module("episodes")
    finally:
        sys.path.remove(str(EXAMPLE))
        for name in ("episodes", "tracker", "lexicon", "slots"):
            sys.modules.pop(name, None)


def test_the_slice_free_running_against_teacher_forced(episodes: ModuleType) -> None:
    both = episodes.measure(EXAMPLE / "suite.yaml")
    forced, free = both["teacher_forced"], both["free_running"]
    assert (forced.turns, forced.episodes) == (213, 29)
    assert round(forced.joint_goal_accuracy, 3) == 0.667  # the README's turn-level figure
    assert round(free.joint_goal_accuracy, 3) == 0.310  # 66 of 213 turns, cumulative
    assert free.first_divergence == {0: 4, 1: 9, 2: 9, 3: 3, 4: 2, 5: 1, 6: 1}
    # until an episode first goes wrong both modes see the same states: they diverge alike
    assert forced.first_divergence == free.first_divergence
    assert forced.curve[0] == free.curve[0]
    assert all(f[2] <= t[2] for f, t in zip(free.curve[1:], forced.curve[1:], strict=True))


def test_the_script_prints_both_modes(
    episodes: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    episodes.main([str(EXAMPLE / "suite.yaml")])
    out = capsys.readouterr().out
    assert "joint goal accuracy                          66.7%           31.0%" in out
    assert "first divergence (29 of 29 dialogues, median turn 2)" in out


@pytest.mark.skipif(not SHARED.exists(), reason=f"the shared MultiWOZ data is absent ({SHARED})")
@pytest.mark.parametrize(
    ("suite", "labels", "shape", "forced_jga", "free_jga", "diverged"),
    [
        ("full_test.yaml", "gold", (7372, 1000), 0.662, 0.276, 937),
        ("full_test_trade.yaml", "trade", (7368, 999), 0.648, 0.257, 940),
    ],
)
def test_the_whole_test_set_free_running(
    episodes: ModuleType,
    tmp_path: Path,
    suite: str,
    labels: str,
    shape: tuple[int, int],
    forced_jga: float,
    free_jga: float,
    diverged: int,
) -> None:
    """docs/episodes.md's table: both suites over the test set. ``full_test_trade.yaml`` is
    TRADE's convention: its test set (PMUL1455 dropped), its labels, exact values and the
    ``trade_*`` figures, which its own figures equal."""
    out = tmp_path / "full"
    subprocess.run(
        [
            sys.executable,
            str(EXAMPLE / "make_slice.py"),
            str(SHARED),
            "--every",
            "1",
            "--labels",
            labels,
            "--out-dir",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    data = yaml.safe_load((EXAMPLE / suite).read_text())
    data["cases"]["file"] = str(out / "cases.jsonl")
    data["slots"]["path"] = data["mutator"]["path"] = str(EXAMPLE)
    path = tmp_path / suite
    path.write_text(yaml.safe_dump(data))
    both = episodes.measure(path)
    forced, free = both["teacher_forced"], both["free_running"]
    assert (free.turns, free.episodes) == shape
    assert round(forced.joint_goal_accuracy, 3) == forced_jga
    assert round(free.joint_goal_accuracy, 3) == free_jga
    assert sum(free.first_divergence.values()) == diverged
    if labels == "trade":
        for mode in (forced, free):
            assert mode.convention["trade_joint_goal_accuracy"] == mode.joint_goal_accuracy
            trade_slots = mode.convention["trade_slot_accuracy"]
            assert trade_slots == pytest.approx(mode.slot_accuracy, abs=1e-12)
        assert round(free.convention["trade_value_f1"] or 0.0, 4) == 0.7685
    else:
        assert forced.convention == free.convention == {}
