"""The slot schema of the MultiWOZ example: TRADE's 30 slots (Wu et al., 2019).

TRADE scores dialogue state tracking on five domains (hotel, train, attraction, restaurant, taxi)
and these 30 ``domain.slot`` paths, spelled as in the data (``book_people``, not ``book people``).
Slot accuracy counts a slot as correct when predicted and gold agree, absent-in-both included.
"""

from __future__ import annotations

__all__ = ["TRADE_DOMAINS", "TRADE_SLOTS"]

TRADE_DOMAINS: tuple[str, ...] = ("hotel", "train", "attraction", "restaurant", "taxi")

TRADE_SLOTS: tuple[str, ...] = (
    "hotel.pricerange",
    "hotel.type",
    "hotel.parking",
    "hotel.book_stay",
    "hotel.book_day",
    "hotel.book_people",
    "hotel.area",
    "hotel.stars",
    "hotel.internet",
    "hotel.name",
    "train.destination",
    "train.day",
    "train.departure",
    "train.arriveby",
    "train.book_people",
    "train.leaveat",
    "attraction.area",
    "attraction.name",
    "attraction.type",
    "restaurant.food",
    "restaurant.pricerange",
    "restaurant.area",
    "restaurant.name",
    "restaurant.book_time",
    "restaurant.book_day",
    "restaurant.book_people",
    "taxi.leaveat",
    "taxi.destination",
    "taxi.departure",
    "taxi.arriveby",
)
