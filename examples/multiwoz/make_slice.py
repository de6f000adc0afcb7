"""Cut the committed MultiWOZ 2.1 slice and its stateval cases from the shared sample.

Usage::

    python examples/multiwoz/make_slice.py ../shared/data/multiwoz21/multiwoz_sample.jsonl

Keeps whole dialogues: every ``--every``-th dialogue in file order, starting with the first (29
dialogues, 213 user turns with the defaults), so the slice mixes single- and multi-domain
dialogues. Writes, into ``--out-dir`` (default: ``data/`` beside this script):

- ``multiwoz21_slice.jsonl``: the chosen turns, every original field unchanged;
- ``cases.jsonl``: one stateval case per turn, ``gold_state`` as the expected post-state; its
  metadata names the ``domains`` in the turn's gold state and whether the ``dialogue`` is
  ``single-domain`` or ``multi-domain`` (by its last turn's gold state), for the suite's slices.
  With ``--labels trade`` the cases are TRADE's test set: the states are ``gold_state_trade``
  (the labels after the TRADE scripts' cleaning), each turn's pre-state the previous turn's,
  and only turns ``in_trade_eval_set`` are kept (TRADE's ``create_data.py`` drops a dialogue
  with an utterance over 50 words: on the MultiWOZ 2.1 test set PMUL1455, 4 turns, so 999
  dialogues and 7,368 turns).

The committed files are this script's output; running it again reproduces them byte for byte.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"
SLICE_NAME = "multiwoz21_slice.jsonl"
CASES_NAME = "cases.jsonl"


def read_turns(path: Path) -> list[dict[str, Any]]:
    """Every turn of a MultiWOZ JSONL file, in file order."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def select_dialogues(turns: Iterable[dict[str, Any]], every: int) -> list[dict[str, Any]]:
    """The turns of every ``every``-th dialogue (first appearance order), dialogues kept whole."""
    order: list[str] = []
    for turn in turns:
        if turn["dialogue_id"] not in order:
            order.append(turn["dialogue_id"])
    chosen = set(order[::every])
    return [turn for turn in turns if turn["dialogue_id"] in chosen]


def _domains(state: dict[str, Any]) -> list[str]:
    return sorted({path.split(".", 1)[0] for path in state})


def dialogue_kinds(turns: Iterable[dict[str, Any]]) -> dict[str, str]:
    """``single-domain`` or ``multi-domain`` per dialogue, by its last turn's gold state."""
    last: dict[str, dict[str, Any]] = {}
    for turn in turns:
        last[turn["dialogue_id"]] = turn["gold_state"]
    return {
        dialogue: "multi-domain" if len(_domains(state)) > 1 else "single-domain"
        for dialogue, state in last.items()
    }


def trade_labels(turns: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turns of TRADE's evaluation set (``in_trade_eval_set``) with ``gold_state_trade``
    as their gold state and the previous turn's as their pre-state (the first turn of a
    dialogue starts empty)."""
    out: list[dict[str, Any]] = []
    before: dict[str, dict[str, Any]] = {}
    for turn in turns:
        if not turn["in_trade_eval_set"]:
            continue
        state = turn["gold_state_trade"]
        pre = before.get(turn["dialogue_id"], {}) if turn["turn_index"] else {}
        out.append({**turn, "pre_state": pre, "gold_state": state})
        before[turn["dialogue_id"]] = state
    return out


def to_case(turn: dict[str, Any], kind: str | None = None) -> dict[str, Any]:
    """One turn as a stateval case (flat ``{"domain.slot": value}`` states)."""
    turn_id = f"{turn['dialogue_id']}:{turn['turn_index']}"
    return {
        "id": turn_id,
        "pre_state": turn["pre_state"],
        "input": {
            "prompt": turn["user_utterance"],
            "message_id": turn_id,
            "metadata": {
                "system_utterance_before": turn["system_utterance_before"],
                "dialogue_id": turn["dialogue_id"],
                "turn_index": turn["turn_index"],
            },
        },
        "expected_post_state": turn["gold_state"],
        "metadata": {
            "dialogue_id": turn["dialogue_id"],
            "turn_index": turn["turn_index"],
            "in_trade_eval_set": turn["in_trade_eval_set"],
            "domains": _domains(turn["gold_state"]),
            "dialogue": kind,
            "source": "MultiWOZ 2.1 test set, CC BY 4.0 (see data/ATTRIBUTION.md)",
        },
    }


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write one compact JSON object per line; return the number of lines."""
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="multiwoz_sample.jsonl from ../shared/data")
    parser.add_argument("--every", type=int, default=7, help="keep every N-th dialogue")
    parser.add_argument("--out-dir", type=Path, default=DATA_DIR)
    parser.add_argument(
        "--labels",
        choices=("gold", "trade"),
        default="gold",
        help="the cases' states: gold_state (default), or gold_state_trade over the turns of "
        "TRADE's test set (in_trade_eval_set)",
    )
    args = parser.parse_args(argv)
    turns = select_dialogues(read_turns(args.source), args.every)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    n_turns = write_jsonl(args.out_dir / SLICE_NAME, turns)
    labelled = trade_labels(turns) if args.labels == "trade" else turns
    kinds = dialogue_kinds(labelled)
    write_jsonl(
        args.out_dir / CASES_NAME,
        (to_case(turn, kinds[turn["dialogue_id"]]) for turn in labelled),
    )
    n_dialogues = len({turn["dialogue_id"] for turn in turns})
    n_cases = len(labelled)
    kept = "" if n_cases == n_turns else f" ({n_cases} in TRADE's test set)"
    print(f"{n_dialogues} dialogues, {n_turns} user turns{kept} -> {args.out_dir}")


if __name__ == "__main__":
    main()
