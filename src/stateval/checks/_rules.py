"""Rule checks: exact match, keyword containment, regex, JSON and JSON Schema.

`contains`, `contains_any`, `contains_all`, `matches_regex` and `json_parseable` follow Phoenix's
pre-built code evaluators (``phoenix/experiments/evaluators/code_evaluators.py``: `ContainsKeyword`,
`ContainsAnyKeyword`, `ContainsAllKeywords`, `MatchesRegex`, `JSONParsable`): same pass rule, same
explanation text, and case-sensitive by default (Phoenix tests ``keyword in output``). Where
Phoenix asserts that the output is a string, these checks first turn any value into text with
`as_text`.

Regexes run on the ``regex`` package, a drop-in for :mod:`re` whose matching takes a ``timeout``:
a pattern that backtracks catastrophically fails the check with a ``"timeout"`` label instead of
hanging the run. (google-re2 cannot backtrack at all, but it rejects backreferences and lookaround,
so patterns written for Phoenix's ``re``-based `MatchesRegex` would stop compiling.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import jsonschema
import regex
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from referencing.exceptions import Unresolvable

from stateval.checks._result import CheckResult, binary, failed
from stateval.checks._schema_regex import RegexTimeout, regex_deadline, timed_validator_class
from stateval.checks._text import as_text, fold
from stateval.errors import EvaluationConfigError

__all__ = [
    "DEFAULT_REGEX_TIMEOUT",
    "RegexPattern",
    "compile_regex",
    "compile_schema",
    "contains",
    "contains_all",
    "contains_any",
    "exact",
    "json_parseable",
    "json_schema",
    "matches_regex",
]

#: Seconds a regex search may run before the check fails with label ``"timeout"``.
DEFAULT_REGEX_TIMEOUT = 1.0

RegexPattern: TypeAlias = "str | regex.Pattern[str] | re.Pattern[str]"

_MAX_LISTED = 20


def exact(
    output: Any, expected: Any, *, case_sensitive: bool = True, strip: bool = False
) -> CheckResult:
    """Pass when ``output`` equals ``expected`` as text (no normalisation by default).

    Example:
        >>> exact("Paris", "paris", case_sensitive=False).passed
        True
    """
    out, exp = as_text(output), as_text(expected)
    if strip:
        out, exp = out.strip(), exp.strip()
    if not case_sensitive:
        out, exp = fold(out), fold(exp)
    equal = out == exp
    verdict = "equals" if equal else "does not equal"
    return binary("exact", equal, f"the output {verdict} the expected value {as_text(expected)!r}")


def _prepare(output: Any, keywords: Sequence[str], case_sensitive: bool) -> tuple[str, list[str]]:
    text = as_text(output)
    if case_sensitive:
        return text, list(keywords)
    return fold(text), [fold(k) for k in keywords]


def contains(output: Any, keyword: str, *, case_sensitive: bool = True) -> CheckResult:
    """Pass when ``keyword`` occurs in the output (Phoenix `ContainsKeyword`).

    Example:
        >>> contains("Order shipped", "shipped").explanation
        "the string 'shipped' was found in the output"
    """
    text, (needle,) = _prepare(output, [keyword], case_sensitive)
    found = needle in text
    where = "found" if found else "not found"
    return binary("contains", found, f"the string {keyword!r} was {where} in the output")


def contains_any(
    output: Any, keywords: Sequence[str], *, case_sensitive: bool = True
) -> CheckResult:
    """Pass when at least one keyword occurs in the output (Phoenix `ContainsAnyKeyword`).

    Example:
        >>> contains_any("see the disclaimer", ["disclaimer", "warranty"]).explanation
        "the keywords ['disclaimer'] were found in the output"
    """
    keywords = list(keywords)
    text, needles = _prepare(output, keywords, case_sensitive)
    found = [k for k, n in zip(keywords, needles, strict=True) if n in text]
    if found:
        explanation = f"the keywords {found} were found in the output"
    else:
        explanation = f"none of the keywords {keywords} were found in the output"
    return binary("contains_any", bool(found), explanation, found=len(found))


def contains_all(
    output: Any, keywords: Sequence[str], *, case_sensitive: bool = True
) -> CheckResult:
    """Pass when every keyword occurs in the output (Phoenix `ContainsAllKeywords`).

    Example:
        >>> contains_all("red and blue", ["red", "green"]).explanation
        "the keywords ['green'] were not found in the output"
    """
    keywords = list(keywords)
    text, needles = _prepare(output, keywords, case_sensitive)
    missing = [k for k, n in zip(keywords, needles, strict=True) if n not in text]
    if missing:
        explanation = f"the keywords {missing} were not found in the output"
    else:
        explanation = f"all of the keywords {keywords} were found in the output"
    return binary("contains_all", not missing, explanation, missing=len(missing))


_RE_FLAGS = (
    (re.IGNORECASE, regex.IGNORECASE),
    (re.MULTILINE, regex.MULTILINE),
    (re.DOTALL, regex.DOTALL),
    (re.VERBOSE, regex.VERBOSE),
    (re.ASCII, regex.ASCII),
)


def compile_regex(pattern: RegexPattern) -> regex.Pattern[str]:
    """Compile ``pattern`` with the ``regex`` package; a bad pattern is an `EvaluationConfigError`.

    A compiled :mod:`re` pattern is recompiled with the same flags.
    """
    if isinstance(pattern, regex.Pattern):
        return pattern
    flags = 0
    if isinstance(pattern, re.Pattern):
        flags = sum(ours for theirs, ours in _RE_FLAGS if pattern.flags & theirs)
        pattern = pattern.pattern
    if not isinstance(pattern, str):
        raise EvaluationConfigError(f"regex pattern must be a string, not {type(pattern).__name__}")
    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        raise EvaluationConfigError(f"invalid regex pattern {pattern!r}: {exc}") from exc


def matches_regex(
    output: Any, pattern: RegexPattern, *, timeout: float = DEFAULT_REGEX_TIMEOUT
) -> CheckResult:
    """Pass when some substring of the output matches ``pattern`` (Phoenix `MatchesRegex`).

    Like Phoenix, the explanation lists what ``findall`` returns (the groups, when the pattern has
    any); past 20 matches it lists the first 20. A search that runs longer than ``timeout``
    seconds fails with label ``"timeout"``.

    Example:
        >>> matches_regex("due 2024-05-01", r"\\d{4}-\\d{2}-\\d{2}").explanation
        "the substrings ['2024-05-01'] matched the regex pattern \\\\d{4}-\\\\d{2}-\\\\d{2}"
    """
    compiled = compile_regex(pattern)
    text = as_text(output)
    try:
        matches = compiled.findall(text, timeout=timeout)
    except TimeoutError:
        return failed(
            "matches_regex",
            "timeout",
            f"the regex pattern {compiled.pattern} timed out after {timeout:g}s on a "
            f"{len(text)}-character output (likely catastrophic backtracking)",
        )
    if matches:
        shown = matches if len(matches) <= _MAX_LISTED else [*matches[:_MAX_LISTED], "..."]
        explanation = f"the substrings {shown} matched the regex pattern {compiled.pattern}"
    else:
        explanation = f"no substrings matched the regex pattern {compiled.pattern}"
    return binary("matches_regex", bool(matches), explanation, matches=len(matches))


def json_parseable(output: Any) -> CheckResult:
    """Pass when the output parses as JSON with :func:`json.loads` (Phoenix `JSONParsable`).

    Example:
        >>> json_parseable('{"ok": true}').passed
        True
    """
    text = as_text(output)
    try:
        json.loads(text)
    except ValueError as exc:
        return binary("json_parseable", False, f"the output is not valid JSON: {exc}")
    return binary("json_parseable", True, "the output is valid JSON")


def compile_schema(schema: Mapping[str, Any] | bool) -> Validator:
    """A validator for ``schema`` (its ``$schema`` draft, else the latest).

    Its ``pattern``, ``patternProperties`` and ``additionalProperties`` keywords match with the
    ``regex`` package under `json_schema`'s timeout instead of :mod:`re`, which cannot be stopped.

    Raises:
        EvaluationConfigError: The schema itself is invalid.
    """
    if not isinstance(schema, Mapping | bool):
        raise EvaluationConfigError(
            f"a JSON schema is an object or a boolean, not {type(schema).__name__}"
        )
    if isinstance(schema, Mapping):
        schema = dict(schema)
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)  # type: ignore[arg-type]
    except SchemaError as exc:
        raise EvaluationConfigError(
            f"invalid JSON schema at {exc.json_path}: {exc.message}"
        ) from exc
    validator: Validator = timed_validator_class(cls)(schema, format_checker=cls.FORMAT_CHECKER)
    return validator


def json_schema(
    output: Any,
    schema: Validator | Mapping[str, Any] | bool,
    *,
    parse: bool = True,
    timeout: float = DEFAULT_REGEX_TIMEOUT,
) -> CheckResult:
    """Pass when the output is valid against a JSON Schema.

    A string output is parsed as JSON first (unless ``parse=False``); any other value is
    validated as it is. The explanation names the JSON path and message of up to three errors.
    The schema's regexes (``pattern``, ``patternProperties``) share ``timeout`` seconds: past it
    the check fails with label ``"timeout"`` (a validator not made by `compile_schema` is
    rebuilt so that this holds).

    Example:
        >>> schema = {"type": "object", "properties": {"age": {"type": "integer"}}}
        >>> json_schema('{"age": "x"}', schema).explanation
        "1 schema error: at $.age: 'x' is not of type 'integer'"
    """
    validator = compile_schema(schema) if isinstance(schema, Mapping | bool) else schema
    if not getattr(validator, "timed_regex", False):
        timed = timed_validator_class(type(validator))
        validator = timed(
            validator.schema, format_checker=getattr(validator, "format_checker", None)
        )
    instance = output
    if parse and isinstance(output, str):
        try:
            instance = json.loads(output)
        except ValueError as exc:
            return failed("json_schema", "invalid_json", f"the output is not valid JSON: {exc}")
    try:
        with regex_deadline(timeout):
            found = list(validator.iter_errors(instance))
    except Unresolvable as exc:
        return failed("json_schema", "schema_error", f"the schema has an unresolvable $ref: {exc}")
    except RegexTimeout as exc:
        return failed(
            "json_schema",
            "timeout",
            f"{exc} after {timeout:g}s (likely catastrophic backtracking)",
        )
    except RecursionError:
        return failed("json_schema", "invalid_json", "the output nests too deeply to validate")
    errors = sorted(found, key=lambda e: (e.json_path, e.message))
    if not errors:
        return binary("json_schema", True, "the output is valid against the schema", errors=0)
    listed = "; ".join(f"at {e.json_path}: {e.message}" for e in errors[:3])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    noun = "error" if len(errors) == 1 else "errors"
    return binary(
        "json_schema", False, f"{len(errors)} schema {noun}: {listed}{more}", errors=len(errors)
    )
