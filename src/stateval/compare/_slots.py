"""Schema slots of a case: which slots it plays (`slots_in_play`) and the counts its
``slot_accuracy`` score writes in its explanation (`slot_counts` reads them back)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from stateval.compare._run_slices import lookup

__all__ = ["slot_counts", "slots_in_play"]

_SLOT_TEXT = "{right} of {total} schema slots right"
_SLOT_COUNTS = re.compile(r"^(\d+) of (\d+) schema slots right")


def slot_counts(explanation: str | None) -> tuple[int, int] | None:
    """``(right, total)`` schema slots of a ``slot_accuracy`` evaluation, read from its
    explanation (the one place that writes it is `CaseScores.slot_accuracy`), or None.

    ``stateval diff`` pools them as the run does (right slots over scored slots), so a run's
    ``slot_accuracy`` is the same number in its summary and in a diff, whether the diff reads
    the journal or the Phoenix experiment.

    >>> slot_counts("3 of 4 schema slots right; wrong: hotel.area")
    (3, 4)
    >>> slot_counts("mutator failed") is None
    True
    """
    found = None if explanation is None else _SLOT_COUNTS.match(explanation)
    return None if found is None else (int(found[1]), int(found[2]))


def slots_in_play(
    slots: Sequence[str],
    services: Mapping[str, str | None],
    metadata: Mapping[str, Any] | None,
    services_key: str,
) -> tuple[str, ...]:
    """The ``slots`` of the services a case names under ``services_key`` in its metadata: the
    ``in_play`` of `score_comparison` (``stateval run`` and the ``slot_accuracy`` evaluator
    both choose them here).

    A case that names no service (the key is missing or null) plays every slot, and so does a
    schema whose slots name no service.

    Args:
        slots: The scored slot paths.
        services: Slot path -> the service it belongs to (None or absent: no service).
        metadata: The case's metadata.
        services_key: The metadata key listing the case's services (``metadata.services``;
            a list, or one name).

    Example:
        >>> slots_in_play(
        ...     ["hotel.area", "taxi.dest"],
        ...     {"hotel.area": "hotel", "taxi.dest": "taxi"},
        ...     {"services": ["hotel"]},
        ...     "metadata.services",
        ... )
        ('hotel.area',)
    """
    found, named = lookup(metadata or {}, services_key)
    if not found or named is None or all(v is None for v in services.values()):
        return tuple(slots)
    wanted = {str(n) for n in (named if isinstance(named, list) else [named])}
    return tuple(s for s in slots if services.get(s) in wanted)
