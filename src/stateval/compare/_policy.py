"""Match policies: how one field's expected and actual best candidates are compared.

The default `MatchPolicy()` is the seed rule: value (strict JSON equality) and confidence both
equal. A suite loosens it per field or glob with `FieldPolicies` (``_field_policies.py``).

`MatchPolicy` is the one definition of a policy: each option is one field declared with
`_option` (its default, its description and the bounds a suite file must respect), and
`MatchPolicyModel`, the suite-file form (pydantic, unknown keys rejected), is derived from those
fields. A new option is one `_option` line here (plus its rule in ``_match.py``): the suite
schema, ``stateval schema``, ``to_dict`` and the docs test read it from here.

Example:
    >>> MatchPolicy(normalize=("case",)).to_dict()
    {'normalize': ['case']}
    >>> MatchPolicyModel.model_validate({"fuzzy": 0.8}).to_policy() == MatchPolicy(fuzzy=0.8)
    True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from stateval.compare._normalize import NORMALIZERS, Normalizer, normalize_text
from stateval.compare._typed import COMPARATORS
from stateval.errors import PolicyError

__all__ = [
    "NORMALIZERS",
    "ConfidenceMode",
    "DateOrder",
    "ListMode",
    "MatchPolicy",
    "MatchPolicyModel",
    "Normalizer",
    "ScoreMode",
    "policy_options",
]

ConfidenceMode: TypeAlias = Literal["exact", "ignore"]
ListMode: TypeAlias = Literal["exact", "set", "any_of", "align"]
DateOrder: TypeAlias = Literal["DMY", "MDY", "YMD"]
ScoreMode: TypeAlias = Literal["binary", "similarity"]


def _option(
    default: Any = None,
    *,
    doc: str,
    factory: Callable[[], Any] | None = None,
    **bounds: Any,
) -> Any:
    """One policy option: its default (or default ``factory``), its one-line description and
    the pydantic bounds of its suite-file form (``ge``, ``le``, ``min_length``...)."""
    meta = {"doc": doc, "bounds": bounds}
    if factory is not None:
        return field(default_factory=factory, hash=False, metadata=meta)
    return field(default=default, metadata=meta)


def _tolerance(name: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PolicyError(f"invalid match policy: {name} must be a number, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise PolicyError(f"invalid match policy: {name} must be a finite number >= 0, got {value}")
    return float(value)


@dataclass(frozen=True, slots=True)
class MatchPolicy:
    """How one field is compared. The defaults are the seed rule (value and confidence equal).

    Args:
        confidence: ``"exact"`` compares confidences, ``"ignore"`` does not.
        confidence_tolerance: With ``"exact"``, confidences within this absolute distance match.
        normalize: Normalisers applied to strings (also inside lists and object values)
            before comparing; they run in the order of `NORMALIZERS` whatever order they are
            listed in. ``case``: casefold. ``number_words``: "zero".."nineteen", the tens and
            "twenty one" / "twenty-one" become digits. ``punctuation``: a run of punctuation
            between letters or digits becomes a space (``alpha-milton`` → ``alpha milton``)
            unless it is apostrophes (``john's`` → ``johns``); elsewhere it is deleted.
            ``whitespace``: strip and collapse runs of whitespace to one space.
        synonyms: Applied after normalisation to both sides: a whole normalised string found as
            a key (itself normalised) is replaced by its value, e.g. ``{"center": "centre"}``.
        numeric_tolerance: When set (``0`` allowed), the field is numeric: JSON numbers and
            numeric strings (``"3"``, and ``"three"`` when ``number_words`` is on) are compared
            as numbers within this absolute distance. Unset, ``"3"`` and ``3`` differ.
        list_mode: ``"exact"`` compares lists element by element in order; ``"set"`` ignores
            order and duplicates; ``"any_of"`` reads the expected value as accepted
            alternatives (a list, or a string split by ``alternatives_separator``) and matches
            when the actual value matches any of them; ``"align"`` reads a list of records
            (objects) and pairs expected and actual items one to one (``item_key``, else the
            optimal assignment on item similarity), each item's sub-fields compared under the
            policies of ``<path>[].<key>`` (see ``_records.py``).
        item_key: With ``"align"``: the dotted key of an item's id; items pair by equal ids.
        item_threshold: With ``"align"``: items less similar than this (in [0, 1]) stay
            unpaired (a missing and an extra item).
        comparator: A typed comparator of `COMPARATORS` (``date``, ``datetime``, ``phone``,
            ``money``, ``email``, ``unit``): values are read into a canonical form first.
        date_order: How a numeric day/month date reads (``DMY``, ``MDY``); unset, such dates
            are refused, never guessed.
        date_tolerance: Dates (days apart) or datetimes within this many days match.
        phone_region: The region (``GB``, ``US``...) of phone numbers written without ``+``.
        weight: The field's weight in ``weighted_state_accuracy`` and in an item's similarity
            (a positive number; 1 by default).
        alternatives_separator: With ``"any_of"``, splits an expected string, e.g. ``"|"``.
        fuzzy: Strings whose `rapidfuzz.fuzz.ratio` / 100 (after normalisation and synonyms)
            is at least this threshold in [0, 1] match; the ratio is reported as similarity.
        score: ``"binary"`` scores the field 1.0 when it matches and 0.0 otherwise;
            ``"similarity"`` (needs ``fuzzy``) scores it with the fuzzy similarity instead
            (matching still follows the threshold; SGD's scorer also scores free-form slots
            continuously, but with fuzzywuzzy's ``token_sort_ratio``: its figures come from
            ``metrics: {convention: sgd}``); with
            ``list_mode: align``, with the aligned list's score.
        judge: ``"llm"`` asks the Phoenix layer to have an LLM judge a value the deterministic
            rule calls different (compare itself never calls an LLM).
        rubric: Instructions for that judge.
        ignore: Leave the field out of the comparison entirely.

    Policies never turn a missing or extra field into a match: they only decide between
    matching and mismatched when both sides hold the field.
    """

    confidence: ConfidenceMode = _option(
        "exact", doc="'exact' compares confidences, 'ignore' does not."
    )
    confidence_tolerance: float | None = _option(
        doc="With confidence 'exact', confidences within this absolute distance match.",
        ge=0,
        allow_inf_nan=False,
    )
    normalize: tuple[Normalizer, ...] = _option(
        (),
        doc="Normalisers applied to strings before comparing, always in the order "
        + ", ".join(NORMALIZERS)
        + ".",
        json_schema_extra={"items": {"enum": list(NORMALIZERS), "type": "string"}},
    )
    synonyms: Mapping[str, str] = _option(
        factory=dict, doc="Whole-value replacements applied after normalisation to both sides."
    )
    numeric_tolerance: float | None = _option(
        doc="Numbers and numeric strings compare as numbers within this absolute distance.",
        ge=0,
        allow_inf_nan=False,
    )
    list_mode: ListMode = _option(
        "exact",
        doc="'exact': lists element by element; 'set': order and duplicates ignored; "
        "'any_of': the expected value is a set of accepted alternatives.",
    )
    alternatives_separator: str | None = _option(
        doc="With list_mode 'any_of', splits an expected string into alternatives.",
        min_length=1,
    )
    fuzzy: float | None = _option(
        doc="Strings whose rapidfuzz ratio / 100 reaches this threshold match.", ge=0, le=1
    )
    score: ScoreMode = _option(
        "binary",
        doc="'binary': 1 or 0; 'similarity' (needs fuzzy or list_mode 'align'): the fuzzy "
        "similarity, or the aligned list's score.",
    )
    judge: Literal["llm"] | None = _option(
        doc="'llm': an LLM judge decides values the rule calls different."
    )
    rubric: str | None = _option(doc="Instructions for the LLM judge (needs judge 'llm').")
    ignore: bool = _option(False, doc="Leave the field out of the comparison entirely.")
    item_key: str | None = _option(
        doc="With list_mode 'align': the dotted key of an item's id (items pair by id).",
        min_length=1,
    )
    item_threshold: float = _option(
        0.5,
        doc="With list_mode 'align': items less similar than this stay unpaired.",
        ge=0,
        le=1,
    )
    comparator: str | None = _option(
        doc="A typed comparator: " + ", ".join(COMPARATORS) + ".",
        json_schema_extra={"enum": [*COMPARATORS, None]},
    )
    date_order: DateOrder | None = _option(
        doc="How numeric day/month dates read (unset: refused, never guessed)."
    )
    date_tolerance: float | None = _option(
        doc="Dates or datetimes within this many days match.", ge=0, allow_inf_nan=False
    )
    phone_region: str | None = _option(
        doc="Region of phone numbers written without a + country code (GB, US...).",
        pattern="^[A-Z]{2}$",
    )
    weight: float = _option(
        1.0,
        doc="Weight in weighted_state_accuracy and in item similarity (> 0).",
        gt=0,
        allow_inf_nan=False,
    )
    _synonym_table: Mapping[str, str] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        def bad(problem: str) -> PolicyError:
            return PolicyError(f"invalid match policy: {problem}")

        if self.confidence not in ("exact", "ignore"):
            raise bad(f"confidence must be 'exact' or 'ignore', got {self.confidence!r}")
        tol = _tolerance("confidence_tolerance", self.confidence_tolerance)
        if tol is not None and self.confidence == "ignore":
            raise bad("confidence_tolerance has no effect with confidence='ignore'")
        object.__setattr__(self, "confidence_tolerance", tol)
        object.__setattr__(
            self, "numeric_tolerance", _tolerance("numeric_tolerance", self.numeric_tolerance)
        )
        names = (self.normalize,) if isinstance(self.normalize, str) else tuple(self.normalize)
        for name in names:
            if name not in NORMALIZERS:
                raise bad(f"unknown normaliser {name!r} (known: {', '.join(NORMALIZERS)})")
        object.__setattr__(self, "normalize", tuple(n for n in NORMALIZERS if n in names))
        if not isinstance(self.synonyms, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.synonyms.items()
        ):
            raise bad("synonyms must map strings to strings")
        object.__setattr__(self, "synonyms", MappingProxyType(dict(self.synonyms)))
        table = {
            normalize_text(k, self.normalize): normalize_text(v, self.normalize)
            for k, v in self.synonyms.items()
        }
        object.__setattr__(self, "_synonym_table", MappingProxyType(table))
        if self.list_mode not in ("exact", "set", "any_of", "align"):
            raise bad(
                f"list_mode must be 'exact', 'set', 'any_of' or 'align', got {self.list_mode!r}"
            )
        sep = self.alternatives_separator
        if sep is not None:
            if not isinstance(sep, str) or not sep:
                raise bad("alternatives_separator must be a non-empty string")
            if self.list_mode != "any_of":
                raise bad("alternatives_separator needs list_mode='any_of'")
        if self.fuzzy is not None:
            if isinstance(self.fuzzy, bool) or not isinstance(self.fuzzy, int | float):
                raise bad(f"fuzzy must be a number in [0, 1], got {self.fuzzy!r}")
            if not 0.0 <= self.fuzzy <= 1.0:
                raise bad(f"fuzzy must be a number in [0, 1], got {self.fuzzy}")
            object.__setattr__(self, "fuzzy", float(self.fuzzy))
        if self.score not in ("binary", "similarity"):
            raise bad(f"score must be 'binary' or 'similarity', got {self.score!r}")
        if self.score == "similarity" and self.fuzzy is None and self.list_mode != "align":
            raise bad("score='similarity' needs a fuzzy threshold or list_mode='align'")
        if self.judge not in (None, "llm"):
            raise bad(f"judge must be 'llm' or None, got {self.judge!r}")
        if self.rubric is not None and self.judge is None:
            raise bad("rubric needs judge='llm'")
        if not isinstance(self.ignore, bool):
            raise bad(f"ignore must be true or false, got {self.ignore!r}")
        self._check_structured(bad)

    def _check_structured(self, bad: Callable[[str], PolicyError]) -> None:
        align = self.list_mode == "align"
        if self.item_key is not None and (not align or not self.item_key):
            raise bad("item_key needs list_mode='align' and a non-empty key")
        threshold = self.item_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise bad(f"item_threshold must be a number in [0, 1], got {threshold!r}")
        if not 0.0 <= threshold <= 1.0:
            raise bad(f"item_threshold must be a number in [0, 1], got {threshold}")
        if threshold != 0.5 and not align:
            raise bad("item_threshold needs list_mode='align'")
        object.__setattr__(self, "item_threshold", float(threshold))
        kind = self.comparator
        if kind is not None and kind not in COMPARATORS:
            raise bad(f"unknown comparator {kind!r} (known: {', '.join(COMPARATORS)})")
        dated = kind in ("date", "datetime")
        if self.date_order is not None:
            if self.date_order not in ("DMY", "MDY", "YMD"):
                raise bad(f"date_order must be DMY, MDY or YMD, got {self.date_order!r}")
            if not dated:
                raise bad("date_order needs comparator 'date' or 'datetime'")
        tol = _tolerance("date_tolerance", self.date_tolerance)
        if tol is not None and not dated:
            raise bad("date_tolerance needs comparator 'date' or 'datetime'")
        object.__setattr__(self, "date_tolerance", tol)
        region = self.phone_region
        if region is not None:
            if kind != "phone":
                raise bad("phone_region needs comparator 'phone'")
            if not isinstance(region, str) or not region.isalpha() or len(region) != 2:
                raise bad(f"phone_region must be a two-letter region such as 'GB', got {region!r}")
        weight = self.weight
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise bad(f"weight must be a positive number, got {weight!r}")
        if not math.isfinite(weight) or weight <= 0:
            raise bad(f"weight must be a positive number, got {weight}")
        object.__setattr__(self, "weight", float(weight))

    @property
    def is_strict(self) -> bool:
        """True when values are compared by plain strict JSON equality."""
        return (
            not self.normalize
            and not self.synonyms
            and self.numeric_tolerance is None
            and self.list_mode == "exact"
            and self.fuzzy is None
            and self.comparator is None
        )

    def to_dict(self) -> dict[str, Any]:
        """The options that differ from the seed rule, as suite-file data (JSON-able)."""
        out: dict[str, Any] = {}
        for name in _OPTION_NAMES:
            value = getattr(self, name)
            if value != getattr(_SEED, name):
                if isinstance(value, tuple):
                    value = list(value)
                elif isinstance(value, Mapping):
                    value = dict(value)
                out[name] = value
        return out

    def __reduce__(self) -> tuple[Callable[[dict[str, Any]], MatchPolicy], tuple[Any, ...]]:
        # pickled as its options (shipped to a worker process or a Ray task), built again from
        # them there: the mapping proxies it keeps its synonyms in do not pickle
        return _policy_of, (self.to_dict(),)

    def canonical(self, text: str) -> str:
        """``text`` after this policy's normalisers and synonyms."""
        text = normalize_text(text, self.normalize)
        return self._synonym_table.get(text, text)


_SEED = MatchPolicy()
_OPTIONS = tuple(f for f in dataclasses.fields(MatchPolicy) if f.init)
_OPTION_NAMES = tuple(f.name for f in _OPTIONS)


def _policy_of(options: dict[str, Any]) -> MatchPolicy:
    """The policy of ``options`` (`MatchPolicy.to_dict`): a pickled policy unpickled."""
    return MatchPolicy(**options)


def policy_options() -> dict[str, str]:
    """Every policy option's name and one-line description, in declared order.

    Example:
        >>> list(policy_options())[:3]
        ['confidence', 'confidence_tolerance', 'normalize']
    """
    return {f.name: f.metadata["doc"] for f in _OPTIONS}


class _PolicyModelBase(BaseModel):
    """A match policy as written in a suite file (unknown keys are rejected)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="after")
    def _consistent(self) -> _PolicyModelBase:
        try:
            self.to_policy()
        except PolicyError as exc:
            raise ValueError(str(exc).removeprefix("invalid match policy: ")) from None
        return self

    def to_policy(self) -> MatchPolicy:
        """The `MatchPolicy` this model describes."""
        return MatchPolicy(**{name: getattr(self, name) for name in _OPTION_NAMES})


def _model_field(option: dataclasses.Field[Any], hint: Any) -> tuple[Any, Any]:
    meta = option.metadata
    info = Field(description=meta["doc"], **meta["bounds"])
    if option.default_factory is not dataclasses.MISSING:
        return Annotated[hint, info], Field(default_factory=option.default_factory)
    return Annotated[hint, info], option.default


if TYPE_CHECKING:
    MatchPolicyModel = _PolicyModelBase
else:
    _HINTS = get_type_hints(MatchPolicy)
    MatchPolicyModel = create_model(
        "MatchPolicyModel",
        __base__=_PolicyModelBase,
        __doc__=_PolicyModelBase.__doc__,
        __module__=__name__,
        **{f.name: _model_field(f, _HINTS[f.name]) for f in _OPTIONS},
    )
