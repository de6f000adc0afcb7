"""Apply a `MatchPolicy` to two present values (or two confidences)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from stateval.compare._normalize import json_equal, parse_number
from stateval.compare._policy import MatchPolicy
from stateval.compare._typed import COMPARATORS, Unreadable

__all__ = ["Verdict", "match_confidence", "match_values"]

# Slack for float rounding when comparing against a tolerance (0.9 - 0.8 > 0.1 in floats).
_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether two values match under a policy, and why (``note`` is empty for plain equality)."""

    matched: bool
    similarity: float | None = None
    note: str = ""


def match_confidence(policy: MatchPolicy, expected: float, actual: float) -> Verdict:
    """Compare two confidences under ``policy``."""
    if policy.confidence == "ignore":
        return Verdict(True, note="confidence ignored")
    tol = policy.confidence_tolerance
    if tol is None:
        return Verdict(expected == actual)
    diff = abs(expected - actual)
    if diff <= tol + _EPS:
        return Verdict(True, note=f"confidence within {tol:g}" if diff else "")
    return Verdict(False, note=f"confidence off by {diff:.3g} > {tol:g}")


def match_values(policy: MatchPolicy, expected: Any, actual: Any) -> Verdict:
    """Compare two present values under ``policy``."""
    if policy.is_strict:
        return Verdict(json_equal(expected, actual))
    if policy.list_mode == "any_of":
        return _any_of(policy, expected, actual)
    if policy.list_mode == "set" and isinstance(expected, list) and isinstance(actual, list):
        return _as_sets(policy, expected, actual)
    return _match(policy, expected, actual)


def _alternatives(policy: MatchPolicy, expected: Any) -> list[Any]:
    if isinstance(expected, list):
        return expected
    sep = policy.alternatives_separator
    if sep is not None and isinstance(expected, str):
        return expected.split(sep)
    return [expected]


def _any_of(policy: MatchPolicy, expected: Any, actual: Any) -> Verdict:
    whole = _match(policy, expected, actual)
    if whole.matched:
        return whole
    alternatives = _alternatives(policy, expected)
    if len(alternatives) == 1 and alternatives[0] is expected:
        return whole
    best: float | None = None
    for alternative in alternatives:
        verdict = _match(policy, alternative, actual)
        if verdict.matched:
            note = verdict.note
            if len(alternatives) > 1:
                note = f"matches alternative {alternative!r}" + (f", {note}" if note else "")
            return Verdict(True, verdict.similarity, note)
        if verdict.similarity is not None:
            best = verdict.similarity if best is None else max(best, verdict.similarity)
    note = f"none of {len(alternatives)} alternatives" if len(alternatives) > 1 else ""
    if best is not None and policy.fuzzy is not None:
        note = (note + ", " if note else "") + f"best fuzzy {best:.2f} < {policy.fuzzy:g}"
    return Verdict(False, best, note)


def _as_sets(policy: MatchPolicy, expected: list[Any], actual: list[Any]) -> Verdict:
    def covered(items: list[Any], by: list[Any], flip: bool) -> bool:
        return all(
            any((_match(policy, o, i) if flip else _match(policy, i, o)).matched for o in by)
            for i in items
        )

    ok = covered(expected, actual, False) and covered(actual, expected, True)
    return Verdict(ok, note="as sets")


def _typed(policy: MatchPolicy, kind: str, expected: Any, actual: Any) -> Verdict:
    comparator = COMPARATORS[kind]
    read = []
    for side, value in (("expected", expected), ("actual", actual)):
        try:
            read.append(comparator.read(value, policy))
        except Unreadable as exc:
            return Verdict(False, note=f"cannot read {side} {value!r} as {comparator.what}: {exc}")
    if comparator.close(read[0], read[1], policy):
        return Verdict(True, note="" if expected == actual else f"same {kind}")
    return Verdict(False, note=f"another {kind}")


def _match(policy: MatchPolicy, expected: Any, actual: Any) -> Verdict:
    kind = policy.comparator
    if kind is not None and not isinstance(expected, list):
        return _typed(policy, kind, expected, actual)
    if policy.numeric_tolerance is not None:
        words = "number_words" in policy.normalize
        e, a = parse_number(expected, words), parse_number(actual, words)
        if e is not None and a is not None and not (math.isfinite(e) and math.isfinite(a)):
            # Past the float range (a 400-digit integer, "1e999"): only exact equality matches.
            return Verdict(json_equal(expected, actual), note="beyond the float range")
        if e is not None and a is not None:
            tol = policy.numeric_tolerance
            diff = abs(e - a)
            if diff <= tol + _EPS:
                return Verdict(True, note=f"within {tol:g}" if diff or expected != actual else "")
            return Verdict(False, note=f"off by {diff:.6g} > {tol:g}")
    if isinstance(expected, str) and isinstance(actual, str):
        e_text, a_text = policy.canonical(expected), policy.canonical(actual)
        if e_text == a_text:
            note = "" if expected == actual else f"equal as {e_text!r}"
            return Verdict(True, 1.0 if policy.fuzzy is not None else None, note)
        if policy.fuzzy is not None:
            ratio = fuzz.ratio(e_text, a_text) / 100.0
            if ratio >= policy.fuzzy:
                return Verdict(True, ratio, f"fuzzy {ratio:.2f} >= {policy.fuzzy:g}")
            return Verdict(False, ratio, f"fuzzy {ratio:.2f} < {policy.fuzzy:g}")
        return Verdict(False)
    if isinstance(expected, list) and isinstance(actual, list):
        ok = len(expected) == len(actual) and all(
            _match(policy, e, a).matched for e, a in zip(expected, actual, strict=True)
        )
        return Verdict(ok)
    if isinstance(expected, dict) and isinstance(actual, dict):
        ok = expected.keys() == actual.keys() and all(
            _match(policy, expected[k], actual[k]).matched for k in expected
        )
        return Verdict(ok)
    return Verdict(json_equal(expected, actual))
