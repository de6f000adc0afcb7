"""The table of built-in state operators: a new one is a function in an operator module and one
line here (the CLI's ``--operators`` choices, the plugin registry and trace recall read it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stateval.mutation._mutant import Mutant
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

STATE_OPERATORS: dict[str, Callable[[Any], list[Mutant]]] = {
    "drop_field": drop_field,
    "stale": stale,
    "hallucinate_field": hallucinate_field,
    "perturb_value": perturb_value,
    "change_case": change_case,
    "perturb_confidence": perturb_confidence,
    "swap_values": swap_values,
    "rename_path": rename_path,
    "strip_provenance": strip_provenance,
    "clobber_field": clobber_field,
    "stale_in_episode": stale_in_episode,
    "perturb_list_item": perturb_list_item,
    "reorder_list": reorder_list,
    "change_date_format": change_date_format,
    "missed_delete": missed_delete,
    "spurious_delete": spurious_delete,
    "stale_after_k_turns": stale_after_k_turns,
}
"""The built-in state operators, by name."""
