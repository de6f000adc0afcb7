"""A mutation test's settings: the suite's ``mutation:`` section, overridden by the caller's.

The suite file names operators and evals; they are checked here, against the registries with
the installed plugins loaded, because plugins may register names `load_suite` cannot know. A
name that is not registered is a `SuiteProblemsError` line naming the suite file, the line and
the field, and listing the known names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stateval.errors import PluginError, StatevalError, SuiteProblemsError
from stateval.mutation._config import MutationConfig
from stateval.mutation._evals import Eval
from stateval.mutation._mutant import Operator
from stateval.mutation._plugins import EVALS, OPERATORS, load_plugins, resolve_operators
from stateval.mutators import load_callable
from stateval.suite import EpisodeMode, Suite

__all__ = ["resolve_eval", "suite_config", "suite_fail_under"]


def resolve_eval(spec: str, search_path: Sequence[Path] = ()) -> Eval:
    """The eval ``spec`` names: a registered name (`EVALS`) or ``module:attr``.

    Raises:
        PluginError: No eval of that name, or ``module:attr`` is not callable.
        MutatorLoadError: ``module:attr`` cannot be imported.
    """
    if spec in EVALS:
        return EVALS[spec]
    if ":" in spec:
        fn = load_callable(spec, search_path=list(search_path))
        if not callable(fn):
            raise PluginError("not callable")
        return fn  # type: ignore[no-any-return]
    known = ", ".join(sorted(EVALS))
    raise PluginError(f"no eval of that name (known: {known}; or module:attr)")


def _suite_operators(suite: Suite, names: Sequence[str]) -> list[str]:
    problems = [
        suite.problem(
            ("mutation", "operators", i),
            f"unknown operator {name!r} (known: {', '.join(sorted(OPERATORS))})",
        )
        for i, name in enumerate(names)
        if name not in OPERATORS
    ]
    if problems:
        raise SuiteProblemsError(problems)
    return list(names)


def _suite_evals(suite: Suite, specs: Sequence[str]) -> list[Eval]:
    out: list[Eval] = []
    problems: list[str] = []
    for i, spec in enumerate(specs):
        try:
            out.append(resolve_eval(spec, [suite.path.resolve().parent]))
        except PluginError as exc:
            problems.append(suite.problem(("mutation", "evals", i), f"{spec!r}: {exc}"))
        except StatevalError as exc:
            problems.append(suite.problem(("mutation", "evals", i), str(exc)))
    if problems:
        raise SuiteProblemsError(problems)
    return out


def _cli_evals(suite: Suite, specs: Sequence[str | Eval]) -> list[Eval]:
    out: list[Eval] = []
    for spec in specs:
        if not isinstance(spec, str):
            out.append(spec)
            continue
        try:
            out.append(resolve_eval(spec, [suite.path.resolve().parent]))
        except PluginError as exc:
            raise PluginError(f"--eval {spec}: {exc}") from exc
    return out


def suite_config(
    suite: Suite,
    *,
    operators: Sequence[str | Operator] | str | None = None,
    seed: int | None = None,
    evals: Sequence[str | Eval] | None = None,
    probes: Sequence[str] | None = None,
    concurrency: int | None = None,
    max_calls: int | None = None,
    max_mutants: int | None = None,
    limit: int | None = None,
    mode: EpisodeMode | None = None,
) -> MutationConfig:
    """The `MutationConfig` of ``suite``'s ``mutation:`` section, with every argument that is
    not None taking the place of the suite's value (``evals`` replaces the suite's list).

    Loads the installed plugins first (`load_plugins`), so the suite may name their operators
    and evals. ``concurrency`` defaults to the suite's ``concurrency``, ``seed`` to 0.

    Raises:
        SuiteProblemsError: The suite names an operator or eval that is not registered (or a
            ``module:attr`` eval that does not load), one line per name.
        PluginError: ``operators`` or ``evals`` names one that is not registered.
    """
    load_plugins()
    spec = suite.model.mutation
    if operators is not None:
        resolve_operators(operators)
    elif spec is not None and spec.operators is not None:
        operators = _suite_operators(suite, spec.operators)
    if evals is not None:
        chosen = _cli_evals(suite, evals)
    else:
        chosen = _suite_evals(suite, spec.evals) if spec is not None else []
    if spec is not None:
        seed = spec.seed if seed is None else seed
        max_calls = spec.max_calls if max_calls is None else max_calls
        max_mutants = spec.max_mutants if max_mutants is None else max_mutants
    return MutationConfig(
        operators=operators,
        seed=seed or 0,
        evals=chosen,
        probes=probes,
        concurrency=concurrency or suite.model.concurrency,
        max_calls=max_calls,
        max_mutants=max_mutants,
        limit=limit,
        mode=mode,
    )


def suite_fail_under(suite: Suite, fail_under: float | None = None) -> float | None:
    """``fail_under`` when given, else the suite's ``mutation.fail_under`` (None: no gate)."""
    if fail_under is not None:
        return fail_under
    spec = suite.model.mutation
    return None if spec is None else spec.fail_under
