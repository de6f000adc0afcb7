"""How state operators degrade one value: near misses, another letter case, one item of a list
of records perturbed, a list reordered, a date written in another form.

Each change takes the value and a seeded ``random.Random`` and returns the changed value, or
None when it cannot change this value (the operator then leaves the output as it is).
"""

from __future__ import annotations

import calendar
import re
from datetime import date
from typing import Any

__all__ = ["near_miss", "other_case", "perturb_item", "reformat_date", "reorder"]

_INTEGER = re.compile(r"-?\d+")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def near_miss(value: Any, rng: Any) -> Any:
    """A value close to ``value``: a string with one letter or digit dropped, an integer string or
    number off by one, a bool flipped, a list without its last item; None when there is none."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + rng.choice((-1, 1))
    if isinstance(value, str):
        if _INTEGER.fullmatch(value.strip()):
            number = int(value.strip())
            step = 1 if number == 0 else rng.choice((-1, 1))
            return str(number + step)
        spots = [i for i, ch in enumerate(value) if ch.isalnum()]
        if len(spots) < 2:
            return value + value if value else None
        i = rng.choice(spots)
        return value[:i] + value[i + 1 :]
    if isinstance(value, list) and value:
        return value[:-1]
    return None


def other_case(value: Any, _rng: Any = None) -> Any:
    """``value`` in another letter case (lower <-> Title), or None."""
    if not isinstance(value, str) or value.lower() == value.upper():
        return None
    if value == value.lower():
        titled = value.title()
        return titled if titled != value else value.upper()
    return value.lower()


def _records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def perturb_item(value: Any, rng: Any) -> Any:
    """A list of records with one sub-field of one item replaced by its near miss, or None.

    >>> import random
    >>> perturb_item([{"sku": "A", "qty": 2}], random.Random(1))
    [{'sku': 'AA', 'qty': 2}]
    """
    if not _records(value):
        return None
    spots = [(i, k) for i, item in enumerate(value) for k in item if near_miss(item[k], rng)]
    if not spots:
        return None
    i, key = rng.choice(spots)
    out = [dict(item) for item in value]
    out[i][key] = near_miss(out[i][key], rng)
    return out


def reorder(value: Any, _rng: Any = None) -> Any:
    """A list of two or more distinct items, rotated by one (same items, another order), or None.

    >>> reorder([1, 2, 3])
    [2, 3, 1]
    """
    if not isinstance(value, list) or len(value) < 2 or all(v == value[0] for v in value):
        return None
    return [*value[1:], value[0]]


def reformat_date(value: Any, _rng: Any = None) -> Any:
    """An ISO date (``2026-03-01``) in its long form (``March 1, 2026``), or None.

    >>> reformat_date("2026-03-01")
    'March 1, 2026'
    """
    if not isinstance(value, str) or (m := _ISO_DATE.fullmatch(value.strip())) is None:
        return None
    try:
        day = date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None
    return f"{calendar.month_name[day.month]} {day.day}, {day.year}"
