"""Word lists of the MultiWOZ tracker, from the MultiWOZ ontology and ordinary English.

Each list is written as comma-separated phrases; an alias table maps every alias (and the
canonical value itself) to the value the tracker writes, e.g. ``AREAS["center"] == "centre"``.
"""

from __future__ import annotations

__all__ = [
    "AREAS",
    "ATTRACTION_TYPES",
    "CUISINES",
    "DOMAIN_WORDS",
    "DONTCARE_TOPICS",
    "NUMBER_WORDS",
    "PRICES",
    "STATIONS",
    "WEEKDAYS",
]


def _phrases(text: str) -> tuple[str, ...]:
    """Comma-separated phrases, whitespace collapsed, empty ones dropped."""
    return tuple(" ".join(p.split()) for p in text.split(",") if p.strip())


def _aliases(table: dict[str, str]) -> dict[str, str]:
    """``{value: "alias, alias"}`` as ``{alias or value: value}``."""
    return {alias: value for value, text in table.items() for alias in (value, *_phrases(text))}


DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "hotel": _phrases(
        "hotel, hotels, guesthouse, guest house, place to stay, room, rooms, accommodation,"
        " lodging, bed and breakfast, b&b"
    ),
    "restaurant": _phrases(
        "restaurant, restaurants, food, eat, dine, dining, dinner, lunch, table, cuisine"
    ),
    "train": _phrases("train, trains, railway, rail"),
    "attraction": _phrases(
        "attraction, attractions, something to do, things to do, places to go, place to go,"
        " sightseeing, visit"
    ),
    "taxi": _phrases("taxi, cab"),
    "hospital": _phrases("hospital"),
    "police": _phrases("police"),
}

STATIONS: dict[str, str] = _aliases(
    {
        "london kings cross": "kings cross, king's cross",
        "london liverpool street": "liverpool street",
        "birmingham new street": "birmingham",
        "stansted airport": "stansted",
        "bishops stortford": "bishop's stortford",
        "kings lynn": "king's lynn",
        "cambridge": "",
        "peterborough": "",
        "ely": "",
        "norwich": "",
        "leicester": "",
        "stevenage": "",
        "broxbourne": "",
    }
)

CUISINES: tuple[str, ...] = _phrases(
    """afghan, african, asian oriental, australasian, australian, austrian, barbeque, basque,
    belgian, bistro, brazilian, british, canapes, cantonese, caribbean, catalan, chinese, corsica,
    creative, crossover, cuban, danish, eastern european, english, eritrean, european, french,
    fusion, gastropub, german, greek, halal, hungarian, indian, indonesian, international, irish,
    italian, jamaican, japanese, korean, kosher, latin american, lebanese, light bites, malaysian,
    mediterranean, mexican, middle eastern, modern american, modern eclectic, modern european,
    modern global, molecular gastronomy, moroccan, new zealand, north african, north american,
    north indian, northern european, panasian, persian, polish, polynesian, portuguese, romanian,
    russian, scandinavian, scottish, seafood, singaporean, south african, south indian, spanish,
    sri lankan, steakhouse, swedish, swiss, thai, the americas, traditional, turkish, tuscan,
    unusual, vegetarian, venetian, vietnamese, welsh, world, asian, afternoon tea"""
)

ATTRACTION_TYPES: dict[str, str] = _aliases(
    {
        "museum": "museums",
        "college": "colleges",
        "architecture": "",
        "park": "parks",
        "nightclub": "night club",
        "theatre": "theater",
        "cinema": "",
        "swimming pool": "pool",
        "boat": "punting",
        "entertainment": "",
        "concerthall": "concert hall",
        "multiple sports": "sports",
    }
)

AREAS: dict[str, str] = _aliases(
    {
        "north": "northern",
        "south": "southern",
        "east": "eastern",
        "west": "western",
        "centre": "center, central",
    }
)

PRICES: dict[str, str] = _aliases(
    {
        "cheap": "inexpensive, budget, low cost",
        "moderate": "moderately, mid-range, mid range, reasonably priced",
        "expensive": "upscale, high end, high-end, luxury, fancy",
    }
)

WEEKDAYS: tuple[str, ...] = _phrases(
    "monday, tuesday, wednesday, thursday, friday, saturday, sunday"
)

NUMBER_WORDS: dict[str, str] = {
    **{
        word: str(n)
        for n, word in enumerate(
            _phrases("zero, one, two, three, four, five, six, seven, eight, nine, ten")
        )
    },
    "single": "1",
}

# What a "don't care" answer is about, by the word that names the slot.
DONTCARE_TOPICS: dict[str, str] = _aliases(
    {
        "area": "part of town, location, side of town, anywhere",
        "pricerange": "price, cost",
        "food": "cuisine",
        "stars": "star",
        "parking": "",
        "internet": "wifi",
        "type": "kind",
    }
)
