"""A small rule-based dialogue state tracker for MultiWOZ, written as a ``python`` mutator.

`track` reads one user turn and returns a copy of the state with the slots the turn mentions
set. Every rule is a keyword list (`lexicon`) or a regular expression over the lower-cased
utterance; nothing is learned from data. Each value it writes carries the turn's message id,
the name of the rule that produced it as its ``inference``, and a confidence that says how
strong the evidence was (`STRENGTH`): a slot named outright by a lexicon word is surer than one
whose domain had to be guessed from the system's last turn, a captured free-text name or a
"don't care". The run's calibration report shows whether these strengths rank the tracker's
right values above its wrong ones.

Which domain a domain-neutral slot (area, price range, day, people, time) belongs to is the
nearest domain mentioned before it in the utterance that has such a slot, else the first one after
it, else a domain the system mentioned in its last turn, else the only such domain already in the
state. Hospital and police are detected (`detect_domains`) but, as in MultiWOZ's test set, have
no slots here except ``hospital.department``.

Example:
    >>> from stateval import InterpretiveState
    >>> from stateval.mutators import StructuredInput
    >>> turn = StructuredInput("A cheap guesthouse in the north for 2 nights, please.", "d1:0")
    >>> track(InterpretiveState(), turn).to_flat()  # doctest: +NORMALIZE_WHITESPACE
    {'hotel.type': 'guesthouse', 'hotel.book_stay': '2', 'hotel.area': 'north',
     'hotel.pricerange': 'cheap'}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lexicon import (
    AREAS,
    ATTRACTION_TYPES,
    CUISINES,
    DOMAIN_WORDS,
    DONTCARE_TOPICS,
    NUMBER_WORDS,
    PRICES,
    STATIONS,
    WEEKDAYS,
)

from stateval import InterpretiveState, ValueConfidence
from stateval.mutators import StructuredInput

__all__ = ["detect_domains", "extract_updates", "track"]

# Domains that have each domain-neutral slot.
SLOT_DOMAINS: dict[str, tuple[str, ...]] = {
    "area": ("hotel", "restaurant", "attraction"),
    "pricerange": ("hotel", "restaurant"),
    "people": ("hotel", "restaurant", "train"),
    "day": ("hotel", "restaurant", "train"),
    "time": ("restaurant", "train", "taxi"),
    "name": ("hotel", "restaurant", "attraction"),
}

# How sure each kind of evidence makes the tracker (the confidence of the value it writes).
STRENGTH: dict[str, float] = {
    "lexicon": 0.95,  # a lexicon phrase or pattern names the slot and its value
    "alias": 0.9,  # ... through an alias of the value ("center" for centre)
    "pattern": 0.8,  # a looser pattern ("a ... hotel" for the type, a time with no cue)
    "reference": 0.75,  # "the same day", "from the hotel": copied from the state
    "place": 0.65,  # a free-text place or name captured by a pattern
    "dontcare": 0.6,
}
# The factor a domain-neutral slot's strength takes from where its domain was found.
DOMAIN_EVIDENCE: dict[str, float] = {
    "before": 1.0,  # a domain mentioned before the value in the utterance
    "after": 0.85,  # ... after it
    "system": 0.7,  # the system's last turn
    "state": 0.6,  # the only such domain already in the state
}

# -- regular expressions -----------------------------------------------------------------------

_NUM = r"(\d{1,2}|" + "|".join(NUMBER_WORDS) + r")"


def _alternation(words: Mapping[str, str] | tuple[str, ...]) -> str:
    """A word-bounded regex alternation, longest phrase first."""
    ordered = sorted(words, key=len, reverse=True)
    return r"\b(" + "|".join(re.escape(w) for w in ordered) + r")\b"


_STATION = _alternation(STATIONS)
_FROM_STATION = re.compile(
    r"\b(?:from|leaving|leave|leaves|departing|departs|depart)\s+"
    r"(?:from\s+)?(?:the\s+)?" + _STATION
)
_TO_STATION = re.compile(
    r"\b(?:to|into|arriving in|arrive in|arrives in|arriving at|"
    r"arrive at|reach|get to)\s+(?:the\s+)?" + _STATION
)
_CUISINE = re.compile(_alternation(CUISINES))
_ATTRACTION_TYPE = re.compile(_alternation(ATTRACTION_TYPES))
_AREA = re.compile(_alternation(AREAS))
_PRICE = re.compile(_alternation(PRICES))
_DAY = re.compile(_alternation(WEEKDAYS))
_STARS = re.compile(r"\b" + _NUM + r"[- ]?stars?\b|\bstars? (?:rating )?of " + _NUM + r"\b")
_STAY = re.compile(r"\b" + _NUM + r"\s+(?:nights?|days?)\b")
_PEOPLE = re.compile(
    r"\b(?:for|party of|group of)\s+" + _NUM + r"\b(?!\s*(?:nights?|days?|stars?|:|am\b|pm\b))"
    r"|\b" + _NUM + r"\s+(?:people|persons?|guests?|adults?|tickets?|of us)\b"
)
_TIME = re.compile(r"\b(\d{1,2})[:.](\d{2})\b\s*(am|pm)?|\b(\d{1,2})\s*(am|pm)\b|\b(noon|midday)\b")
_ARRIVE_CUE = re.compile(r"\b(arriv\w*|by|before|get there|get to|reach|no later than)\b")
_LEAVE_CUE = re.compile(r"\b(leav\w*|depart\w*|after|pick\w* (?:me )?up|from)\b")
_CALLED = re.compile(
    r"\b(?:called|named)\s+(?:the\s+)?([a-z0-9'&\- ]+?)"
    r"(?=\s*(?:[.,?!]|$|\band\b|\bin\b|\bon\b|\bfor\b|\bat\b|\bplease\b))"
)
_PLACE = r"[a-z0-9'&\- ]+?"
_STOP = r"[.,?!]|$|\b(?:at|by|and|after|before|leaving|arriving|please)\b"
_TAXI_ROUTE = re.compile(rf"\bfrom\s+(?P<from>{_PLACE})\s+to\s+(?P<to>{_PLACE})(?=\s*(?:{_STOP}))")
_TAXI_TO = re.compile(rf"\bto\s+(?:(?:get|go)\s+to\s+)?(?P<to>{_PLACE})(?=\s*(?:\bfrom\b|{_STOP}))")
_TAXI_FROM = re.compile(
    rf"\b(?:from|pick me up at|pick up at)\s+(?P<from>{_PLACE})(?=\s*(?:\bto\b|{_STOP}))"
)
_DONTCARE = re.compile(
    r"\b(don'?t care|do not care|doesn'?t matter|does not matter|no preference|"
    r"not particular|not bothered|don'?t mind|do not mind|"
    r"any (?:area|part|price|type|kind|food|cuisine)|anywhere|either is fine|whatever|"
    r"not important)\b"
)
_SAME_DAY = re.compile(r"\bsame day\b")
_SAME_PEOPLE = re.compile(r"\bsame (?:group|number of people|people|party|amount of people)\b")

_NOT_PLACES = frozenset({"", "it", "there", "here", "get", "go"})

# Taxi endpoints that refer to a place already in the state.
_STATE_REFERENCES: dict[str, str] = {
    "hotel": "hotel.name",
    "guesthouse": "hotel.name",
    "guest house": "hotel.name",
    "restaurant": "restaurant.name",
    "attraction": "attraction.name",
    **{word: "attraction.name" for word in ATTRACTION_TYPES},
}


@dataclass(slots=True)
class _Turn:
    """The working view of one turn: the text, what the state holds, and the updates so far."""

    text: str
    system: str
    previous: Mapping[str, Any]
    mentions: list[tuple[int, str]]
    updates: dict[str, tuple[str, str]] = field(default_factory=dict)
    strength: dict[str, float] = field(default_factory=dict)

    def set(self, slot: str, value: str, rule: str, strength: float = STRENGTH["lexicon"]) -> None:
        if slot not in self.updates:
            self.updates[slot] = (value, rule)
            self.strength[slot] = round(strength, 3)

    def domain_at(self, position: int, slot_kind: str) -> str | None:
        found = self.locate(position, slot_kind)
        return None if found is None else found[0]

    def locate(self, position: int, slot_kind: str) -> tuple[str, float] | None:
        """The domain of a domain-neutral slot and the `DOMAIN_EVIDENCE` factor of how."""
        allowed = SLOT_DOMAINS[slot_kind]
        before = [d for p, d in self.mentions if p <= position and d in allowed]
        if before:
            return before[-1], DOMAIN_EVIDENCE["before"]
        after = [d for p, d in self.mentions if p > position and d in allowed]
        if after:
            return after[0], DOMAIN_EVIDENCE["after"]
        in_system = [d for _, d in _domain_mentions(self.system) if d in allowed]
        if in_system:
            return in_system[0], DOMAIN_EVIDENCE["system"]
        in_state = {path.split(".")[0] for path in self.previous} & set(allowed)
        return (in_state.pop(), DOMAIN_EVIDENCE["state"]) if len(in_state) == 1 else None


def _number(token: str) -> str:
    return NUMBER_WORDS.get(token, token)


def _lexical(phrase: str, value: str) -> float:
    """`STRENGTH` of a lexicon match: the value itself, or one of its aliases."""
    return STRENGTH["lexicon"] if phrase == value else STRENGTH["alias"]


def detect_domains(utterance: str) -> list[str]:
    """The domains an utterance mentions, in order of first mention.

    Example:
        >>> detect_domains("I need a taxi from the hotel to the police station")
        ['taxi', 'hotel', 'police']
    """
    text = " ".join(utterance.lower().split())
    return list(dict.fromkeys(domain for _, domain in _domain_mentions(text)))


def _domain_mentions(text: str) -> list[tuple[int, str]]:
    found = [
        (match.start(), domain)
        for domain, words in DOMAIN_WORDS.items()
        for match in re.finditer(_alternation(words), text)
    ]
    found += [(m.start(), "attraction") for m in _ATTRACTION_TYPE.finditer(text)]
    return sorted(found)


def _clock(match: re.Match[str]) -> str:
    if match.group(6):
        return "12:00"
    hour = int(match.group(1) or match.group(4))
    minute = int(match.group(2) or 0)
    suffix = match.group(3) or match.group(5)
    if suffix == "pm" and hour < 12:
        hour += 12
    if suffix == "am" and hour == 12:
        hour = 0
    return f"{hour % 24:02d}:{minute:02d}"


def _mask(text: str, start: int, end: int) -> str:
    """Blank out a span so later rules do not read it again (offsets are kept)."""
    return text[:start] + " " * (end - start) + text[end:]


def _hotel_rules(turn: _Turn) -> None:
    text = turn.text
    for match in _STARS.finditer(text):
        turn.set("hotel.stars", _number(match.group(1) or match.group(2)), "stars")
    if re.search(r"\bparking\b", text):
        turn.set("hotel.parking", "yes", "parking")
    if re.search(r"\b(internet|wifi|wi-fi)\b", text):
        turn.set("hotel.internet", "yes", "internet")
    if re.search(r"\b(guesthouse|guest house|bed and breakfast|b&b)\b", text):
        turn.set("hotel.type", "guesthouse", "type")
    elif re.search(r"\b(a|an) (?:[\w-]+ ){0,2}hotel\b", text):
        turn.set("hotel.type", "hotel", "type", STRENGTH["pattern"])
    for match in _STAY.finditer(text):
        turn.set("hotel.book_stay", _number(match.group(1)), "stay")
        turn.text = text = _mask(text, *match.span())


def _train_rules(turn: _Turn) -> None:
    mentioned = {d for _, d in turn.mentions}
    in_state = any(slot.startswith("train.") for slot in turn.previous)
    if "train" not in mentioned and "train" not in turn.system and (mentioned or not in_state):
        return
    for match in _FROM_STATION.finditer(turn.text):
        station = STATIONS[match.group(1)]
        turn.set("train.departure", station, "from-station", _lexical(match.group(1), station))
    for match in _TO_STATION.finditer(turn.text):
        station = STATIONS[match.group(1)]
        if turn.updates.get("train.departure", ("",))[0] != station:
            strength = _lexical(match.group(1), station)
            turn.set("train.destination", station, "to-station", strength)


def _taxi_endpoint(phrase: str, previous: Mapping[str, Any]) -> str | None:
    """A place name, or the name in the state that "the hotel" / "the museum" refers to."""
    phrase = re.sub(r"^(?:the|my|our)\s+", "", phrase.strip())
    if phrase in _STATE_REFERENCES:
        name = previous.get(_STATE_REFERENCES[phrase])
        return str(name) if name else None
    return None if phrase in _NOT_PLACES else phrase


def _taxi_rules(turn: _Turn) -> None:
    if not any(d == "taxi" for _, d in turn.mentions):
        return
    route = _TAXI_ROUTE.search(turn.text)
    to_match, from_match = _TAXI_TO.search(turn.text), _TAXI_FROM.search(turn.text)
    spans = [m.span() for m in (route,) if m] or [m.span() for m in (to_match, from_match) if m]
    ends: dict[str, str | None] = {
        "departure": route.group("from") if route else from_match and from_match.group("from"),
        "destination": route.group("to") if route else to_match and to_match.group("to"),
    }
    # "from the hotel to the museum" names places: no domain mention, no attraction type.
    turn.mentions[:] = [
        (p, d) for p, d in turn.mentions if d == "taxi" or not any(a <= p < b for a, b in spans)
    ]
    for start, end in spans:
        turn.text = _mask(turn.text, start, end)
    for slot, phrase in ends.items():
        value = _taxi_endpoint(phrase, turn.previous) if phrase else None
        if value:
            kind = "place" if value == phrase.strip() else "reference"
            turn.set(f"taxi.{slot}", value, f"taxi-{slot}", STRENGTH[kind])


def _restaurant_and_attraction_rules(turn: _Turn) -> None:
    for match in _CUISINE.finditer(turn.text):
        turn.set("restaurant.food", match.group(1), "cuisine")
        turn.mentions.append((match.start(), "restaurant"))
        turn.text = _mask(turn.text, *match.span())
    for match in _ATTRACTION_TYPE.finditer(turn.text):
        value = ATTRACTION_TYPES[match.group(1)]
        turn.set("attraction.type", value, "attraction-type", _lexical(match.group(1), value))
    turn.mentions.sort()


def _neutral_rules(turn: _Turn) -> None:
    """Slots several domains share: the domain comes from the nearest mention."""
    text = turn.text
    rules: list[tuple[str, re.Pattern[str], str]] = [
        ("area", _AREA, "area"),
        ("pricerange", _PRICE, "pricerange"),
        ("day", _DAY, "day"),
        ("people", _PEOPLE, "people"),
    ]
    for kind, pattern, rule in rules:
        for match in pattern.finditer(text):
            found = turn.locate(match.start(), kind)
            if found is None:
                continue
            domain, evidence = found
            strength = STRENGTH["lexicon"]
            if kind == "area":
                value = AREAS[match.group(1)]
                strength = _lexical(match.group(1), value)
            elif kind == "pricerange":
                value = PRICES[match.group(1)]
                strength = _lexical(match.group(1), value)
            elif kind == "day":
                value = match.group(1)
            else:
                value = _number(next(g for g in match.groups() if g))
            if kind == "day":
                slot = _day_slot(domain)
            else:
                slot = f"{domain}.{'book_people' if kind == 'people' else kind}"
            turn.set(slot, value, rule, strength * evidence)
    for match in _TIME.finditer(text):
        found = turn.locate(match.start(), "time")
        if found is None:
            continue
        domain, evidence = found
        if domain == "restaurant":
            turn.set("restaurant.book_time", _clock(match), "time", STRENGTH["lexicon"] * evidence)
            continue
        window = text[max(0, match.start() - 30) : match.start()]
        cues = [(m.end(), "arriveby") for m in _ARRIVE_CUE.finditer(window)]
        cues += [(m.end(), "leaveat") for m in _LEAVE_CUE.finditer(window)]
        slot = max(cues)[1] if cues else "leaveat"
        # without a cue, "leave at" is a guess
        strength = STRENGTH["lexicon"] if cues else STRENGTH["pattern"]
        turn.set(f"{domain}.{slot}", _clock(match), "time", strength * evidence)
    for match in _CALLED.finditer(text):
        found = turn.locate(match.start(), "name")
        if found is not None:
            domain, evidence = found
            strength = STRENGTH["place"] * evidence
            turn.set(f"{domain}.name", match.group(1).strip(), "called", strength)


def _day_slot(domain: str) -> str:
    return f"{domain}.day" if domain == "train" else f"{domain}.book_day"


def _reference_rules(turn: _Turn) -> None:
    """Copy "the same day" / "the same group" from another domain in the state."""
    # e.g. "a table for the same group of people on the same day" after a hotel booking.
    known = {**turn.previous, **{slot: value for slot, (value, _) in turn.updates.items()}}
    for pattern, kind in ((_SAME_DAY, "day"), (_SAME_PEOPLE, "people")):
        match = pattern.search(turn.text)
        domain = turn.domain_at(match.start(), kind) if match else None
        if domain is None:
            continue
        slot_of = _day_slot if kind == "day" else (lambda d: f"{d}.book_people")
        for other in ("hotel", "restaurant", "train"):
            if other != domain and known.get(slot_of(other)):
                value = str(known[slot_of(other)])
                turn.set(slot_of(domain), value, f"same-{kind}", STRENGTH["reference"])
                break


def _dontcare_rules(turn: _Turn) -> None:
    match = _DONTCARE.search(turn.text)
    if not match:
        return
    topics = {t for word, t in DONTCARE_TOPICS.items() if re.search(rf"\b{word}", turn.text)}
    if not topics:
        topics = {t for word, t in DONTCARE_TOPICS.items() if re.search(rf"\b{word}", turn.system)}
    domains = {
        "hotel": ("area", "pricerange", "stars", "parking", "internet", "type"),
        "restaurant": ("area", "pricerange", "food"),
        "attraction": ("area", "type"),
    }
    domain = turn.domain_at(match.start(), "area")
    if domain is None:
        return
    for topic in sorted(topics):
        if topic in domains[domain]:
            turn.set(f"{domain}.{topic}", "dontcare", "dontcare", STRENGTH["dontcare"])


def extract_updates(
    utterance: str, system_utterance: str = "", previous: Mapping[str, Any] | None = None
) -> dict[str, tuple[str, str]]:
    """The slots one user turn sets: ``{"domain.slot": (value, rule name)}``.

    Args:
        utterance: What the user said.
        system_utterance: What the system said just before (helps find the domain).
        previous: The flat state before the turn (for "the same day" and "from the hotel").
    """
    return _read_turn(utterance, system_utterance, previous).updates


def _read_turn(utterance: str, system_utterance: str, previous: Mapping[str, Any] | None) -> _Turn:
    # MultiWOZ text is tokenised ("do n't", "I 'd"): glue clitics back before matching.
    text = re.sub(r" (n't|'s|'d|'ll|'m|'re|'ve)\b", r"\1", " ".join(utterance.lower().split()))
    turn = _Turn(
        text=text,
        system=" ".join(system_utterance.lower().split()),
        previous=previous or {},
        mentions=_domain_mentions(text),
    )
    _taxi_rules(turn)
    _restaurant_and_attraction_rules(turn)
    _hotel_rules(turn)
    _train_rules(turn)
    _neutral_rules(turn)
    _reference_rules(turn)
    _dontcare_rules(turn)
    if re.search(r"\bhospital\b", text):
        match = re.search(r"\b(?:the )?([a-z]+(?: [a-z]+)?) department\b", text)
        if match:
            department = re.sub(r"^the ", "", match.group(1))
            turn.set("hospital.department", department, "department", STRENGTH["place"])
    return turn


def track(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    """Return a copy of ``state`` with the slots the user turn ``input.prompt`` sets.

    ``input.metadata["system_utterance_before"]``, when present, helps find the domain.
    """
    system = input.metadata.get("system_utterance_before", "")
    turn = _read_turn(input.prompt, str(system or ""), state.to_flat())
    out = state.copy()
    for slot, (value, rule) in turn.updates.items():
        confidence = turn.strength[slot]
        out.set_value(slot, ValueConfidence(value, confidence, f"rule:{rule}", input.message_id))
    return out
