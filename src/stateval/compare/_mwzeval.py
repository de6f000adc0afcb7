"""mwzeval's slot value normaliser, as Tomiinek/MultiWOZ_Evaluation applies it before scoring.

``mwzeval.normalization.normalize_data`` rewrites every state it scores (predictions and its
MultiWOZ 2.2 references alike) before ``get_dst`` compares them: slot names are lower-cased,
spaces dropped, ``arriveby`` / ``leaveat`` become ``arrive`` / ``leave``, and the value of a
slot goes through the rule of its name (``normalize_state_slot_value``):

- ``name``, ``destination``, ``departure``: stripped, lower-cased, ``&`` read as ``and``, and
  a table of known misspellings of venue names (``nando's`` → ``nandos``);
- ``type``: four spellings (``guest house`` → ``guesthouse``; the value as it is, no case);
- ``food``: stripped, lower-cased, a table of misspellings (``sea food`` → ``seafood``);
- ``arrive``, ``leave``, ``time``: read into ``HH:MM`` (``5:15 pm`` → ``17:15``, ``by 1715``
  → ``17:15``, ``morning`` → ``08:00``);
- ``parking``, ``internet``: ``free`` → ``yes``;
- every other slot: unchanged (no case folding).

The rules are its code's, written as tables. Where its time rule raises (``five:30 pm``: the hour
is not a number), mwzeval stops with ``ValueError``; here the text is kept as read so far.

Example:
    >>> normalize_slot_value("train.leaveat", "5:15 pm")
    '17:15'
    >>> normalize_slot_value("hotel.type", "guest house")
    'guesthouse'
    >>> normalize_slot_value("restaurant.name", " Nando's ")
    'nandos'
    >>> normalize_slot_value("hotel.area", "North")
    'North'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

__all__ = ["normalize_slot_value", "slot_name"]

_SLOT_RENAMES = {"arriveby": "arrive", "leaveat": "leave"}

# name_to_canonical's three tables (restaurant, hotel, attraction), which all apply to every
# slot it normalises (mwzeval calls it without a domain); first match wins.
_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "hotel du vin bistro": "hotel du vin and bistro",
        "the river bar and grill": "the river bar steakhouse and grill",
        "nando's": "nandos",
        "city center b and b": "city center north b and b",
        "acorn house": "acorn guest house",
        "caffee uno": "caffe uno",
        "cafe uno": "caffe uno",
        "rosa's": "rosas bed and breakfast",
        "restaurant called two two": "restaurant two two",
        "restaurant 2 two": "restaurant two two",
        "restaurant two 2": "restaurant two two",
        "restaurant 2 2": "restaurant two two",
        "restaurant 1 7": "restaurant one seven",
        "restaurant 17": "restaurant one seven",
        "lime house": "limehouse",
        "cityrooms": "cityroomz",
        "whale of time": "whale of a time",
        "huntingdon hotel": "huntingdon marriott hotel",
        "holiday inn exlpress, cambridge": "express by holiday inn cambridge",
        "university hotel": "university arms hotel",
        "arbury guesthouse and lodge": "arbury lodge guesthouse",
        "bridge house": "bridge guest house",
        "arbury guesthouse": "arbury lodge guesthouse",
        "nandos in the city centre": "nandos city centre",
        "broughton gallery": "broughton house gallery",
        "scudamores punt co": "scudamores punting co",
        "cambridge botanic gardens": "cambridge university botanic gardens",
        "the junction": "junction theatre",
        "trinity street college": "trinity college",
        "christ college": "christ's college",
        "christs": "christ's college",
        "history of science museum": "whipple museum of the history of science",
        "parkside pools": "parkside swimming pool",
        "the botanical gardens at cambridge university": "cambridge university botanic gardens",
        "cafe jello museum": "cafe jello gallery",
    }
)
_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "swimming pool": "swimmingpool",
        "mutliple sports": "multiple sports",
        "night club": "nightclub",
        "guest house": "guesthouse",
    }
)
_FOODS: Mapping[str, str] = MappingProxyType(
    {
        "eriterean": "mediterranean",
        "brazilian": "portuguese",
        "sea food": "seafood",
        "portugese": "portuguese",
        "modern american": "north american",
        "americas": "north american",
        "intalian": "italian",
        "italain": "italian",
        "asian or oriental": "asian",
        "english": "british",
        "australasian": "australian",
        "gastropod": "gastropub",
        "brutish": "british",
        "bristish": "british",
        "europeon": "european",
    }
)
_TIME_PHRASES: Mapping[str, str] = MappingProxyType(
    {
        "afternoon": "13:00",
        "lunch": "12:00",
        "noon": "12:00",
        "mid-day": "12:00",
        "around lunch time": "12:00",
        "morning": "08:00",
        "seven o'clock tomorrow evening": "07:00",
        "three forty five p.m": "15:45",
        "one thirty p.m.": "13:30",
        "six fourty five": "06:45",
        "eight thirty": "08:30",
    }
)
_TIME_PREFIXES = (("one o'clock p.m", "13:00"), ("ten o'clock a.m", "10:00"))
# Leading words dropped, in mwzeval's order: ``by`` (with the character after it), ``after``
# and its misspelling ``afer`` (then stripped).
_TIME_LEADS = (("by", 3, False), ("after", 5, True), ("afer", 4, True))


def _name(value: str) -> str:
    name = value.strip().lower().replace(" & ", " and ").replace("&", " and ").replace(" '", "'")
    return _NAMES.get(name, name)


def _type(value: str) -> str:
    return _TYPES.get(value, value)


def _food(value: str) -> str:
    food = value.strip().lower()
    return _FOODS.get(food, food)


def _yes(value: str) -> str:
    return "yes" if value == "free" else value


def _afternoon(time: str) -> str | None:
    """mwzeval's ``pm`` branch: ``H:MM`` or ``H`` plus 12 hours; None when neither returns."""
    tokens = time.split(":")
    try:
        if len(tokens) == 2:
            return f"{int(tokens[0]) + 12}:{tokens[1]}"
        if len(tokens) == 1 and tokens[0].isdigit():
            return f"{int(tokens[0]) + 12}:00"
    except ValueError:  # mwzeval raises here; the text is kept as read so far
        return time
    return None


def _time(value: str) -> str:
    time = value.strip().lower()
    if time in _TIME_PHRASES:
        return _TIME_PHRASES[time]
    for prefix, canonical in _TIME_PREFIXES:
        if time.startswith(prefix):
            return canonical
    for lead, cut, strip in _TIME_LEADS:
        if time.startswith(lead):
            time = time[cut:].strip() if strip else time[cut:]
    if time.endswith("am"):
        time = time[:-2].strip()
    if time.endswith("a.m."):
        time = time[:-4].strip()
    if time.endswith(("pm", "p.m.")):
        if time.endswith("pm"):
            time = time[:-2].strip()
        if time.endswith("p.m."):
            time = time[:-4].strip()
        afternoon = _afternoon(time)
        if afternoon is not None:
            return afternoon
    if not time:
        return "00:00"
    if time[-1] in ".,?":
        time = time[:-1]
    if time.isdigit() and len(time) == 4:
        return f"{time[:2]}:{time[2:]}"
    if time.isdigit():
        return time.zfill(2) + ":00"
    if ":" in time:
        time = "".join(time.split(" "))
    if len(time) == 4 and time[1] == ":":
        tokens = time.split(":")
        return f"{tokens[0].zfill(2)}:{tokens[1]}"
    return time


_BY_SLOT: Mapping[str, Callable[[str], str]] = MappingProxyType(
    {
        "name": _name,
        "destination": _name,
        "departure": _name,
        "type": _type,
        "food": _food,
        "arrive": _time,
        "leave": _time,
        "time": _time,
        "parking": _yes,
        "internet": _yes,
    }
)


def slot_name(path: str) -> str:
    """The slot name mwzeval gives the last segment of ``path`` (``train.leaveat`` → ``leave``,
    ``hotel.Book People`` → ``bookpeople``)."""
    slot = path.rsplit(".", 1)[-1].lower().replace(" ", "")
    return _SLOT_RENAMES.get(slot, slot)


def normalize_slot_value(path: str, value: str) -> str:
    """``value`` as mwzeval normalises the value of the slot at ``path``."""
    rule = _BY_SLOT.get(slot_name(path))
    return value if rule is None else rule(value)
