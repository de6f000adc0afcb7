"""Typed comparators: dates, datetimes, phone numbers, money, e-mail addresses and units.

A policy's ``comparator`` names one entry of `COMPARATORS`. Each entry *reads* a value into a
canonical form (or refuses it with a reason) and says when two canonical forms are *close*; a
field matches when both sides read and are close. A side that cannot be read makes the field
mismatched, and the explanation says why (``cannot read '03/04/2026' as a date: ...``): a
comparator never guesses. A new comparator is one function pair and one line in the table.

========= =======================================================================================
date      ISO (``2026-03-01``, ``20260301``, ``2026/03/01``), partial ISO (``2026-03``,
          ``2026``), long forms (``March 1, 2026``, ``1 March 2026``, ``1st Mar 2026``,
          ``Sunday, March 1, 2026``, ``March 2026``), numeric ``03/04/2026`` / ``03.04.2026`` /
          ``03-04-2026`` only under an explicit ``date_order`` (``DMY`` or ``MDY``).
          Refuses: two-digit years, a day-month form without a year, numeric day/month forms
          without ``date_order``, impossible dates (``2026-02-30``). Partial dates match only a
          date of the same precision (``2026-03`` never matches ``2026-03-01``);
          ``date_tolerance`` (days) applies to full dates.
datetime  What ``date`` reads, with an optional time (``T``/space, ``HH:MM[:SS[.ffffff]]``, an
          ``am``/``pm`` suffix, ``Z`` or ``±HH:MM``); a date alone is midnight. Refuses an aware
          and a naive value compared to each other. ``date_tolerance`` is in days (``1/24``: an
          hour).
phone     Anything ``phonenumbers`` parses to a possible number, read as E.164; numbers without a
          ``+`` country code need ``phone_region`` (``GB``, ``US``...). Refuses letters, too few
          digits, numbers impossible for their region.
money     ``{"amount": 12.5, "currency": "EUR"}``; ``EUR 12.50``, ``12.50 EUR``, ``€12.50``,
          ``$1,234.50``, ``1.234,50 €`` (the last of ``.``/``,`` is the decimal mark when both
          appear; a lone ``,`` followed by one or two digits is one too). ``$`` reads as USD,
          ``£`` GBP, ``€`` EUR, ``¥`` JPY, ``₹`` INR. Refuses an amount with no currency and a
          currency other than three letters. Amounts are exact decimals (``numeric_tolerance``
          widens that); another currency never matches.
email     ``Name <local@domain>``, ``mailto:local@domain``, surrounding spaces; the domain is
          compared without case, the local part with it (RFC 5321). Refuses anything without
          exactly one ``@`` and a dotted domain.
unit      A number and a unit of length (mm, cm, m, km, in, ft, yd, mi), mass (mg, g, kg, lb,
          oz) or volume (ml, l): ``5 km`` matches ``5000 m`` (relative 1e-9, or
          ``numeric_tolerance`` in metres, kilograms or litres). Refuses unknown units, a bare
          number, and units of different kinds.
========= =======================================================================================
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any, Protocol

__all__ = ["COMPARATORS", "Comparator", "Settings", "Unreadable"]


class Unreadable(ValueError):
    """A value a comparator cannot read (its message says why)."""


class Settings(Protocol):
    """The policy options the comparators read."""

    @property
    def date_order(self) -> str | None: ...
    @property
    def date_tolerance(self) -> float | None: ...
    @property
    def phone_region(self) -> str | None: ...
    @property
    def numeric_tolerance(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Comparator:
    """One typed comparator: ``read`` gives a canonical form (or raises `Unreadable`),
    ``close`` says whether two canonical forms match; ``what`` names the type in messages."""

    what: str
    read: Callable[[Any, Settings], Any]
    close: Callable[[Any, Any, Settings], bool]


def _equal(a: Any, b: Any, _settings: Settings) -> bool:
    return bool(a == b)


# -- dates ---------------------------------------------------------------------------------------

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS |= {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
_MONTHS["sept"] = 9
_DAYS = "|".join(d.lower() for d in (*calendar.day_name, *calendar.day_abbr))
_WEEKDAY = re.compile(rf"^(?:{_DAYS})\b[\s,]*")
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b")
_ISO = re.compile(r"(\d{4})(?:[-/.](\d{1,2})(?:[-/.](\d{1,2}))?)?")
_BASIC = re.compile(r"(\d{4})(\d{2})(\d{2})")
_NUMERIC = re.compile(r"(\d{1,2})([-/.])(\d{1,2})\2(\d+)")
_MONTH = r"([a-z]+)\.?"
_DAY_MONTH_YEAR = re.compile(rf"(\d{{1,2}}) {_MONTH} (\d+)")
_MONTH_DAY_YEAR = re.compile(rf"{_MONTH} (\d{{1,2}}) (\d+)")
_MONTH_YEAR = re.compile(rf"{_MONTH} (\d+)")
_TIME = re.compile(
    r"[ t](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?\s*(am|pm)?\s*(z|[+-]\d{2}:?\d{2})?$"
)

PartialDate = tuple[int, int | None, int | None]


def _year(text: str) -> int:
    if len(text) != 4:
        raise Unreadable("the year must have four digits")
    return int(text)


def _month(name: str) -> int:
    month = _MONTHS.get(name)
    if month is None:
        raise Unreadable(f"{name!r} is not a month")
    return month


def _valid(year: int, month: int | None, day: int | None) -> PartialDate:
    try:
        date(year, month or 1, day or 1)
    except ValueError as exc:
        raise Unreadable(str(exc)) from None
    return (year, month, day)


def _read_date_text(text: str, order: str | None) -> PartialDate:
    text = _WEEKDAY.sub("", text.strip().casefold())
    text = " ".join(_ORDINAL.sub(r"\1", text).replace(",", " ").split())
    if m := _ISO.fullmatch(text):
        y, mo, d = m.groups()
        return _valid(int(y), None if mo is None else int(mo), None if d is None else int(d))
    if m := _BASIC.fullmatch(text):
        return _valid(int(m[1]), int(m[2]), int(m[3]))
    if m := _NUMERIC.fullmatch(text):
        a, _, b, y = m.groups()
        if order not in ("DMY", "MDY"):
            how = "date_order is not set" if order is None else f"date_order is {order}"
            raise Unreadable(f"a day/month form is ambiguous and {how}")
        day, month = (a, b) if order == "DMY" else (b, a)
        return _valid(_year(y), int(month), int(day))
    if m := _DAY_MONTH_YEAR.fullmatch(text):
        return _valid(_year(m[3]), _month(m[2]), int(m[1]))
    if m := _MONTH_DAY_YEAR.fullmatch(text):
        return _valid(_year(m[3]), _month(m[1]), int(m[2]))
    if m := _MONTH_YEAR.fullmatch(text):
        return _valid(_year(m[2]), _month(m[1]), None)
    raise Unreadable("not a date form stateval reads (see docs/concepts.md)")


def _read_date(value: Any, settings: Settings) -> PartialDate:
    if not isinstance(value, str):
        raise Unreadable("a date must be a string")
    return _read_date_text(value, settings.date_order)


def _close_dates(a: PartialDate, b: PartialDate, settings: Settings) -> bool:
    if (a[1] is None, a[2] is None) != (b[1] is None, b[2] is None):
        return False  # another precision
    tol = settings.date_tolerance
    if tol is None or a[2] is None or b[2] is None:
        return a == b
    days = abs((date(*a) - date(*b)).days)  # type: ignore[arg-type]
    return days <= tol + 1e-9


def _read_datetime(value: Any, settings: Settings) -> datetime:
    if not isinstance(value, str):
        raise Unreadable("a datetime must be a string")
    text = value.strip()
    try:
        return datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "zZ" else text)
    except ValueError:
        pass
    folded = text.casefold()
    m = _TIME.search(folded)
    clock = (0, 0, 0, 0)
    zone = None
    if m:
        hour, minute = int(m[1]), int(m[2])
        if m[5]:
            if not 1 <= hour <= 12:
                raise Unreadable(f"{hour} is not an hour on a 12-hour clock")
            hour = hour % 12 + (12 if m[5] == "pm" else 0)
        clock = (hour, minute, int(m[3] or 0), int((m[4] or "0").ljust(6, "0")))
        zone = m[6]
        folded = folded[: m.start()]
    y, mo, d = _read_date_text(folded, settings.date_order)
    if mo is None or d is None:
        raise Unreadable("a datetime needs a full date")
    try:
        out = datetime(y, mo, d, *clock)
        if zone is not None:
            offset = "+00:00" if zone == "z" else zone
            out = datetime.fromisoformat(out.isoformat() + offset)
    except ValueError as exc:
        raise Unreadable(str(exc)) from None
    return out


def _close_datetimes(a: datetime, b: datetime, settings: Settings) -> bool:
    if (a.tzinfo is None) != (b.tzinfo is None):
        return False
    tol = timedelta(days=settings.date_tolerance or 0.0)
    return abs(a - b) <= tol + timedelta(microseconds=1)


# -- phone numbers -------------------------------------------------------------------------------


def _read_phone(value: Any, settings: Settings) -> str:
    import phonenumbers  # imported on first use: a large table

    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or re.search(r"[a-zA-Z]", value.replace("ext", "")):
        raise Unreadable("a phone number is a string of digits and separators")
    try:
        number = phonenumbers.parse(value, settings.phone_region)
    except phonenumbers.NumberParseException as exc:
        if settings.phone_region is None and not value.strip().startswith("+"):
            raise Unreadable("no +country code and no phone_region") from None
        raise Unreadable(str(exc).split(") ", 1)[-1]) from None
    if not phonenumbers.is_possible_number(number):
        raise Unreadable("not a possible number for its region")
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


# -- money ---------------------------------------------------------------------------------------

_SYMBOLS = {"us$": "USD", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
_MONEY = re.compile(
    r"(?P<pre>[A-Za-z]{3}|US\$|[$€£¥₹])?\s*(?P<amount>[-+]?[\d.,]*\d)\s*(?P<post>[A-Za-z]{3}|[$€£¥₹])?"
)


def _amount(text: str) -> Decimal:
    dot, comma = text.rfind("."), text.rfind(",")
    if dot >= 0 and comma >= 0:
        mark, group = (".", ",") if dot > comma else (",", ".")
    elif comma >= 0 and re.fullmatch(r"[-+]?\d+,\d{1,2}", text):
        mark, group = ",", "."
    else:
        mark, group = ".", ","
    digits = text.replace(group, "").replace(mark, ".")
    try:
        return Decimal(digits)
    except InvalidOperation:
        raise Unreadable(f"{text!r} is not an amount") from None


def _read_money(value: Any, _settings: Settings) -> tuple[Decimal, str]:
    if isinstance(value, Mapping):
        if set(value) != {"amount", "currency"}:
            raise Unreadable("money as an object needs exactly 'amount' and 'currency'")
        amount, currency = value["amount"], value["currency"]
        if isinstance(amount, bool) or not isinstance(amount, int | float | str):
            raise Unreadable("the amount must be a number")
        text = f"{amount} {currency}"
    elif isinstance(value, str):
        text = value
    else:
        raise Unreadable("money is a string or {amount, currency}")
    m = _MONEY.fullmatch(text.strip())
    if m is None:
        raise Unreadable("not an amount with a currency")
    codes = [c for c in (m["pre"], m["post"]) if c]
    if len(codes) != 1:
        raise Unreadable("no currency" if not codes else "two currencies")
    code = _SYMBOLS.get(codes[0].lower(), codes[0].upper())
    return _amount(m["amount"]), code


def _close_money(a: tuple[Decimal, str], b: tuple[Decimal, str], settings: Settings) -> bool:
    if a[1] != b[1]:
        return False
    tol = settings.numeric_tolerance
    return a[0] == b[0] if tol is None else abs(float(a[0] - b[0])) <= tol + 1e-9


# -- e-mail --------------------------------------------------------------------------------------

_ANGLE = re.compile(r".*<([^<>]+)>\s*")
_ADDRESS = re.compile(r"([^@\s]+)@([^@\s]+\.[^@\s.]+)")


def _read_email(value: Any, _settings: Settings) -> str:
    if not isinstance(value, str):
        raise Unreadable("an e-mail address must be a string")
    text = value.strip()
    if m := _ANGLE.fullmatch(text):
        text = m[1].strip()
    if text.casefold().startswith("mailto:"):
        text = text[7:]
    m = _ADDRESS.fullmatch(text)
    if m is None:
        raise Unreadable("not local@domain")
    return f"{m[1]}@{m[2].casefold()}"


# -- units ---------------------------------------------------------------------------------------

_UNITS: Mapping[str, tuple[str, float]] = MappingProxyType(
    {
        "mm": ("length", 0.001),
        "cm": ("length", 0.01),
        "m": ("length", 1.0),
        "km": ("length", 1000.0),
        "in": ("length", 0.0254),
        "ft": ("length", 0.3048),
        "yd": ("length", 0.9144),
        "mi": ("length", 1609.344),
        "mg": ("mass", 1e-6),
        "g": ("mass", 0.001),
        "kg": ("mass", 1.0),
        "lb": ("mass", 0.45359237),
        "oz": ("mass", 0.028349523125),
        "ml": ("volume", 0.001),
        "l": ("volume", 1.0),
    }
)
_QUANTITY = re.compile(r"([-+]?\d+(?:\.\d+)?)\s*([a-zA-Z]+)\.?")


def _read_unit(value: Any, _settings: Settings) -> tuple[str, float]:
    if not isinstance(value, str) or (m := _QUANTITY.fullmatch(value.strip())) is None:
        raise Unreadable("a quantity is a number and a unit, e.g. '5 km'")
    unit = _UNITS.get(m[2].lower())
    if unit is None:
        raise Unreadable(f"unknown unit {m[2]!r} (known: {', '.join(_UNITS)})")
    return unit[0], float(m[1]) * unit[1]


def _close_units(a: tuple[str, float], b: tuple[str, float], settings: Settings) -> bool:
    if a[0] != b[0]:
        return False
    tol = settings.numeric_tolerance
    if tol is not None:
        return abs(a[1] - b[1]) <= tol + 1e-9
    return abs(a[1] - b[1]) <= 1e-9 * max(abs(a[1]), abs(b[1]), 1e-300)


#: Every comparator by name (a new one: its read and close functions, and one line here).
COMPARATORS: Mapping[str, Comparator] = MappingProxyType(
    {
        "date": Comparator("a date", _read_date, _close_dates),
        "datetime": Comparator("a datetime", _read_datetime, _close_datetimes),
        "phone": Comparator("a phone number", _read_phone, _equal),
        "money": Comparator("money", _read_money, _close_money),
        "email": Comparator("an e-mail address", _read_email, _equal),
        "unit": Comparator("a quantity with a unit", _read_unit, _close_units),
    }
)
