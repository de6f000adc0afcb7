"""The shared structured fixture: invoices with line items, meetings with attendees, contacts with
addresses (``tests/data/structured/fixture.json``, 200 cases made here with a fixed seed).

Each case holds an expected and an actual state (flat top-level fields, one list of records) and
the variation that made the actual one: ``exact``, ``reorder``, ``one_wrong_sub_field`` (a
reordered list with one wrong sub-field: a quantity, an e-mail, a city), ``missing_item``,
``extra_item``, ``duplicate_item``, ``scalar_wrong``, ``replaced_item`` (an item swapped for one
sharing a single sub-field: a pair below the match threshold) and ``mixed``.

``POLICIES`` are the stateval policies of each kind and ``STICKLER_MODELS`` the same comparison
written as stickler-eval 1.0 models: exact comparison of every field, each list a
``List[StructuredModel]`` with ``match_threshold`` 0.5, the invoice's ``total`` weighing 2.

Usage:
    python bench/structured_fixture.py        # rewrites tests/data/structured/fixture.json
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "structured" / "fixture.json"
STICKLER_SCORES = ROOT / "tests" / "data" / "structured" / "stickler_scores.json"

LISTS = {"invoice": "line_items", "meeting": "attendees", "contact": "addresses"}
THRESHOLD = 0.5


def _list_policy(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "list_mode": "align",
        "score": "similarity",
        "item_threshold": THRESHOLD,
        **(extra or {}),
    }


POLICIES: dict[str, dict[str, dict[str, Any]]] = {
    "invoice": {"line_items": _list_policy(), "total": {"weight": 2}},
    "meeting": {"attendees": _list_policy()},
    "contact": {"addresses": _list_policy()},
}

STICKLER_MODELS = """
from typing import List, Optional
from stickler import ComparableField, StructuredModel
from stickler.comparators import ExactComparator

def exact(weight=1.0):
    return ComparableField(comparator=ExactComparator(), threshold=1.0, weight=weight, default=None)

class LineItem(StructuredModel):
    match_threshold = 0.5
    sku: Optional[str] = exact()
    description: Optional[str] = exact()
    quantity: Optional[int] = exact()
    unit_price: Optional[float] = exact()

class Invoice(StructuredModel):
    invoice_number: Optional[str] = exact()
    date: Optional[str] = exact()
    vendor: Optional[str] = exact()
    total: Optional[float] = exact(2.0)
    line_items: List[LineItem] = ComparableField(weight=1.0)

class Attendee(StructuredModel):
    match_threshold = 0.5
    name: Optional[str] = exact()
    email: Optional[str] = exact()
    role: Optional[str] = exact()

class Meeting(StructuredModel):
    title: Optional[str] = exact()
    start: Optional[str] = exact()
    room: Optional[str] = exact()
    attendees: List[Attendee] = ComparableField(weight=1.0)

class Address(StructuredModel):
    match_threshold = 0.5
    street: Optional[str] = exact()
    city: Optional[str] = exact()
    postcode: Optional[str] = exact()

class Contact(StructuredModel):
    name: Optional[str] = exact()
    email: Optional[str] = exact()
    phone: Optional[str] = exact()
    company: Optional[str] = exact()
    addresses: List[Address] = ComparableField(weight=1.0)

MODELS = {"invoice": Invoice, "meeting": Meeting, "contact": Contact}
"""

_WORDS = [
    "bolts",
    "nuts",
    "washers",
    "screws",
    "rivets",
    "hinges",
    "brackets",
    "clamps",
    "pins",
    "springs",
    "gears",
]
_NAMES = [
    "Ann Lee",
    "Bo Chen",
    "Cy Diaz",
    "Di Fox",
    "Ed Gray",
    "Flo Hart",
    "Gus Ives",
    "Hal Jones",
    "Ida King",
]
_CITIES = ["Leeds", "York", "Bath", "Derby", "Ely", "Hull", "Wells", "Truro", "Ripon"]
_STREETS = ["High St", "Mill Lane", "Church Rd", "Park Ave", "Station Rd", "Green Way"]


def _line_item(rng: random.Random, i: int) -> dict[str, Any]:
    return {
        "sku": f"SKU-{rng.randrange(1000, 9999)}-{i}",
        "description": rng.choice(_WORDS),
        "quantity": rng.randrange(1, 50),
        "unit_price": round(rng.uniform(0.05, 20.0), 2),
    }


def _attendee(rng: random.Random, i: int) -> dict[str, Any]:
    name = rng.choice(_NAMES)
    return {
        "name": f"{name} {i}",
        "email": f"{name.split()[0].lower()}.{i}@example.com",
        "role": rng.choice(["chair", "guest", "notes", "speaker"]),
    }


def _address(rng: random.Random, i: int) -> dict[str, Any]:
    return {
        "street": f"{rng.randrange(1, 200)} {rng.choice(_STREETS)}",
        "city": rng.choice(_CITIES),
        "postcode": f"{rng.choice('ABCDEFG')}{rng.randrange(1, 30)} {i}{rng.choice('XYZ')}",
    }


def _state(kind: str, rng: random.Random) -> dict[str, Any]:
    n = rng.randrange(2, 7)
    if kind == "invoice":
        items = [_line_item(rng, i) for i in range(n)]
        total = round(sum(x["quantity"] * x["unit_price"] for x in items), 2)
        return {
            "invoice_number": f"INV-{rng.randrange(10000, 99999)}",
            "date": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
            "vendor": rng.choice(["Acme", "Globex", "Initech", "Umbrella"]),
            "total": total,
            "line_items": items,
        }
    if kind == "meeting":
        return {
            "title": rng.choice(["Budget", "Roadmap", "Retro", "Hiring"]) + " review",
            "start": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T10:00",
            "room": rng.choice(["A1", "B2", "C3"]),
            "attendees": [_attendee(rng, i) for i in range(n)],
        }
    return {
        "name": rng.choice(_NAMES),
        "email": f"c{rng.randrange(100, 999)}@example.org",
        "phone": f"+44 20 7946 {rng.randrange(1000, 9999)}",
        "company": rng.choice(["Acme", "Globex", "Initech"]),
        "addresses": [_address(rng, i) for i in range(max(1, n - 2))],
    }


_WRONG_SUB = {"invoice": "quantity", "meeting": "email", "contact": "city"}
_MAKERS = {"invoice": _line_item, "meeting": _attendee, "contact": _address}
VARIATIONS = (
    "exact",
    "reorder",
    "one_wrong_sub_field",
    "missing_item",
    "extra_item",
    "duplicate_item",
    "scalar_wrong",
    "replaced_item",
    "mixed",
)


def _wrong(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value + 1
    return f"{value}x"


def _actual(kind: str, expected: dict[str, Any], variation: str, rng: random.Random) -> Any:
    actual = json.loads(json.dumps(expected))
    key = LISTS[kind]
    items: list[dict[str, Any]] = actual[key]
    if variation in ("reorder", "one_wrong_sub_field", "missing_item", "mixed"):
        while len(items) > 1 and items == expected[key]:
            rng.shuffle(items)
    if variation in ("one_wrong_sub_field", "mixed"):
        target = rng.choice(items)
        target[_WRONG_SUB[kind]] = _wrong(target[_WRONG_SUB[kind]])
    if variation == "mixed" and len(items) > 1:
        other = rng.choice([x for x in items if x is not target])
        field = rng.choice(sorted(other))
        other[field] = _wrong(other[field])
        scalar = rng.choice([k for k in actual if k != key])
        actual[scalar] = _wrong(actual[scalar])
    if variation == "missing_item":
        items.pop(rng.randrange(len(items)))
    if variation == "extra_item":
        items.insert(rng.randrange(len(items) + 1), _MAKERS[kind](rng, 99))
    if variation == "duplicate_item":
        items.append(dict(rng.choice(items)))
    if variation == "scalar_wrong":
        scalar = rng.choice([k for k in actual if k != key])
        actual[scalar] = _wrong(actual[scalar])
    if variation == "replaced_item":
        i = rng.randrange(len(items))
        fresh = _MAKERS[kind](rng, 77)
        keep = sorted(fresh)[0]
        fresh[keep] = items[i][keep]  # one shared sub-field: a pair below the threshold
        items[i] = fresh
    return actual


def make_cases(n: int = 200, seed: int = 26) -> list[dict[str, Any]]:
    """``n`` cases, kinds and variations in turn, from a fixed seed."""
    rng = random.Random(seed)
    kinds = ("invoice", "meeting", "contact")
    cases = []
    for i in range(n):
        kind = kinds[i % 3]
        variation = VARIATIONS[(i // 3) % len(VARIATIONS)]
        expected = _state(kind, rng)
        cases.append(
            {
                "id": f"{kind}-{i:03d}",
                "kind": kind,
                "variation": variation,
                "expected": expected,
                "actual": _actual(kind, expected, variation, rng),
            }
        )
    return cases


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(make_cases(), indent=1) + "\n")
    print(f"wrote {FIXTURE}")
