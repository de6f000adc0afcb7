"""Deciding a comparison's statuses: each compared path's status from the two states' best
values, and the `FieldComparison` of each field whose policy is not strict (`compare_states`
defers this until something reads the comparison)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import repeat
from typing import Any

from stateval.compare._field_comparison import FieldComparison, FieldStatus, compare_field
from stateval.compare._field_policies import IGNORED as _IGNORED
from stateval.compare._field_policies import STRICT as _STRICT
from stateval.compare._field_policies import STRICT_VALUE as _STRICT_VALUE
from stateval.compare._field_policies import FieldPolicies
from stateval.compare._normalize import json_equal
from stateval.state import InterpretiveState, ValueConfidence

__all__ = ["decide_statuses"]

_MATCHING = FieldStatus.MATCHING
_MISMATCHED = FieldStatus.MISMATCHED
_MISSING = FieldStatus.MISSING
_EXTRA = FieldStatus.EXTRA


def decide_statuses(
    expected: InterpretiveState,
    actual: InterpretiveState,
    resolved: FieldPolicies,
    wanted: set[str] | None,
) -> tuple[
    list[str], list[FieldStatus], Callable[[int], FieldComparison], dict[int, FieldComparison]
]:
    """Each compared path's status, a maker of its `FieldComparison`, and the ones made while
    deciding (fields under non-strict policies)."""
    e_values, e_conf, e_best = _best_values(expected)
    a_values, a_conf, a_best = _best_values(actual)
    plan = resolved.plan
    planned = resolved._plans  # the per-path resolutions made so far
    out_paths: list[str] = []
    statuses: list[FieldStatus] = []
    decided: dict[int, FieldComparison] = {}
    order = list(e_values)
    if not a_values.keys() <= e_values.keys():  # extra paths, in actual order
        order += [p for p in a_values if p not in e_values]

    def make(i: int) -> FieldComparison:
        path = out_paths[i]
        return compare_field(
            path, expected.best(path), actual.best(path), plan(path)[0], policies=resolved
        )

    mode = resolved.uniform_mode
    if (
        (mode is _STRICT or mode is _STRICT_VALUE)
        and wanted is None
        and e_best is None
        and a_best is None
    ):  # two flat states, one strict policy: the loop below without the per-path plan
        same_conf = mode is _STRICT_VALUE or e_conf == a_conf
        held = map(a_values.get, e_values, repeat(_ABSENT))  # each expected path's actual value
        statuses = [
            _MISSING
            if av is _ABSENT
            else _MATCHING
            if same_conf
            and (ev == av if ev.__class__ is av.__class__ is str else json_equal(ev, av))
            else _MISMATCHED
            for ev, av in zip(e_values.values(), held, strict=True)
        ]
        out_paths = order
        statuses += [_EXTRA] * (len(order) - len(e_values))
        return out_paths, statuses, make, decided
    for path in order:
        if wanted is not None and path not in wanted:
            continue
        policy, mode = planned.get(path) or plan(path)
        if mode is _IGNORED:
            continue
        ev = e_values.get(path, _ABSENT)
        av = a_values.get(path, _ABSENT)
        if av is _ABSENT:
            status = _MISSING
        elif ev is _ABSENT:
            status = _EXTRA
        elif mode is _STRICT or mode is _STRICT_VALUE:
            plain = ev.__class__ is str and av.__class__ is str
            same = ev == av if plain else json_equal(ev, av)
            if same and mode is _STRICT:
                ec = e_conf if e_best is None else e_best[path].confidence
                ac = a_conf if a_best is None else a_best[path].confidence
                same = ec == ac
            status = _MATCHING if same else _MISMATCHED
        else:
            done = compare_field(
                path, expected.best(path), actual.best(path), policy, policies=resolved
            )
            decided[len(out_paths)] = done
            status = done.status
        out_paths.append(path)
        statuses.append(status)
    return out_paths, statuses, make, decided


_ABSENT: Any = object()


def _best_values(
    state: InterpretiveState,
) -> tuple[Mapping[str, Any], float, Mapping[str, ValueConfidence] | None]:
    """``(path -> best value, the confidence of all of them, None)`` for a state in flat form,
    else ``(path -> best value, 0.0, path -> best candidate)``."""
    flat = state.flat_values
    if flat is not None:
        return flat.values, flat.confidence, None
    best = state.best_candidates()
    return {p: vc.value for p, vc in best.items()}, 0.0, best
