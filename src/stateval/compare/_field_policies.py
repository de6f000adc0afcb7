"""Field policies: path patterns mapped to match policies, and how each path is compared.

Path patterns are `fnmatch` patterns matched case-sensitively against the whole dotted path:
``*`` matches any run of characters *including dots*, ``?`` one character, ``[ab]`` a set. So
``hotel.*`` matches ``hotel.area`` and ``hotel.book.people``, and ``*`` alone matches every path;
``[]`` is literal (``line_items[].*`` names every sub-field of a list of records' items).
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

from collections.abc import Iterable, Iterator, Mapping
from fnmatch import fnmatchcase
from typing import Any

from pydantic import ValidationError

from stateval.compare._policy import MatchPolicy, MatchPolicyModel
from stateval.errors import PolicyError, SuiteError

__all__ = ["FULL", "IGNORED", "STRICT", "STRICT_VALUE", "FieldPolicies", "path_matches"]

_GLOB_CHARS = frozenset("*?[")


def path_matches(path: str, pattern: str) -> bool:
    """Whether ``path`` matches the glob ``pattern``; ``[]`` (the items of a list of records,
    ``line_items[].quantity``) is literal in both.

    >>> path_matches("line_items[].quantity", "line_items[].*")
    True
    """
    return fnmatchcase(path, pattern.replace("[]", "[[][]]"))


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

    __slots__ = ("_cache", "_default", "_judged", "_plans", "_rules", "_uniform", "_weighted")

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
        self._weighted = self._default.weight != 1.0 or any(
            p.weight != 1.0 for p in self._rules.values()
        )
        self._judged = self._default.judge is not None or any(
            p.judge is not None for p in self._rules.values()
        )

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
                    if _GLOB_CHARS.intersection(pattern) and path_matches(path, pattern)
                ),
                self._default,
            )
        self._cache[path] = policy
        return policy

    @property
    def has_judge(self) -> bool:
        """True when some pattern's policy, or the default, asks for an LLM judge."""
        return self._judged

    @property
    def has_weights(self) -> bool:
        """True when some pattern's policy, or the default, sets a weight other than 1."""
        return self._weighted

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

    def __reduce__(self) -> tuple[type[FieldPolicies], tuple[Any, ...]]:
        # pickled as its rules and default, without what it has resolved per path so far
        return FieldPolicies, (list(self._rules.items()), self._default)

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
