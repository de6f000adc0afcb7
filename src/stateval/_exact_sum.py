"""`ExactSum`: a running float sum whose value does not depend on the order of the addends.

A run adds each case's figures as the case finishes, which is not the suite's order (concurrent
mutator calls, interleaved episodes, shards on other processes). A plain float sum then differs
in its last bits between a run and the merge of its shards; `ExactSum` keeps the sum exactly, as
non-overlapping partials (Shewchuk's algorithm, the one `math.fsum` uses), and rounds once when
read, so any order of the same addends gives the same float.

Example:
    >>> a, b = ExactSum(), ExactSum()
    >>> for x in (0.1, 0.2, 0.3, 1e16, -1e16):
    ...     a += x
    >>> for x in (1e16, 0.3, -1e16, 0.2, 0.1):
    ...     b += x
    >>> float(a) == float(b) == 0.6
    True
    >>> c = ExactSum()
    >>> c += 0.1
    >>> c.merge(b)  # a shard's sum, added exactly
    >>> float(c) == 0.7
    True
"""

from __future__ import annotations

import math

__all__ = ["ExactSum"]


class ExactSum:
    """A float sum kept exactly (see the module docstring); ``float()`` rounds it once."""

    __slots__ = ("_partials",)

    def __init__(self) -> None:
        self._partials: list[float] = []

    def __iadd__(self, x: float) -> ExactSum:
        partials = self._partials
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low:
                partials[i] = low
                i += 1
            x = high
        partials[i:] = [x]
        return self

    def merge(self, other: ExactSum) -> None:
        """Add ``other``'s sum (a shard's, say) to this one, exactly."""
        for partial in other._partials:
            self += partial

    def __float__(self) -> float:
        return math.fsum(self._partials)
