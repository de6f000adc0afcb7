"""Shards: a deterministic 1/N of a suite's cases, so N processes can split one run.

A case belongs to shard ``I`` of ``N`` when the first 8 bytes of the SHA-256 of its id, as a
big-endian integer, are ``I - 1`` modulo ``N``. The hash depends on the id alone (not on the
order of the cases, the process, or ``PYTHONHASHSEED``), so every shard of a suite agrees on the
split, and a case keeps its shard when others are added or removed.

Example:
    >>> shard = Shard.parse("2/3")
    >>> ids = [f"case-{i}" for i in range(9)]
    >>> parts = [Shard(i, 3).select(ids) for i in (1, 2, 3)]
    >>> sorted(sum(parts, [])) == sorted(ids)
    True
    >>> shard.holds("case-0") == ("case-0" in parts[1])
    True
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from stateval.errors import StatevalError

__all__ = ["Shard", "shard_group"]

_FORM = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``.

    Raises:
        StatevalError: ``index`` is not between 1 and ``count``.
    """

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise StatevalError(
                f"shard {self.index}/{self.count}: the shard number must be between 1 and "
                f"{self.count}"
            )

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Read ``I/N`` (``--shard 2/4``).

        Raises:
            StatevalError: ``text`` is not of the form ``I/N`` with ``1 <= I <= N``.
        """
        match = _FORM.fullmatch(text)
        if match is None:
            raise StatevalError(f"--shard {text!r}: expected I/N, e.g. 1/4")
        return cls(int(match.group(1)), int(match.group(2)))

    def holds(self, case_id: str) -> bool:
        """Whether ``case_id`` is in this shard."""
        digest = hashlib.sha256(case_id.encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def select(self, case_ids: Iterable[str]) -> list[str]:
        """The ids in this shard, in their given order."""
        return [c for c in case_ids if self.holds(c)]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_group(*parts: object) -> str:
    """A short stable key naming the run several shards share (from what they have in common)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode())
    return digest.hexdigest()[:12]
