"""Whether an input supports a value: the forms a written value may take in a message.

`Grounding` reads a message once and then answers `supports(value)` for many values. A value is
supported when it appears in the message in one of these forms (`FORMS`):

* ``literal``: the value's text, compared with case folded and runs of spaces and punctuation
  made one space (``"Ada  Lovelace"`` is supported by ``"ada lovelace,"``);
* ``number``: a number equal to one written in the message (``1,500`` and ``1500.0``);
* ``date``: a date equal to one written in the message as ``2027-01-31``, ``31/01/2027``,
  ``01/31/2027``, ``31.01.2027``, ``January 31, 2027``, ``31 Jan 2027`` (day-month and
  month-day both read when ambiguous): each is found in the text here and read by compare's
  date comparator (`stateval.compare.COMPARATORS`), the one date reader of stateval;
* ``phone``: a phone number whose digits (at least 7) end the digits of a phone-like run in the
  message, or are ended by them (``212-555-0142`` and ``+1 (212) 555 0142``).

A list is supported when each item is; booleans and null are not checkable (`supports` returns
None).

Example:
    >>> g = Grounding("Call me on +1 (212) 555 0142 before 31 Jan 2027, budget 1,500 EUR")
    >>> g.supports("2125550142"), g.supports("2027-01-31"), g.supports(1500), g.supports("EUR")
    ('phone', 'date', 'number', 'literal')
    >>> g.supports("555-0199") is False
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from stateval.compare import COMPARATORS

__all__ = ["FORMS", "Grounding", "mentions_word"]

FORMS = ("literal", "number", "date", "phone")
"""The forms in which a value counts as written in a message, in the order they are tried."""

_SEPARATORS = re.compile(r"[\W_]+", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[-+]?\d+(?:\.\d+)?")
_PHONE = re.compile(r"\+?\(?\d[\d\s().-]{5,}\d")
# Where a date may be written in running text; what it reads as is compare's date reader's answer
# (`stateval.compare.COMPARATORS["date"]`), which refuses a word that is not a month.
_WORD = r"([A-Za-z]+)\.?"
_ISO = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b")
_NUMERIC = re.compile(r"\b\d{1,2}([/.])\d{1,2}\1\d{4}\b")
_MONTH_FIRST = re.compile(_WORD + r"\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b")
_DAY_FIRST = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)?\s+" + _WORD + r",?\s+\d{4}\b")
_MIN_PHONE_DIGITS = 7
_SIGNATURE = re.compile(
    r"^(--\s*|_{2,}\s*|(best|kind|warm)?\s*regards,?\s*|cheers,?\s*|sent from my .*)$",
    re.IGNORECASE | re.MULTILINE,
)
_STEM = 5
_DATE = COMPARATORS["date"]


def _words(text: str) -> str:
    return " " + _SEPARATORS.sub(" ", text.casefold()).strip() + " "


@dataclass(frozen=True, slots=True)
class _DateOrder:
    """The settings compare's date reader takes: a numeric day/month form read one way."""

    date_order: str | None = None
    date_tolerance: float | None = None
    phone_region: str | None = None
    numeric_tolerance: float | None = None


_AS_WRITTEN = _DateOrder()
_BOTH_ORDERS = (_DateOrder("DMY"), _DateOrder("MDY"))  # day-month and month-day both read


def _read_date(text: str, orders: tuple[_DateOrder, ...]) -> set[date]:
    """The full dates compare's date reader makes of ``text`` under each of ``orders``."""
    out: set[date] = set()
    for order in orders:
        try:
            year, month, day = _DATE.read(text, order)
        except ValueError:  # compare's Unreadable: not a date in that order
            continue
        if month is not None and day is not None:
            out.add(date(year, month, day))
    return out


def _dates(text: str) -> set[date]:
    found: set[date] = set()
    for pattern in (_ISO, _MONTH_FIRST, _DAY_FIRST):
        for match in pattern.finditer(text):
            found |= _read_date(match.group(0), (_AS_WRITTEN,))
    for match in _NUMERIC.finditer(text):
        found |= _read_date(match.group(0), _BOTH_ORDERS)
    return found


def _numbers(text: str) -> set[float]:
    out: set[float] = set()
    for raw in _NUMBER.findall(text):
        try:
            out.add(float(raw.replace(",", "")))
        except ValueError:
            continue
    return out


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[-+]?[\d,]*\d(\.\d+)?\s*", value):
        try:
            return float(value.replace(",", ""))
        except ValueError:
            return None
    return None


def mentions_word(text: str, word: str) -> bool:
    """Whether ``text`` holds a word starting like ``word`` (its first five letters, or all of a
    shorter one): ``renewal`` is mentioned by ``renew`` and ``renewed``, ``phone`` by
    ``phones`` but not by ``number``."""
    return Grounding(text).mentions(word)


class Grounding:
    """A message read once, asked whether it supports values (see the module docstring)."""

    __slots__ = ("_body", "_dates", "_numbers", "_phones", "_prefixes", "_text", "_words")

    def __init__(self, message: str) -> None:
        self._text = message
        self._words = _words(message)
        self._numbers: set[float] | None = None
        self._dates: set[date] | None = None
        self._phones: list[str] | None = None
        self._prefixes: set[str] | None = None
        self._body: Grounding | None = None

    def body(self) -> Grounding:
        """The message without its signature block: everything from the first line that is
        ``--``, ``__``, ``Regards,`` (``Best regards,``...), ``Cheers,`` or ``Sent from my ...``
        on is left out (itself when there is none)."""
        if self._body is None:
            found = _SIGNATURE.search(self._text)
            self._body = self if found is None else Grounding(self._text[: found.start()])
        return self._body

    def mentions(self, word: str) -> bool:
        """Whether the message holds a word starting like ``word`` (see `mentions_word`)."""
        if self._prefixes is None:
            self._prefixes = {
                token[:length]
                for token in self._words.split()
                for length in range(1, min(len(token), _STEM) + 1)
            }
        return word.casefold()[:_STEM] in self._prefixes

    def supports(self, value: Any) -> str | bool | None:
        """The form in which the message holds ``value`` (one of `FORMS`), False when it holds
        it in none, None when the value cannot be checked (a boolean, null, empty text or an
        object)."""
        if value is None or isinstance(value, bool | dict):
            return None
        if isinstance(value, list):
            forms = [self.supports(item) for item in value]
            if any(form is False for form in forms):
                return False
            found = [form for form in forms if isinstance(form, str)]
            return found[0] if found else None
        text = str(value)
        words = _words(text)
        if not words.strip():
            return None
        if words in self._words:
            return "literal"
        number = _as_number(value)
        if number is not None:
            if self._numbers is None:
                self._numbers = _numbers(self._text)
            if number in self._numbers:
                return "number"
        wanted = _dates(text) if isinstance(value, str) else set()
        if wanted:
            if self._dates is None:
                self._dates = _dates(self._text)
            if wanted & self._dates:
                return "date"
        digits = _digits(text)
        if len(digits) >= _MIN_PHONE_DIGITS and len(digits) * 2 >= len(_SEPARATORS.sub("", text)):
            if self._phones is None:
                self._phones = [_digits(m) for m in _PHONE.findall(self._text)]
            if any(p.endswith(digits) or digits.endswith(p) for p in self._phones if len(p) >= 7):
                return "phone"
        return False
