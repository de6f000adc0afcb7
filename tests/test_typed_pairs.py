"""Typed comparators over many forms: equivalent pairs match (>= 98%), near misses (one day off,
one digit off, another currency...) all mismatch. The figures are in docs/concepts.md."""

from __future__ import annotations

import calendar
import random
from datetime import date, timedelta
from typing import Any

from stateval.compare import MatchPolicy
from stateval.compare._match import match_values

DATE = MatchPolicy(comparator="date")
DMY = MatchPolicy(comparator="date", date_order="DMY")
MDY = MatchPolicy(comparator="date", date_order="MDY")
DATETIME = MatchPolicy(comparator="datetime")
GB = MatchPolicy(comparator="phone", phone_region="GB")
US = MatchPolicy(comparator="phone", phone_region="US")
MONEY = MatchPolicy(comparator="money")
EMAIL = MatchPolicy(comparator="email")
UNIT = MatchPolicy(comparator="unit")

Pair = tuple[MatchPolicy, Any, Any]


def _date_forms(d: date) -> list[tuple[MatchPolicy, str]]:
    month, short = calendar.month_name[d.month], calendar.month_abbr[d.month]
    weekday = calendar.day_name[d.weekday()]
    suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}.get(d.day, "th")
    return [
        (DATE, f"{month} {d.day}, {d.year}"),
        (DATE, f"{d.day} {month} {d.year}"),
        (DATE, f"{d.day}{suffix} {short} {d.year}"),
        (DATE, f"{weekday}, {month} {d.day}, {d.year}"),
        (DATE, f"{d.year}/{d.month:02d}/{d.day:02d}"),
        (DATE, d.strftime("%Y%m%d")),
        (DMY, f"{d.day:02d}/{d.month:02d}/{d.year}"),
        (MDY, f"{d.month}/{d.day}/{d.year}"),
        (DMY, f"{d.day}.{d.month}.{d.year}"),
    ]


def equivalent_pairs(rng: random.Random) -> list[Pair]:
    pairs: list[Pair] = []
    for _ in range(25):
        d = date(2020, 1, 1) + timedelta(days=rng.randrange(3000))
        pairs += [(p, d.isoformat(), form) for p, form in _date_forms(d)]
        hour, minute = rng.randrange(1, 12), rng.randrange(60)
        iso = f"{d.isoformat()}T{hour + 12:02d}:{minute:02d}:00Z"
        pairs.append(
            (
                DATETIME,
                iso,
                f"{calendar.month_name[d.month]} {d.day}, {d.year} {hour}:{minute:02d} pm Z",
            )
        )
    for _ in range(15):
        tail = f"{rng.randrange(10000):04d}"
        e164 = f"+44 20 7946 {tail}"
        pairs += [
            (GB, e164, f)
            for f in (
                f"020 7946 {tail}",
                f"(020) 7946-{tail}",
                f"+4420 7946{tail}",
                f"0044 20 7946 {tail}",
            )
        ]
        us = f"{rng.randrange(200, 999)}{rng.randrange(200, 999)}{rng.randrange(10000):04d}"
        pairs += [
            (US, f"+1 {us[:3]} {us[3:6]} {us[6:]}", f)
            for f in (f"({us[:3]}) {us[3:6]}-{us[6:]}", f"{us[:3]}.{us[3:6]}.{us[6:]}")
        ]
    for _ in range(15):
        cents = rng.randrange(100, 10_000_000)
        whole, frac = divmod(cents, 100)
        amount = f"{whole:,}.{frac:02d}"
        eu = amount.replace(",", " ").replace(".", ",").replace(" ", ".")
        pairs += [
            (MONEY, f"${amount}", {"amount": cents / 100, "currency": "USD"}),
            (MONEY, f"USD {whole}.{frac:02d}", f"{amount} USD"),
            (MONEY, f"€{amount}", f"{eu} €"),
            (MONEY, f"GBP {whole}.{frac:02d}", f"£{amount}"),
        ]
    for i in range(15):
        local = f"{rng.choice(['ann', 'Bo', 'cy.lee', 'D_fox'])}{i}"
        domain = rng.choice(["example.com", "Mail.Example.org", "uni.ac.uk"])
        pairs += [
            (EMAIL, f"{local}@{domain}", f"{local}@{domain.upper()}"),
            (EMAIL, f"{local}@{domain}", f"{local.title()} <{local}@{domain.lower()}>"),
            (EMAIL, f"{local}@{domain}", f" mailto:{local}@{domain} "),
        ]
    for _ in range(10):
        n = rng.randrange(1, 500)
        pairs += [
            (UNIT, f"{n} km", f"{n * 1000} m"),
            (UNIT, f"{n} kg", f"{n * 1000} g"),
            (UNIT, f"{n} l", f"{n * 1000} ml"),
        ]
    return pairs


def near_misses(rng: random.Random) -> list[Pair]:
    pairs: list[Pair] = []
    for _ in range(25):
        d = date(2020, 1, 1) + timedelta(days=rng.randrange(3000))
        off = d + timedelta(days=rng.choice([-1, 1]))
        pairs += [(p, d.isoformat(), form) for p, form in _date_forms(off)[:5]]
        pairs.append((DATE, d.isoformat(), f"{d.year}-{d.month:02d}"))  # another precision
        pairs.append((DATE, d.isoformat(), f"{d.day:02d}/{d.month:02d}/{d.year}"))  # no order
        pairs.append((DATETIME, f"{d.isoformat()}T10:00:00Z", f"{d.isoformat()}T10:01:00Z"))
    for _ in range(20):
        tail = rng.randrange(1000, 9998)
        pairs.append((GB, f"+44 20 7946 {tail}", f"020 7946 {tail + 1}"))
        pairs.append((GB, f"+44 20 7946 {tail}", f"+1 20 7946 {tail}"))
    for _ in range(15):
        cents = rng.randrange(100, 10_000_000)
        whole, frac = divmod(cents, 100)
        pairs += [
            (MONEY, f"USD {whole}.{frac:02d}", f"EUR {whole}.{frac:02d}"),
            (MONEY, f"USD {whole}.{frac:02d}", {"amount": (cents + 1) / 100, "currency": "USD"}),
            (MONEY, f"${whole}.{frac:02d}", f"{whole}.{frac:02d}"),  # no currency
        ]
    for i in range(15):
        pairs += [
            (EMAIL, f"ann{i}@example.com", f"Ann{i}@example.com"),
            (EMAIL, f"ann{i}@example.com", f"ann{i + 1}@example.com"),
            (EMAIL, f"ann{i}@example.com", f"ann{i}@example.co"),
        ]
    for _ in range(10):
        n = rng.randrange(1, 500)
        pairs += [(UNIT, f"{n} km", f"{n * 1000 + 1} m"), (UNIT, f"{n} kg", f"{n} l")]
    return pairs


def test_equivalent_forms_match_and_near_misses_never_do() -> None:
    rng = random.Random(26)
    same, near = equivalent_pairs(rng), near_misses(rng)
    assert len(same) >= 200
    assert len(near) >= 200
    failed = [(p.comparator, e, a) for p, e, a in same if not match_values(p, e, a).matched]
    matched = [(p.comparator, e, a) for p, e, a in near if match_values(p, e, a).matched]
    print(
        f"equivalent {len(same)}: {len(same) - len(failed)} match; near misses {len(near)}: "
        f"{len(matched)} match"
    )
    assert (len(same) - len(failed)) / len(same) >= 0.98, failed[:10]
    assert matched == []
