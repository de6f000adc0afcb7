"""Whether a suite's cases carry the service frames that frame-scoped figures score.

Under ``scope: frame`` (``convention: sgd``) a case's units are the services it names under
``slots.services_key``, as SGD's scorer scores the frames of a turn. A case whose metadata lacks
that key is scored on frames guessed from its expected state, and a suite none of whose cases
names a service has no unit at all: figures named after the convention that are not its
scorer's, or none. `FrameAudit` gathers that case by case in the pass that reads the cases and
gives one problem line naming the case file and the key.

Example:
    >>> audit = FrameAudit("metadata.services", "convention 'sgd'", "turns.jsonl")
    >>> audit.add("t1", {"services": ["Hotels_2"]})
    >>> audit.add("t2", {"service": "Hotels_2"})
    >>> audit.problems()  # doctest: +NORMALIZE_WHITESPACE
    ["turns.jsonl: case 't2': metadata.services: convention 'sgd' scores the service frames
    each case names under metadata.services, but 1 of 2 cases name none (the key is missing;
    [] is a case with no frame)"]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stateval.compare import lookup
from stateval.suite._problems import format_problem

__all__ = ["FrameAudit"]


class FrameAudit:
    """Counts the cases that name no services under ``services_key``.

    Args:
        services_key: The case metadata key listing a case's services (its frames).
        what: What scores frames, for the message (``convention 'sgd'``).
        where: How problems name the case file.
    """

    def __init__(self, services_key: str, what: str, where: str) -> None:
        self._key = services_key
        self._what = what
        self._where = where
        self._n = 0
        self._framed = 0
        self._unnamed: list[str] = []

    def add(self, case_id: str, metadata: Mapping[str, Any]) -> None:
        """Take one case's metadata into account."""
        self._n += 1
        found, named = lookup(metadata, self._key)
        if not found or named is None:
            self._unnamed.append(case_id)
        elif named != []:
            self._framed += 1

    def gathered(self) -> tuple[int, int, list[str]]:
        """What was counted (for `take` in another process's audit)."""
        return self._n, self._framed, self._unnamed

    def take(self, gathered: tuple[int, int, list[str]]) -> None:
        """Add what another audit of the next cases counted (`gathered`)."""
        n, framed, unnamed = gathered
        self._n += n
        self._framed += framed
        self._unnamed.extend(unnamed)

    def problems(self) -> list[str]:
        """One line when a case names no services, or when no case names one."""
        if not self._n:
            return []
        scores = f"{self._what} scores the service frames each case names under {self._key}"
        if self._unnamed:
            n = len(self._unnamed)
            message = (
                f"{scores}, but {n} of {self._n} cases name none (the key is missing; [] is a "
                "case with no frame)"
            )
            return [format_problem(self._where, None, self._unnamed[0], self._key, message)]
        if not self._framed:
            message = f"{scores}, but every case names an empty list: there is nothing to score"
            return [format_problem(self._where, None, None, self._key, message)]
        return []
