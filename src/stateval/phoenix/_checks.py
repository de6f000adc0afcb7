"""Rule checks (`stateval.checks`) as ``phoenix.evals`` code evaluators.

Two kinds:

* Parity evaluators named like Phoenix's pre-built ones (`ContainsAnyKeyword` →
  ``ContainsAny([...])``, `MatchesRegex` → ``matches_(<pattern>)``, `JSONParsable`...). With no
  ``path`` they check the whole task output (non-strings read as canonical JSON); with ``path``
  they check that field of the output's post-state and are named ``check:<path>:<check>``.
* `check_evaluator`: one criterion (``{"type": "regex", "pattern": ...}``, see
  `stateval.checks.parse_criteria`) or check function applied to one field, named
  ``check:<path>:<name>``.

The score is the check's score, the label its label (``pass`` / ``fail`` / ``missing`` /
``timeout``...), the explanation its sentence. A failed task output scores 0.0 with label
``error``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from phoenix.evals import Evaluator, Score

import stateval.checks as checks
from stateval.checks import CheckResult, Criterion, field_value, parse_criteria
from stateval.errors import EvaluationConfigError, FieldNotFoundError, StateError
from stateval.phoenix._evaluators import code_evaluator, error_score
from stateval.state import validate_path
from stateval.wire import coerce_state, task_error

__all__ = [
    "CheckSpec",
    "check_evaluator",
    "check_evaluators",
    "contains_all_keywords",
    "contains_any_keyword",
    "contains_keyword",
    "exact_match",
    "json_parseable",
    "json_schema",
    "matches_regex",
]

CheckSpec: TypeAlias = "Mapping[str, Any] | Criterion | Callable[[Any], CheckResult]"
"""A criterion dict (``{"type": "contains", "value": "x"}``), a parsed `Criterion`, or a function
``value -> CheckResult``."""


def _score(result: CheckResult) -> Score:
    return Score(
        score=result.score,
        label=result.label,
        explanation=result.explanation,
        metadata=dict(result.metrics),
    )


def _missing(path: str, side: str = "") -> Score:
    return Score(score=0.0, label="missing", explanation=f"field {path!r} has no {side}value")


def _target(output: Any, path: str | None) -> tuple[Any, None] | tuple[None, Score]:
    """The value to check (whole output, or one post-state field), or the score to give."""
    error = task_error(output)
    if error is not None:
        return None, error_score(f"task failed: {error}")
    if path is None:
        return output, None
    try:
        state = coerce_state(output, what="output")
    except StateError as exc:
        return None, error_score(str(exc))
    try:
        return field_value(state, path), None
    except FieldNotFoundError:
        return None, _missing(path)


def _output_check(
    name: str, path: str | None, kind: str, check: Callable[[Any], CheckResult]
) -> Evaluator:
    if path is not None:
        validate_path(path)
    full = name if path is None else f"check:{path}:{kind}"

    def evaluate(output: Any) -> Score:
        value, problem = _target(output, path)
        if problem is not None:
            return problem
        return _score(check(value))

    return code_evaluator(full, ("output",), evaluate)


def contains_keyword(
    keyword: str, *, path: str | None = None, case_sensitive: bool = True, name: str | None = None
) -> Evaluator:
    """Passes when ``keyword`` occurs (Phoenix `ContainsKeyword`; default name
    ``Contains('<keyword>')``)."""
    return _output_check(
        name or f"Contains({keyword!r})",
        path,
        "contains",
        lambda v: checks.contains(v, keyword, case_sensitive=case_sensitive),
    )


def contains_any_keyword(
    keywords: Sequence[str],
    *,
    path: str | None = None,
    case_sensitive: bool = True,
    name: str | None = None,
) -> Evaluator:
    """Passes when any keyword occurs (Phoenix `ContainsAnyKeyword`; default name
    ``ContainsAny([...])``).

    Example:
        >>> ev = contains_any_keyword(["disclaimer"])
        >>> ev.evaluate({"output": "see the disclaimer"})[0].score
        1.0
    """
    words = list(keywords)
    if not words:
        raise EvaluationConfigError("contains_any_keyword needs at least one keyword")
    return _output_check(
        name or f"ContainsAny({words})",
        path,
        "contains_any",
        lambda v: checks.contains_any(v, words, case_sensitive=case_sensitive),
    )


def contains_all_keywords(
    keywords: Sequence[str],
    *,
    path: str | None = None,
    case_sensitive: bool = True,
    name: str | None = None,
) -> Evaluator:
    """Passes when every keyword occurs (Phoenix `ContainsAllKeywords`; default name
    ``ContainsAll([...])``)."""
    words = list(keywords)
    if not words:
        raise EvaluationConfigError("contains_all_keywords needs at least one keyword")
    return _output_check(
        name or f"ContainsAll({words})",
        path,
        "contains_all",
        lambda v: checks.contains_all(v, words, case_sensitive=case_sensitive),
    )


def matches_regex(
    pattern: checks.RegexPattern,
    *,
    path: str | None = None,
    timeout: float = checks.DEFAULT_REGEX_TIMEOUT,
    name: str | None = None,
) -> Evaluator:
    """Passes when some substring matches ``pattern`` (Phoenix `MatchesRegex`; default name
    ``matches_(<pattern>)``). A search running past ``timeout`` seconds fails with label
    ``timeout``.

    Raises:
        EvaluationConfigError: The pattern does not compile.
    """
    compiled = checks.compile_regex(pattern)
    return _output_check(
        name or f"matches_({compiled.pattern})",
        path,
        "matches_regex",
        lambda v: checks.matches_regex(v, compiled, timeout=timeout),
    )


def json_parseable(*, path: str | None = None, name: str | None = None) -> Evaluator:
    """Passes when the value parses as JSON (Phoenix `JSONParsable`; default name
    ``JSONParsable``)."""
    return _output_check(name or "JSONParsable", path, "json_parseable", checks.json_parseable)


def json_schema(
    schema: Mapping[str, Any] | bool,
    *,
    path: str | None = None,
    parse: bool = True,
    name: str | None = None,
) -> Evaluator:
    """Passes when the value is valid against a JSON Schema (default name ``JSONSchema``).

    Raises:
        EvaluationConfigError: The schema itself is invalid.
    """
    validator = checks.compile_schema(schema)
    return _output_check(
        name or "JSONSchema",
        path,
        "json_schema",
        lambda v: checks.json_schema(v, validator, parse=parse),
    )


def exact_match(
    path: str,
    *,
    value: Any = None,
    case_sensitive: bool = True,
    strip: bool = False,
    name: str | None = None,
) -> Evaluator:
    """Passes when the field at ``path`` equals ``value`` (default: the expected field) as text.

    For whole states use `overall_match`; named ``check:<path>:exact`` unless ``name`` is given.
    """
    spec: dict[str, Any] = {"type": "exact", "case_sensitive": case_sensitive, "strip": strip}
    if value is not None:
        spec["value"] = value
    return check_evaluator(path, spec, name=name)


def _spec_name(spec: object) -> str:
    kind = getattr(spec, "type", None)
    if isinstance(kind, str):
        return kind
    while isinstance(spec, functools.partial):
        spec = spec.func
    return str(getattr(spec, "__name__", type(spec).__name__))


def check_evaluator(path: str, spec: CheckSpec, *, name: str | None = None) -> Evaluator:
    """One check on the field ``path`` of the output's post-state, named
    ``check:<path>:<check>`` (or ``name``).

    A criterion's reference (used by ``exact`` without a ``value``) is the same field of the
    expected post-state; ``expected`` is optional, so the check runs on outputs with no gold
    (production spans) too. A field the output lacks scores 0.0 with label ``missing``.

    Raises:
        EvaluationConfigError: The criterion is invalid (checked now, not mid-run).
    """
    validate_path(path)
    criterion: Criterion | None = None
    func: Callable[[Any], CheckResult] | None = None
    if callable(spec):
        func = spec
    else:
        criterion = parse_criteria([spec])[0]
    full = name or f"check:{path}:{_spec_name(criterion if criterion is not None else spec)}"

    def evaluate(output: Any, expected: Any = None) -> Score:
        value, problem = _target(output, path)
        if problem is not None:
            return problem
        if func is not None:
            return _score(func(value))
        assert criterion is not None
        try:
            reference = field_value(coerce_state(expected, what="expected"), path)
        except (StateError, FieldNotFoundError):
            reference = None
        return _score(criterion.check(value, reference))

    return code_evaluator(full, ("output", "expected"), evaluate, optional=("expected",))


def check_evaluators(checks_by_path: Mapping[str, Sequence[CheckSpec]]) -> list[Evaluator]:
    """`check_evaluator` for every ``{path: [spec, ...]}`` entry; a repeated check on one path
    gets ``#2``, ``#3``... appended to its name."""
    out: list[Evaluator] = []
    seen: dict[str, int] = {}
    for path, specs in checks_by_path.items():
        if isinstance(specs, str | bytes | Mapping) or not isinstance(specs, Sequence):
            raise EvaluationConfigError(f"checks for {path!r} must be a list of check specs")
        for spec in specs:
            evaluator = check_evaluator(path, spec)
            count = seen.get(evaluator.name, 0) + 1
            seen[evaluator.name] = count
            if count > 1:
                evaluator = check_evaluator(path, spec, name=f"{evaluator.name}#{count}")
            out.append(evaluator)
    return out
