"""Slot schemas: the slots a dialogue state tracker fills, grouped by service, and the match
policies they imply.

A schema file is JSON or YAML shaped like the Schema-Guided Dialogue dataset's ``schema.json``:
a list of services (or ``{"services": [...]}``), each with a ``service_name`` and ``slots``, each
slot with a ``name``, ``is_categorical`` and ``possible_values`` (other keys, such as SGD's
``description`` and ``intents``, are read past). A slot's path is ``<service_name>.<name>``, or
its ``path`` when given.

Derived policies (`SlotSchema.policies`): every slot reads the expected value as accepted
alternatives (``list_mode: any_of``: SGD's gold is a list, ``["1"]``, even for a categorical
slot, and a plain ``"1"`` prediction must match it) and compares after the ``case``,
``punctuation`` and ``whitespace`` normalisers; a free-form slot also matches fuzzily (0.9
unless the suite says otherwise). A policy the suite keys by the slot's exact path wins
outright; otherwise the derived options fill in what the suite's matching policy leaves unset.

``dontcare`` (`ANY_SLOT_VALUES`) is a legal value of every slot, categorical or not: SGD's data
uses it in every slot and its ``schema.json`` lists it in no slot's ``possible_values``.

Example:
    >>> schema = SlotSchema.from_data([
    ...     {"service_name": "hotel", "slots": [
    ...         {"name": "area", "is_categorical": True, "possible_values": ["north", "centre"]},
    ...         {"name": "name", "is_categorical": False}]},
    ...     {"service_name": "taxi", "slots": [{"name": "leaveat"}]},
    ... ])
    >>> schema.paths
    ('hotel.area', 'hotel.name', 'taxi.leaveat')
    >>> schema.active_paths(["taxi"])
    ('taxi.leaveat',)
    >>> policies = schema.policies(FieldPolicies())
    >>> policies.for_path("hotel.name").list_mode, policies.for_path("hotel.area").fuzzy
    ('any_of', None)
    >>> schema.legal_values(schema.slot("hotel.area"))
    ('north', 'centre', 'dontcare')
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stateval.compare import FieldPolicies, MatchPolicy
from stateval.errors import SuiteError

__all__ = ["ANY_SLOT_VALUES", "SlotDef", "SlotSchema", "SlotSchemaError", "plain_slot_list"]

_NORMALIZE = ("case", "punctuation", "whitespace")
DEFAULT_FUZZY = 0.9

#: Values legal in every slot of a schema besides its ``possible_values`` (SGD's convention).
ANY_SLOT_VALUES: tuple[str, ...] = ("dontcare",)


class SlotSchemaError(SuiteError):
    """A schema file's content is not a slot schema (the message says where and why).

    Attributes:
        line: The line of the file it is about, when known.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


_PLAIN_SLOT = re.compile(r"[\w-]+(?:\.[\w-]+)*")


def plain_slot_list(text: str) -> list[str]:
    r"""The slot paths of a plain-text slot list: one per line, blank lines and ``#`` comments
    skipped.

    A line must look like a slot path (dot-separated names of letters, digits, ``_`` and
    ``-``): any text file would otherwise read as a list of "slots" (``/etc/passwd`` did, and its
    lines landed in the reports).

    Raises:
        SlotSchemaError: Naming the first line that is not a slot path.

    Example:
        >>> plain_slot_list("# TRADE\nhotel.area\n\nhotel.book_people\n")
        ['hotel.area', 'hotel.book_people']
    """
    out: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not _PLAIN_SLOT.fullmatch(line):
            raise SlotSchemaError(
                f"{line[:80]!r} is not a slot path (dot-separated names of letters, digits, "
                "'_' and '-', such as hotel.book_people)",
                number,
            )
        out.append(line)
    return out


class _SlotModel(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1)
    path: str | None = Field(default=None, min_length=1)
    is_categorical: bool = False
    possible_values: list[str] = Field(default_factory=list)


class _ServiceModel(BaseModel):
    model_config = ConfigDict(extra="ignore")

    service_name: str = Field(min_length=1)
    slots: list[_SlotModel]


@dataclass(frozen=True, slots=True)
class SlotDef:
    """One slot of a schema.

    Attributes:
        path: The field path (``<service>.<name>`` unless the file gives one).
        service: The service it belongs to (None in a plain list of slots).
        categorical: Whether its values come from `possible_values`.
        possible_values: The values a categorical slot may take.
    """

    path: str
    service: str | None = None
    categorical: bool = False
    possible_values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SlotSchema:
    """Slots grouped by service.

    Attributes:
        slots: Every slot, in file order.
        fuzzy: The fuzzy threshold of derived free-form policies (None: no fuzzy matching).
    """

    slots: tuple[SlotDef, ...]
    fuzzy: float | None = DEFAULT_FUZZY

    @classmethod
    def from_paths(cls, paths: Iterable[str]) -> SlotSchema:
        """A schema of plain slot paths: no services, nothing derived."""
        return cls(tuple(SlotDef(p) for p in paths), fuzzy=None)

    @classmethod
    def from_data(cls, data: object, *, fuzzy: float | None = DEFAULT_FUZZY) -> SlotSchema:
        """Read SGD-shaped data (see the module docstring).

        Raises:
            SlotSchemaError: One line naming the service or slot and the problem.
        """
        if isinstance(data, Mapping) and "services" in data:
            data = data["services"]
        if not isinstance(data, list) or not data:
            raise SlotSchemaError("a slot schema is a non-empty list of services")
        out: list[SlotDef] = []
        for i, item in enumerate(data):
            try:
                service = _ServiceModel.model_validate(item)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first["loc"])
                name = item.get("service_name") if isinstance(item, Mapping) else None
                where = f"service {name!r}" if isinstance(name, str) else f"service #{i + 1}"
                raise SlotSchemaError(f"{where}: {loc}: {first['msg']}") from None
            for slot in service.slots:
                out.append(
                    SlotDef(
                        slot.path or f"{service.service_name}.{slot.name}",
                        service.service_name,
                        slot.is_categorical,
                        tuple(slot.possible_values),
                    )
                )
        paths = [s.path for s in out]
        dupes = sorted(p for p, n in Counter(paths).items() if n > 1)
        if dupes:
            raise SlotSchemaError(f"duplicate slots: {dupes}")
        return cls(tuple(out), fuzzy)

    @property
    def paths(self) -> tuple[str, ...]:
        """Every slot path, in order."""
        return tuple(s.path for s in self.slots)

    @property
    def services(self) -> tuple[str, ...]:
        """Every service named, in order."""
        return tuple(dict.fromkeys(s.service for s in self.slots if s.service is not None))

    @property
    def services_of(self) -> Mapping[str, str | None]:
        """Slot path -> its service (None for a slot without one)."""
        return {s.path: s.service for s in self.slots}

    def by_service(self) -> dict[str, list[str]]:
        """Service -> its slot paths, in order (the schema the ``slot_accuracy`` evaluator
        takes to count only the slots of the services in play)."""
        out: dict[str, list[str]] = {}
        for s in self.slots:
            if s.service is not None:
                out.setdefault(s.service, []).append(s.path)
        return out

    @property
    def has_services(self) -> bool:
        """True when slots are grouped by service."""
        return any(s.service is not None for s in self.slots)

    def active_paths(self, services: Iterable[str] | None) -> tuple[str, ...]:
        """The slots of ``services`` (every slot when None, or when slots have no service)."""
        if services is None or not self.has_services:
            return self.paths
        wanted = set(services)
        return tuple(s.path for s in self.slots if s.service in wanted)

    def derived_policy(self, slot: SlotDef, base: MatchPolicy) -> MatchPolicy:
        """``base`` with the options ``slot``'s kind implies filled in where ``base`` leaves
        them unset."""
        if not self.has_services:
            return base
        changes: dict[str, Any] = {}
        if not base.normalize:
            changes["normalize"] = _NORMALIZE
        if base.list_mode == "exact" and base.numeric_tolerance is None:
            changes["list_mode"] = "any_of"
        if not slot.categorical and base.fuzzy is None and self.fuzzy is not None:
            changes["fuzzy"] = self.fuzzy
        return dataclasses.replace(base, **changes) if changes else base

    def legal_values(self, slot: SlotDef) -> tuple[str, ...]:
        """The values a categorical ``slot`` may take: its ``possible_values`` and
        `ANY_SLOT_VALUES` (such as ``dontcare``)."""
        extra = tuple(v for v in ANY_SLOT_VALUES if v not in slot.possible_values)
        return (*slot.possible_values, *extra)

    def policies(self, user: FieldPolicies) -> FieldPolicies:
        """``user``'s policies with each slot's derived policy added under its exact path.

        A slot ``user`` keys by its exact path keeps that policy unchanged.
        """
        if not self.has_services:
            return user
        derived = [
            (slot.path, self.derived_policy(slot, user.for_path(slot.path)))
            for slot in self.slots
            if slot.path not in user
        ]
        return FieldPolicies([*derived, *user.items()], default=user.default)

    def slot(self, path: str) -> SlotDef | None:
        """The slot at ``path``, or None."""
        return next((s for s in self.slots if s.path == path), None)


def slot_paths(value: object) -> Sequence[str] | None:
    """``value`` as a list of slot paths when it is one, else None."""
    if isinstance(value, list | tuple) and all(isinstance(s, str) for s in value):
        return list(value)
    return None
