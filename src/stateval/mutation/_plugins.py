"""Registries of operators, probes and evals, and the ``stateval.plugins`` entry-point group.

Each registry is a plain dict from name to callable, filled with the built-ins; `register_*`
adds to it and refuses a name already taken. Registered operators and probes run by default;
registered evals run when named (``--eval NAME``). A plugin package lists, in the
``stateval.plugins`` entry-point group, a module (registering on import) or a function taking no
arguments that calls `register_operator` / `register_probe` / `register_eval`;
`load_plugins` imports them (the ``mutate`` command calls it; nothing does at import time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from importlib.metadata import entry_points
from typing import Any

from stateval.errors import PluginError
from stateval.mutation._evals import Eval, provenance_eval
from stateval.mutation._mutant import Mutant, Operator, RatedOperator, Severity
from stateval.mutation._probes import BUILTIN_PROBES, Probe
from stateval.mutation._prompt_operators import PROMPT_OPERATORS
from stateval.mutation._state_operators import STATE_OPERATORS
from stateval.mutation._system import as_system

__all__ = [
    "EVALS",
    "OPERATORS",
    "PLUGIN_GROUP",
    "PROBES",
    "generate_mutants",
    "load_plugins",
    "register_eval",
    "register_operator",
    "register_probe",
    "resolve_operators",
]

PLUGIN_GROUP = "stateval.plugins"

OPERATORS: dict[str, Operator] = {**STATE_OPERATORS, **PROMPT_OPERATORS}
"""Every operator by name: the built-ins, then what was registered."""

PROBES: dict[str, Probe] = dict(BUILTIN_PROBES)
"""Every probe by name: the built-ins, then what was registered."""

EVALS: dict[str, Eval] = {"provenance": provenance_eval}
"""Evals that ``--eval NAME`` can select: the built-ins, then what was registered."""

_LOADED: set[str] = set()


def _register(kind: str, registry: dict[str, Any], name: str, fn: Callable[..., Any]) -> None:
    if not isinstance(name, str) or not name or "," in name:
        raise PluginError(f"an {kind} name is a non-empty string without commas, got {name!r}")
    if not callable(fn):
        raise PluginError(f"{kind} {name!r} is not callable: {fn!r}")
    if name in registry:
        raise PluginError(f"{kind} {name!r} is already registered ({registry[name]!r})")
    registry[name] = fn


def register_operator(name: str, fn: Operator) -> None:
    """Register ``fn(target) -> list[Mutant]`` under ``name``; it then runs by default.

    A `RatedOperator` (``RatedOperator(fn, "high")``) carries how bad its survivors are;
    a bare function's survivors are rated by their mutant's ``target``.

    Raises:
        PluginError: ``name`` is taken, or ``fn`` is not callable.
    """
    _register("operator", OPERATORS, name, fn)


def operator_severity(name: str) -> Severity | None:
    """The severity the operator registered under ``name`` carries (None: it carries none)."""
    op = OPERATORS.get(name)
    return op.severity if isinstance(op, RatedOperator) else None


def register_probe(name: str, fn: Probe) -> None:
    """Register ``fn(config) -> ProbeResult`` under ``name``; it then runs by default.

    Raises:
        PluginError: ``name`` is taken, or ``fn`` is not callable.
    """
    _register("probe", PROBES, name, fn)


def register_eval(name: str, fn: Eval) -> None:
    """Register ``fn(output, case) -> bool | EvalOutcome`` so ``--eval NAME`` can select it.

    Raises:
        PluginError: ``name`` is taken, or ``fn`` is not callable.
    """
    _register("eval", EVALS, name, fn)


def load_plugins(group: str = PLUGIN_GROUP) -> tuple[str, ...]:
    """Import every plugin of the entry-point ``group`` not loaded yet; return their names.

    Raises:
        PluginError: A plugin cannot be imported, or its registration function raised.
    """
    loaded: list[str] = []
    for ep in entry_points(group=group):
        key = f"{ep.name}={ep.value}"
        if key in _LOADED:
            continue
        try:
            obj = ep.load()
        except Exception as exc:
            raise PluginError(
                f"plugin {ep.name!r} ({ep.value}) cannot be loaded: {type(exc).__name__}: {exc}"
            ) from exc
        _LOADED.add(key)
        if callable(obj):
            try:
                obj()
            except PluginError:
                raise
            except Exception as exc:
                raise PluginError(
                    f"plugin {ep.name!r} ({ep.value}) raised {type(exc).__name__}: {exc}"
                ) from exc
        loaded.append(ep.name)
    return tuple(loaded)


def resolve_operators(
    selection: Iterable[str | Operator] | str | None = None,
) -> list[tuple[str, Operator]]:
    """``(name, operator)`` pairs: every registered operator when ``selection`` is None, else the
    named ones (a comma-separated string or a list of names and callables), in that order.

    Raises:
        PluginError: A name is not registered.
    """
    if selection is None:
        return list(OPERATORS.items())
    items: Sequence[str | Operator] = (
        [s.strip() for s in selection.split(",") if s.strip()]
        if isinstance(selection, str)
        else list(selection)
    )
    out: list[tuple[str, Operator]] = []
    for item in items:
        if isinstance(item, str):
            if item not in OPERATORS:
                raise PluginError(
                    f"unknown operator {item!r} (known: {', '.join(sorted(OPERATORS))})"
                )
            out.append((item, OPERATORS[item]))
        elif callable(item):
            out.append((getattr(item, "__name__", type(item).__name__), item))
        else:
            raise PluginError(f"an operator is a name or a callable, got {item!r}")
    return out


def generate_mutants(
    system: Any,
    operators: Iterable[str | Operator] | str | None = None,
    *,
    seed: int | None = None,
    max_mutants: int | None = None,
) -> list[Mutant]:
    """Every mutant the operators make of ``system``, in operator order.

    Args:
        system: A `System`, a mutator or a bare prompt (see `as_system`).
        operators: Names or callables (default: every registered operator).
        seed: Replaces the system's seed (operators' random choices and the sample).
        max_mutants: Keep a random sample of this many (seeded), in their original order.

    Raises:
        PluginError: An operator raised or returned something other than a list of `Mutant`.
    """
    target = as_system(system)
    if seed is not None:
        target = replace(target, seed=seed)
    mutants: list[Mutant] = []
    for name, fn in resolve_operators(operators):
        try:
            made = fn(target)
        except Exception as exc:
            raise PluginError(f"operator {name!r} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(made, list) or not all(isinstance(m, Mutant) for m in made):
            raise PluginError(f"operator {name!r} must return a list of Mutant, got {made!r}")
        mutants.extend(made)
    if max_mutants is not None and len(mutants) > max_mutants:
        keep = sorted(target.rng("sample").sample(range(len(mutants)), max_mutants))
        mutants = [mutants[i] for i in keep]
    return mutants
