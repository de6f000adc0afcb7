"""Score the rule-based MultiWOZ tracker turn by turn with stateval's comparison.

Usage::

    python examples/multiwoz/score.py [--cases PATH] [--limit N]

Each case is one user turn: the tracker (`tracker.track`, run as a `PythonMutator`) starts from
the case's *gold* pre-state and its post-state is compared with the gold state after the turn.
This is how stateval evaluates any state mutator, but it is **not** the standard cumulative DST
protocol, in which a tracker carries its own predictions from turn to turn and its errors
compound; turn-level scores with the gold history are higher (easier) than published joint goal
accuracies and are not comparable with them.

Values are compared with case and whitespace normalised, ``center`` read as ``centre``, and
confidence ignored. Printed: per-slot accuracy (worst first), joint goal accuracy and slot
accuracy over TRADE's 30 slots, value precision / recall / F1, and the delta view (slots the turn
had to change vs. slots it had to keep).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from slots import TRADE_SLOTS
from tracker import track

from stateval.compare import (
    MatchPolicy,
    SlotMetrics,
    StateComparison,
    compare_delta,
    compare_states,
    field_aggregates,
    slot_metrics,
    worst_fields,
)
from stateval.mutators import PythonMutator, StructuredInput
from stateval.state import InterpretiveState

DEFAULT_CASES = Path(__file__).resolve().parent / "data" / "cases.jsonl"

POLICY = MatchPolicy(
    confidence="ignore", normalize=("case", "whitespace"), synonyms={"center": "centre"}
)
"""The match policy of every slot: normalised case and whitespace, one synonym, no confidence."""


@dataclass(frozen=True, slots=True)
class Case:
    """One user turn: the state before it, the turn, and the gold state after it."""

    id: str
    pre_state: InterpretiveState
    input: StructuredInput
    expected: InterpretiveState


@dataclass(frozen=True, slots=True)
class Scored:
    """One case with the tracker's post-state and its comparison with the gold state."""

    case: Case
    actual: InterpretiveState
    comparison: StateComparison


def load_cases(path: Path, limit: int | None = None) -> list[Case]:
    """Read stateval cases (one JSON object per line), at most ``limit`` of them."""
    cases: list[Case] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if limit is not None and len(cases) >= limit:
                break
            if not line.strip():
                continue
            row = json.loads(line)
            cases.append(
                Case(
                    id=row["id"],
                    pre_state=InterpretiveState.from_flat(row["pre_state"]),
                    input=StructuredInput(**row["input"]),
                    expected=InterpretiveState.from_flat(row["expected_post_state"]),
                )
            )
    return cases


async def run_tracker(cases: list[Case]) -> list[Scored]:
    """Run the tracker on every case, one turn after another, and compare each result."""
    mutator = PythonMutator(track)
    scored: list[Scored] = []
    for case in cases:
        actual = await mutator.mutate(case.pre_state, case.input)
        scored.append(Scored(case, actual, compare_states(case.expected, actual, POLICY)))
    return scored


def slot_table(scored: list[Scored], metrics: SlotMetrics) -> Table:
    """Per-slot counts and accuracies, worst first.

    ``acc`` is right / gold (turns whose gold state holds the slot); ``turn acc`` counts every
    turn, a slot absent from both states being right (the per-slot share of slot accuracy).
    """
    table = Table(title="Per-slot accuracy (worst first)", box=box.SIMPLE_HEAD)
    table.add_column("slot", no_wrap=True)
    for header in ("gold", "right", "wrong", "miss", "extra", "acc", "turn acc"):
        table.add_column(header, justify="right")
    aggregates = field_aggregates(s.comparison for s in scored)
    for row in worst_fields(aggregates):
        per_turn = metrics.per_slot.get(row.path)
        table.add_row(
            row.path,
            str(row.n_expected),
            str(row.matching),
            str(row.mismatched),
            str(row.missing),
            str(row.extra),
            f"{row.accuracy:.3f}" if row.n_expected else "-",
            "-" if per_turn is None else f"{per_turn:.3f}",
        )
    return table


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="cases.jsonl to score")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N turns")
    args = parser.parse_args(argv)

    cases = load_cases(args.cases, args.limit)
    scored = asyncio.run(run_tracker(cases))
    metrics = slot_metrics(((s.case.expected, s.actual) for s in scored), TRADE_SLOTS, POLICY)
    deltas = [compare_delta(s.case.pre_state, s.case.expected, s.actual, POLICY) for s in scored]
    changed_ok = sum(len(d.changed.matching) for d in deltas)
    changed_n = sum(d.n_changed for d in deltas)
    kept_ok = sum(len(d.preserved.matching) for d in deltas)
    kept_n = sum(d.n_preserved for d in deltas)

    console = Console()
    dialogues = len({s.case.id.rsplit(":", 1)[0] for s in scored})
    console.print(f"{len(scored)} turns from {dialogues} dialogues ({args.cases})")
    console.print(slot_table(scored, metrics))
    console.print(
        "[bold]turn-level with gold pre-state[/bold] (not the cumulative DST protocol; easier)"
    )
    console.print(f"joint goal accuracy: {metrics.joint_goal_accuracy:.3f}")
    console.print(f"slot accuracy: {metrics.slot_accuracy:.3f} ({metrics.n_slots} TRADE slots)")
    console.print(
        f"value precision: {metrics.precision:.3f}  recall: {metrics.recall:.3f}  "
        f"F1: {metrics.f1:.3f}  (tp {metrics.tp}, fp {metrics.fp}, fn {metrics.fn})"
    )
    console.print(
        f"slots the turn had to change: {changed_ok}/{changed_n} right; "
        f"slots it had to keep: {kept_ok}/{kept_n} kept"
    )


if __name__ == "__main__":
    main()
