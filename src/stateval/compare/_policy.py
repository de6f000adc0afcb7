"""Match policies: how one field's expected and actual best candidates are compared.

The default `MatchPolicy()` is the seed rule: value (strict JSON equality) and confidence both
equal. A suite loosens it per field or glob with `FieldPolicies`.

Path patterns are `fnmatch` patterns matched case-sensitively against the whole dotted path:
``*`` matches any run of characters *including dots*, ``?`` one character, ``[ab]`` a set. So
``hotel.*`` matches ``hotel.area`` and ``hotel.book.people``, and ``*`` alone matches every path.
`FieldPolicies.for_path` picks an exact key first, else the first matching pattern in declared
order, else the default.

Example:
    >>> policies = FieldPolicies.from_mapping(
    ...     {"hotel.*": {"normalize": ["case"], "synonyms": {"center": "centre"}}}
    ... )
    >>> policies.for_path("hotel.area").synonyms["center"]
    'centre'
    >>> policies.for_path("train.day") == MatchPolicy()
    True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stateval.compare._normalize import NORMALIZERS, Normalizer, normalize_text
from stateval.errors import PolicyError, SuiteError

__all__ = [
    "NORMALIZERS",
    "ConfidenceMode",
    "FieldPolicies",
    "ListMode",
    "MatchPolicy",
    "MatchPolicyModel",
    "Normalizer",
    "ScoreMode",
]

ConfidenceMode: TypeAlias = Literal["exact", "ignore"]
ListMode: TypeAlias = Literal["exact", "set", "any_of"]
ScoreMode: TypeAlias = Literal["binary", "similarity"]
_GLOB_CHARS = frozenset("*?[")


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
            when the actual value matches any of them.
        alternatives_separator: With ``"any_of"``, splits an expected string, e.g. ``"|"``.
        fuzzy: Strings whose `rapidfuzz.fuzz.ratio` / 100 (after normalisation and synonyms)
            is at least this threshold in [0, 1] match; the ratio is reported as similarity.
        score: ``"binary"`` scores the field 1.0 when it matches and 0.0 otherwise;
            ``"similarity"`` (needs ``fuzzy``) scores it with the fuzzy similarity instead, as
            SGD's scorer does for free-form slots (matching still follows the threshold).
        judge: ``"llm"`` asks the Phoenix layer to have an LLM judge a value the deterministic
            rule calls different (compare itself never calls an LLM).
        rubric: Instructions for that judge.
        ignore: Leave the field out of the comparison entirely.

    Policies never turn a missing or extra field into a match: they only decide between
    matching and mismatched when both sides hold the field.
    """

    confidence: ConfidenceMode = "exact"
    confidence_tolerance: float | None = None
    normalize: tuple[Normalizer, ...] = ()
    synonyms: Mapping[str, str] = field(default_factory=dict, hash=False)
    numeric_tolerance: float | None = None
    list_mode: ListMode = "exact"
    alternatives_separator: str | None = None
    fuzzy: float | None = None
    score: ScoreMode = "binary"
    judge: Literal["llm"] | None = None
    rubric: str | None = None
    ignore: bool = False
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
        if self.list_mode not in ("exact", "set", "any_of"):
            raise bad(f"list_mode must be 'exact', 'set' or 'any_of', got {self.list_mode!r}")
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
        if self.score == "similarity" and self.fuzzy is None:
            raise bad("score='similarity' needs a fuzzy threshold")
        if self.judge not in (None, "llm"):
            raise bad(f"judge must be 'llm' or None, got {self.judge!r}")
        if self.rubric is not None and self.judge is None:
            raise bad("rubric needs judge='llm'")
        if not isinstance(self.ignore, bool):
            raise bad(f"ignore must be true or false, got {self.ignore!r}")

    @property
    def is_strict(self) -> bool:
        """True when values are compared by plain strict JSON equality."""
        return (
            not self.normalize
            and not self.synonyms
            and self.numeric_tolerance is None
            and self.list_mode == "exact"
            and self.fuzzy is None
        )

    def to_dict(self) -> dict[str, Any]:
        """The options that differ from the seed rule, as suite-file data (JSON-able)."""
        out: dict[str, Any] = {}
        for name in _OPTION_NAMES:
            value = getattr(self, name)
            if value != getattr(_SEED, name):
                if name == "normalize":
                    value = list(value)
                elif name == "synonyms":
                    value = dict(value)
                out[name] = value
        return out

    def canonical(self, text: str) -> str:
        """``text`` after this policy's normalisers and synonyms."""
        text = normalize_text(text, self.normalize)
        return self._synonym_table.get(text, text)


_SEED = MatchPolicy()
_OPTION_NAMES = tuple(name for name in MatchPolicy.__dataclass_fields__ if not name.startswith("_"))


class MatchPolicyModel(BaseModel):
    """A match policy as written in a suite file (unknown keys are rejected)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    confidence: ConfidenceMode = "exact"
    confidence_tolerance: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    normalize: list[Normalizer] = Field(default_factory=list)
    synonyms: dict[str, str] = Field(default_factory=dict)
    numeric_tolerance: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    list_mode: ListMode = "exact"
    alternatives_separator: str | None = Field(default=None, min_length=1)
    fuzzy: float | None = Field(default=None, ge=0, le=1)
    score: ScoreMode = "binary"
    judge: Literal["llm"] | None = None
    rubric: str | None = None
    ignore: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> MatchPolicyModel:
        try:
            self.to_policy()
        except PolicyError as exc:
            raise ValueError(str(exc).removeprefix("invalid match policy: ")) from None
        return self

    def to_policy(self) -> MatchPolicy:
        """The `MatchPolicy` this model describes."""
        return MatchPolicy(
            confidence=self.confidence,
            confidence_tolerance=self.confidence_tolerance,
            normalize=tuple(self.normalize),
            synonyms=dict(self.synonyms),
            numeric_tolerance=self.numeric_tolerance,
            list_mode=self.list_mode,
            alternatives_separator=self.alternatives_separator,
            fuzzy=self.fuzzy,
            score=self.score,
            judge=self.judge,
            rubric=self.rubric,
            ignore=self.ignore,
        )


def _validation_line(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    loc = ".".join(str(part) for part in first["loc"])
    if first["type"] == "extra_forbidden":
        line = f"unknown key {loc!r}"
    else:
        msg = str(first["msg"]).removeprefix("Value error, ")
        line = f"{loc}: {msg}" if loc else msg
    if len(errors) > 1:
        line += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return line


class FieldPolicies(Mapping[str, MatchPolicy]):
    """Path patterns mapped to match policies, in declared order, plus a default.

    A read-only mapping of pattern → `MatchPolicy`. See the module docstring for patterns. It is
    always truthy, even with no patterns, since its default still applies.

    Args:
        rules: ``{pattern: policy}`` or ``[(pattern, policy), ...]``, in priority order.
        default: The policy of paths no pattern matches (the seed rule when omitted).
    """

    __slots__ = ("_cache", "_default", "_plans", "_rules", "_uniform")

    def __init__(
        self,
        rules: Mapping[str, MatchPolicy] | Iterable[tuple[str, MatchPolicy]] = (),
        default: MatchPolicy | None = None,
    ) -> None:
        items = list(rules.items()) if isinstance(rules, Mapping) else list(rules)
        self._rules: dict[str, MatchPolicy] = {}
        for pattern, policy in items:
            if not isinstance(pattern, str) or not pattern:
                raise PolicyError(f"a policy pattern must be a non-empty string, got {pattern!r}")
            if not isinstance(policy, MatchPolicy):
                raise PolicyError(f"policy for {pattern!r} is not a MatchPolicy: {policy!r}")
            if pattern in self._rules:
                raise PolicyError(f"duplicate policy pattern {pattern!r}")
            self._rules[pattern] = policy
        if default is not None and not isinstance(default, MatchPolicy):
            raise PolicyError(f"default policy is not a MatchPolicy: {default!r}")
        self._default = default if default is not None else MatchPolicy()
        self._cache: dict[str, MatchPolicy] = {}
        self._plans: dict[str, tuple[MatchPolicy, str]] = {}
        self._uniform = None if self._rules else _mode(self._default)

    @classmethod
    def from_mapping(
        cls,
        mapping: Mapping[str, Any],
        *,
        default: Mapping[str, Any] | MatchPolicy | None = None,
    ) -> FieldPolicies:
        """Build from suite-file data: ``{pattern: {option: value}}`` (or `MatchPolicy` values).

        Raises:
            SuiteError: One line naming the pattern and the bad key or value.
        """
        if not isinstance(mapping, Mapping):
            raise SuiteError(
                f"policies must be a mapping of path pattern to policy, got {mapping!r}"
            )
        rules = [(pattern, _read_policy(repr(pattern), spec)) for pattern, spec in mapping.items()]
        return cls(rules, None if default is None else _read_policy("the default", default))

    @classmethod
    def of(cls, policies: FieldPolicies | MatchPolicy | None) -> FieldPolicies:
        """``policies`` as `FieldPolicies`: one `MatchPolicy` becomes the default of all paths,
        None the seed rule (one shared instance, so its per-path resolutions are reused)."""
        if policies is None:
            return _SEED_POLICIES
        if isinstance(policies, MatchPolicy):
            return cls(default=policies)
        if not isinstance(policies, FieldPolicies):
            raise PolicyError(f"expected FieldPolicies or MatchPolicy, got {policies!r}")
        return policies

    @property
    def default(self) -> MatchPolicy:
        """The policy of paths no pattern matches."""
        return self._default

    def for_path(self, path: str) -> MatchPolicy:
        """The policy of ``path``: exact key, else first matching pattern, else the default."""
        cached = self._cache.get(path)
        if cached is not None:
            return cached
        policy = self._rules.get(path)
        if policy is None:
            policy = next(
                (
                    p
                    for pattern, p in self._rules.items()
                    if _GLOB_CHARS.intersection(pattern) and fnmatchcase(path, pattern)
                ),
                self._default,
            )
        self._cache[path] = policy
        return policy

    @property
    def has_judge(self) -> bool:
        """True when some pattern's policy, or the default, asks for an LLM judge."""
        return self._default.judge is not None or any(
            p.judge is not None for p in self._rules.values()
        )

    @property
    def uniform_mode(self) -> str | None:
        """The `plan` mode of every path when no pattern is set (all paths take the default),
        else None."""
        return self._uniform

    def plan(self, path: str) -> tuple[MatchPolicy, str]:
        """``(policy of path, how to compare it)``, resolved once per path: `IGNORED`,
        `STRICT` (values by strict JSON equality, confidences equal), `STRICT_VALUE` (values
        only) or `FULL` (the policy's whole machinery)."""
        planned = self._plans.get(path)
        if planned is None:
            policy = self.for_path(path)
            planned = self._plans[path] = (policy, _mode(policy))
        return planned

    def __getitem__(self, pattern: str) -> MatchPolicy:
        return self._rules[pattern]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldPolicies):
            return NotImplemented
        return list(self._rules.items()) == list(other._rules.items()) and (
            self._default == other._default
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FieldPolicies({self._rules!r}, default={self._default!r})"


IGNORED = "ignored"
"""`FieldPolicies.plan`: the path is not compared."""
STRICT = "strict"
"""`FieldPolicies.plan`: strict JSON equality of values, equal confidences (the seed rule)."""
STRICT_VALUE = "strict_value"
"""`FieldPolicies.plan`: strict JSON equality of values, confidence ignored."""
FULL = "full"
"""`FieldPolicies.plan`: the policy's normalisers, tolerances, list modes, fuzzy matching or
LLM judge."""


def _mode(policy: MatchPolicy) -> str:
    if policy.ignore:
        return IGNORED
    if not policy.is_strict or policy.judge is not None:
        return FULL
    if policy.confidence == "ignore":
        return STRICT_VALUE
    return STRICT if policy.confidence_tolerance is None else FULL


_SEED_POLICIES = FieldPolicies()


def _read_policy(where: str, spec: object) -> MatchPolicy:
    if isinstance(spec, MatchPolicy):
        return spec
    if isinstance(spec, MatchPolicyModel):
        return spec.to_policy()
    if not isinstance(spec, Mapping):
        raise SuiteError(f"match policy for {where} must be a mapping, got {spec!r}")
    try:
        return MatchPolicyModel.model_validate(dict(spec)).to_policy()
    except ValidationError as exc:
        raise SuiteError(f"match policy for {where}: {_validation_line(exc)}") from exc
    except PolicyError as exc:
        raise SuiteError(f"match policy for {where}: {exc}") from exc
