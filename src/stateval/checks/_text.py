"""How checks see values as text, and how they split text into word tokens.

A check may be given any JSON value (a state field can hold a number, a list or an object). Strings
are used as they are; every other value becomes its canonical JSON text
(``json.dumps(value, sort_keys=True, ensure_ascii=False)``), so ``{"b": 1, "a": 2}`` always reads
``{"a": 2, "b": 1}`` and ``None`` reads ``null``. Values JSON cannot hold fall back to ``str()``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

__all__ = ["STOPWORDS", "as_text", "fold", "tokenize"]

_WORD = re.compile(r"\w+")

#: A small English stopword list (articles, pronouns, auxiliaries, prepositions, conjunctions).
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves
    s t don doesn didn isn wasn aren weren won wouldn shouldn couldn ll re ve d m
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


def as_text(value: Any) -> str:
    """``value`` as text: strings unchanged, anything else as canonical JSON.

    Example:
        >>> as_text({"b": 1, "a": "é"})
        '{"a": "é", "b": 1}'
    """
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return str(value)


def fold(text: str) -> str:
    """Caseless form of ``text`` (NFKC, then Unicode casefold: ``"Straße"`` → ``"strasse"``)."""
    return unicodedata.normalize("NFKC", text).casefold()


def tokenize(text: str, *, casefold: bool = True) -> list[str]:
    """Word tokens of ``text`` in order: runs of Unicode letters, digits and ``_``.

    Example:
        >>> tokenize("Don't PANIC, Zoë!")
        ['don', 't', 'panic', 'zoë']
    """
    source = fold(text) if casefold else unicodedata.normalize("NFKC", text)
    return _WORD.findall(source)
