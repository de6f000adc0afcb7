"""Text normalisers used by match policies, and strict JSON equality.

The normalisers always run in this order, whatever order a policy lists them in:
``case`` (casefold) → ``number_words`` ("twenty one" → "21") → ``punctuation`` → ``whitespace``
(strip, collapse runs to one space).

``punctuation`` removes Unicode punctuation: a run of it between two letters or digits becomes
one space (``alpha-milton`` → ``alpha milton``, ``11:30`` → ``11 30``) unless it is only
apostrophes (``john's`` → ``johns``); anywhere else it is deleted (``st. john`` → ``st john``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypeAlias

__all__ = [
    "NORMALIZERS",
    "Normalizer",
    "json_equal",
    "normalize_text",
    "parse_number",
]

Normalizer: TypeAlias = str
"""A normaliser's name: a key of `NORMALIZERS`."""

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_VALUE = {w: i for i, w in enumerate(_UNITS)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_NUMBER_WORDS = re.compile(
    r"\b(?:(?P<tens>{tens})(?:[\s-]+(?P<unit>{units}))?|(?P<word>{all}))\b".format(
        tens="|".join(_TENS),
        units="|".join(_UNITS[1:10]),
        all="|".join(_UNITS),
    ),
    re.IGNORECASE,
)
_APOSTROPHES = frozenset("'\u2019\u2018`")
_SPACES = re.compile(r"\s+")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _number_words(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        if match["word"]:
            return str(_WORD_VALUE[match["word"].lower()])
        value = _WORD_VALUE[match["tens"].lower()]
        if match["unit"]:
            value += _WORD_VALUE[match["unit"].lower()]
        return str(value)

    return _NUMBER_WORDS.sub(replace, text)


def _is_punctuation(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _strip_punctuation(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if not _is_punctuation(text[i]):
            out.append(text[i])
            i += 1
            continue
        j = i
        while j < n and _is_punctuation(text[j]):
            j += 1
        run = text[i:j]
        joins_words = i > 0 and j < n and text[i - 1].isalnum() and text[j].isalnum()
        if joins_words and not set(run) <= _APOSTROPHES:
            out.append(" ")
        i = j
    return "".join(out)


def _whitespace(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


_TABLE: Mapping[str, Callable[[str], str]] = MappingProxyType(
    {
        "case": str.casefold,
        "number_words": _number_words,
        "punctuation": _strip_punctuation,
        "whitespace": _whitespace,
    }
)

#: Every normaliser name, in the order they are applied (a new normaliser: its function and
#: one entry in ``_TABLE``; the suite schema, the policy check and the docs test read it).
NORMALIZERS: tuple[Normalizer, ...] = tuple(_TABLE)


def normalize_text(text: str, normalizers: Iterable[str]) -> str:
    """Apply the named normalisers to ``text`` in the fixed order of `NORMALIZERS`."""
    wanted = set(normalizers)
    for name, apply in _TABLE.items():
        if name in wanted:
            text = apply(text)
    return text


def parse_number(value: object, number_words: bool = False) -> float | None:
    """``value`` as a float if it is a JSON number or a numeric string, else None.

    Booleans are not numbers. A string is stripped (and number words turned into digits when
    ``number_words``) and must then be a plain decimal such as ``"3"``, ``"-2.5"`` or ``"1e3"``.
    A number past the float range is an infinity (compared exactly by the match rules).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _as_float(value)
    if isinstance(value, str):
        text = _number_words(value).strip() if number_words else value.strip()
        if _NUMBER.fullmatch(text):
            return float(text)
    return None


def _as_float(value: int | float) -> float:
    """``float(value)``; an integer past the float range becomes an infinity of its sign."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def json_equal(a: Any, b: Any) -> bool:
    """Strict JSON equality: ``True != 1``, ``1 == 1.0``, lists and objects compared deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)
