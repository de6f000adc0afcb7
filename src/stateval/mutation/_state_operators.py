"""The table of built-in state operators: a new one is a function in an operator module and one
line here (the CLI's ``--operators`` choices, the plugin registry and trace recall read it)."""

from __future__ import annotations

from stateval.mutation._mutant import RatedOperator
from stateval.mutation._operators import (
    change_case,
    change_date_format,
    clobber_field,
    drop_field,
    hallucinate_field,
    perturb_confidence,
    perturb_list_item,
    perturb_value,
    rename_path,
    reorder_list,
    stale,
    stale_in_episode,
    strip_provenance,
    swap_values,
)
from stateval.mutation._update_operators import (
    missed_delete,
    spurious_delete,
    stale_after_k_turns,
)

__all__ = ["STATE_OPERATORS"]

STATE_OPERATORS: dict[str, RatedOperator] = {
    "drop_field": RatedOperator(drop_field, "high"),
    "stale": RatedOperator(stale, "high"),
    "hallucinate_field": RatedOperator(hallucinate_field, "medium"),
    "perturb_value": RatedOperator(perturb_value, "medium"),
    "change_case": RatedOperator(change_case, "low"),
    "perturb_confidence": RatedOperator(perturb_confidence, "low"),
    "swap_values": RatedOperator(swap_values, "high"),
    "rename_path": RatedOperator(rename_path, "high"),
    "strip_provenance": RatedOperator(strip_provenance, "low"),
    "clobber_field": RatedOperator(clobber_field, "high"),
    "stale_in_episode": RatedOperator(stale_in_episode, "high"),
    "perturb_list_item": RatedOperator(perturb_list_item, "medium"),
    "reorder_list": RatedOperator(reorder_list, "low"),
    "change_date_format": RatedOperator(change_date_format, "low"),
    "missed_delete": RatedOperator(missed_delete, "high"),
    "spurious_delete": RatedOperator(spurious_delete, "high"),
    "stale_after_k_turns": RatedOperator(stale_after_k_turns, "high"),
}
"""The built-in state operators, by name."""
