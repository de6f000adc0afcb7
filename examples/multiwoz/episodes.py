"""The rule-based tracker over whole dialogues: cumulative (free-running) joint goal accuracy
beside the teacher-forced figure, and where dialogues first go wrong.

Usage::

    python examples/multiwoz/episodes.py                   # the 213-turn slice (suite.yaml)
    python examples/multiwoz/episodes.py full_test.yaml    # the 7,372-turn test set
    python examples/multiwoz/episodes.py full_test_trade.yaml  # TRADE's 7,368, as TRADE scores

Runs the suite twice without Phoenix (journals in a temporary folder): teacher-forced (every
turn from the gold pre-state) and free-running (every turn from the tracker's own state after
the turn before: the cumulative protocol of published MultiWOZ joint goal accuracy). Prints both
modes' figures (and a ``metrics.convention``'s, named after it: ``trade_joint_goal_accuracy``),
the per-turn curve and the first-divergence distribution. The same figures come from
``stateval run SUITE --mode both``; docs/episodes.md quotes them.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path

from stateval import RunSummary, load_suite, run_suite, start_journal
from stateval.suite import EpisodeMode

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Figures:
    """One mode's figures."""

    mode: str
    turns: int
    episodes: int
    joint_goal_accuracy: float
    slot_accuracy: float
    episode_success: float
    mean_episode_accuracy: float
    first_divergence: dict[int, int]
    curve: list[tuple[int, int, float]]  # (turn, episodes reaching it, JGA)
    convention: dict[str, float | None]  # the suite's metrics.convention figures, by name


def figures(summary: RunSummary) -> Figures:
    """A run's figures (the run must have episodes and a slot schema)."""
    episodes = summary.episodes
    assert episodes is not None
    assert summary.joint_goal_accuracy is not None
    assert summary.slot_accuracy is not None
    return Figures(
        mode=episodes.mode,
        turns=summary.n_cases,
        episodes=episodes.n_episodes,
        joint_goal_accuracy=summary.joint_goal_accuracy,
        slot_accuracy=summary.slot_accuracy,
        episode_success=episodes.episode_success or 0.0,
        mean_episode_accuracy=episodes.mean_episode_accuracy or 0.0,
        first_divergence=dict(episodes.first_divergence),
        curve=[(p.turn, p.n, p.joint_goal_accuracy) for p in episodes.turns],
        convention=summary.convention_figures(),
    )


def measure(suite_path: Path, concurrency: int = 8) -> dict[str, Figures]:
    """Both modes' figures of the suite, keyed by mode."""
    suite = load_suite(suite_path)
    out: dict[str, Figures] = {}
    modes: tuple[EpisodeMode, ...] = ("teacher_forced", "free_running")
    with tempfile.TemporaryDirectory() as home:
        for mode in modes:
            journal = start_journal(home, suite, mode=mode)
            outcome = asyncio.run(run_suite(suite, journal, concurrency=concurrency))
            out[mode] = figures(outcome.summary)
    return out


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _median(distribution: dict[int, int]) -> int | None:
    total = sum(distribution.values())
    seen = 0
    for turn, n in sorted(distribution.items()):
        seen += n
        if 2 * seen >= total:
            return turn
    return None


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", type=Path, default=HERE / "suite.yaml")
    args = parser.parse_args(argv)
    suite = args.suite if args.suite.is_absolute() or args.suite.exists() else HERE / args.suite
    both = measure(suite)
    forced, free = both["teacher_forced"], both["free_running"]
    print(f"{suite.name}: {forced.turns} turns, {forced.episodes} dialogues")
    print(f"{'':34}{'teacher-forced':>16}{'free-running':>16}")
    for label, name in (
        ("joint goal accuracy", "joint_goal_accuracy"),
        ("slot accuracy", "slot_accuracy"),
        ("dialogues with every turn right", "episode_success"),
        ("mean fraction of turns right", "mean_episode_accuracy"),
    ):
        print(f"{label:34}{getattr(forced, name):>16.1%}{getattr(free, name):>16.1%}")
    for name, value in forced.convention.items():
        print(f"{name:34}{_percent(value):>16}{_percent(free.convention[name]):>16}")
    print("joint goal accuracy by turn (dialogues reaching it):")
    jga = {turn: value for turn, _, value in free.curve}
    for turn, n, value in forced.curve:
        print(f"  turn {turn:>2} ({n:>4}): {value:>6.1%} {jga[turn]:>6.1%}")
    distribution = free.first_divergence
    diverged = sum(distribution.values())
    print(
        f"first divergence ({diverged} of {free.episodes} dialogues, median turn "
        f"{_median(distribution)}): "
        + ", ".join(f"turn {t}: {n}" for t, n in sorted(distribution.items()))
    )


if __name__ == "__main__":
    main()
