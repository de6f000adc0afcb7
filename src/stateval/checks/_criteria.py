"""Criteria: rule checks described as data (``{"type": "contains", "value": "x"}``).

`parse_criteria` validates a list of criterion dicts once, compiling regexes and JSON schemas, so a
bad criterion is an `EvaluationConfigError` when the evaluator is built, never mid-run.
`check_criteria` runs them: every criterion must pass, and with no criteria the output must equal
the reference exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Annotated, Any, Literal, TypeAlias

from jsonschema.protocols import Validator
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, TypeAdapter, ValidationError

from stateval.checks._result import CheckResult
from stateval.checks._rules import (
    DEFAULT_REGEX_TIMEOUT,
    compile_regex,
    compile_schema,
    contains,
    contains_all,
    contains_any,
    exact,
    json_parseable,
    json_schema,
    matches_regex,
)
from stateval.errors import EvaluationConfigError

__all__ = [
    "ContainsAllCriterion",
    "ContainsAnyCriterion",
    "ContainsCriterion",
    "Criterion",
    "ExactCriterion",
    "JSONParseableCriterion",
    "JSONSchemaCriterion",
    "RegexCriterion",
    "check_criteria",
    "parse_criteria",
]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def check(self, output: Any, reference: Any) -> CheckResult:
        """Run this criterion on ``output`` (``reference`` is used only by ``exact``)."""
        raise NotImplementedError


class ExactCriterion(_Spec):
    """``{"type": "exact"}``: the output equals ``value`` (default: the reference)."""

    type: Literal["exact"]
    value: Any = None
    case_sensitive: bool = True
    strip: bool = False

    def check(self, output: Any, reference: Any) -> CheckResult:
        """Compare with ``value`` when set, else with the reference."""
        expected = reference if self.value is None else self.value
        return exact(output, expected, case_sensitive=self.case_sensitive, strip=self.strip)


class ContainsCriterion(_Spec):
    """``{"type": "contains", "value": "x"}``: ``value`` occurs in the output."""

    type: Literal["contains"]
    value: str
    case_sensitive: bool = True

    def check(self, output: Any, reference: Any) -> CheckResult:
        """See `stateval.checks.contains`."""
        return contains(output, self.value, case_sensitive=self.case_sensitive)


class ContainsAnyCriterion(_Spec):
    """``{"type": "contains_any", "keywords": [...]}``: at least one keyword occurs."""

    type: Literal["contains_any"]
    keywords: list[str] = Field(min_length=1)
    case_sensitive: bool = True

    def check(self, output: Any, reference: Any) -> CheckResult:
        """See `stateval.checks.contains_any`."""
        return contains_any(output, self.keywords, case_sensitive=self.case_sensitive)


class ContainsAllCriterion(_Spec):
    """``{"type": "contains_all", "keywords": [...]}``: every keyword occurs."""

    type: Literal["contains_all"]
    keywords: list[str] = Field(min_length=1)
    case_sensitive: bool = True

    def check(self, output: Any, reference: Any) -> CheckResult:
        """See `stateval.checks.contains_all`."""
        return contains_all(output, self.keywords, case_sensitive=self.case_sensitive)


class RegexCriterion(_Spec):
    """``{"type": "regex", "pattern": "..."}``: some substring matches ``pattern``."""

    model_config = ConfigDict(extra="forbid", frozen=True, ignored_types=(cached_property,))

    type: Literal["regex"]
    pattern: str
    timeout: PositiveFloat = DEFAULT_REGEX_TIMEOUT

    def model_post_init(self, context: Any, /) -> None:
        """Compile the pattern now, so a bad one fails when the criteria are parsed."""
        _ = self.compiled

    @cached_property
    def compiled(self) -> Any:
        """The compiled pattern."""
        return compile_regex(self.pattern)

    def check(self, output: Any, reference: Any) -> CheckResult:
        """See `stateval.checks.matches_regex`."""
        return matches_regex(output, self.compiled, timeout=self.timeout)


class JSONParseableCriterion(_Spec):
    """``{"type": "json_parseable"}``: the output parses as JSON."""

    type: Literal["json_parseable"]

    def check(self, output: Any, reference: Any) -> CheckResult:
        """See `stateval.checks.json_parseable`."""
        return json_parseable(output)


class JSONSchemaCriterion(_Spec):
    """``{"type": "json_schema", "schema": {...}}``: the output is valid against the schema."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, ignored_types=(cached_property,)
    )

    type: Literal["json_schema"]
    json_schema_: dict[str, Any] | bool = Field(alias="schema")
    parse: bool = True
    timeout: PositiveFloat = DEFAULT_REGEX_TIMEOUT

    def model_post_init(self, context: Any, /) -> None:
        """Check the schema now, so an invalid one fails when the criteria are parsed."""
        _ = self.validator

    @cached_property
    def validator(self) -> Validator:
        """The compiled schema validator."""
        return compile_schema(self.json_schema_)

    def check(self, output: Any, reference: Any) -> CheckResult:
        """See `stateval.checks.json_schema`."""
        return json_schema(output, self.validator, parse=self.parse, timeout=self.timeout)


Criterion: TypeAlias = Annotated[
    ExactCriterion
    | ContainsCriterion
    | ContainsAnyCriterion
    | ContainsAllCriterion
    | RegexCriterion
    | JSONParseableCriterion
    | JSONSchemaCriterion,
    Field(discriminator="type"),
]

_ADAPTER: TypeAdapter[Criterion] = TypeAdapter(Criterion)


def _one_line(exc: ValidationError) -> str:
    error = exc.errors()[0]
    loc = ".".join(str(part) for part in error["loc"][1:])
    where = f"{loc}: " if loc else ""
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}{error['msg']}{more}"


def parse_criteria(specs: Sequence[Mapping[str, Any] | Criterion]) -> list[Criterion]:
    """Validate criterion dicts (``extra`` keys forbidden) into `Criterion` objects.

    Raises:
        EvaluationConfigError: One line naming the criterion's index and what is wrong.

    Example:
        >>> [c.type for c in parse_criteria([{"type": "contains", "value": "x"}])]
        ['contains']
    """
    if isinstance(specs, str | bytes) or not isinstance(specs, Sequence):
        raise EvaluationConfigError(f"criteria must be a list, not {type(specs).__name__}")
    criteria: list[Criterion] = []
    for index, spec in enumerate(specs):
        if isinstance(spec, _Spec):
            criteria.append(spec)
            continue
        if not isinstance(spec, Mapping):
            raise EvaluationConfigError(
                f"criterion {index}: must be an object, not {type(spec).__name__}"
            )
        try:
            criteria.append(_ADAPTER.validate_python(dict(spec)))
        except ValidationError as exc:
            raise EvaluationConfigError(f"criterion {index}: {_one_line(exc)}") from exc
        except EvaluationConfigError as exc:
            raise EvaluationConfigError(f"criterion {index}: {exc}") from exc
    return criteria


def check_criteria(output: Any, criteria: Sequence[Criterion], reference: Any) -> CheckResult:
    """Pass when every criterion passes; with none, when the output equals the reference.

    The score is 1 or 0; ``metrics`` has ``criteria_passed`` / ``criteria_total``.

    Example:
        >>> crit = parse_criteria([{"type": "contains", "value": "Paris"}])
        >>> check_criteria("Paris, France", crit, reference="").passed
        True
    """
    if not criteria:
        result = exact(output, reference)
        return CheckResult(
            "criteria",
            result.score,
            result.passed,
            result.label,
            result.explanation,
            {"criteria_passed": float(result.passed), "criteria_total": 1},
        )
    results = [c.check(output, reference) for c in criteria]
    failures = [(i, r) for i, r in enumerate(results) if not r.passed]
    passed = not failures
    if passed:
        explanation = f"all {len(results)} criteria passed"
    else:
        explanation = "; ".join(f"criterion {i} ({r.name}): {r.explanation}" for i, r in failures)
    return CheckResult(
        "criteria",
        float(passed),
        passed,
        "pass" if passed else "fail",
        explanation,
        {"criteria_passed": len(results) - len(failures), "criteria_total": len(results)},
    )
