"""The suite's mutator from its ``mutator:`` block: a Python callable, a replay of recorded
outputs, or an LLM mutator; `check_mutator` only checks that a Python callable imports (what
``stateval validate`` does), `build_mutator` makes it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stateval.errors import StatevalError
from stateval.mutators import Mutator, Predictions, ReplayMutator, as_mutator, load_callable
from stateval.state import InterpretiveState
from stateval.suite._cases import read_state
from stateval.suite._llm import build_llm_mutator
from stateval.suite._models import CasesSpec, SuiteModel
from stateval.suite._mutator_specs import PythonMutatorSpec, ReplayMutatorSpec
from stateval.suite._problems import display_path, format_problem

__all__ = ["build_mutator", "check_mutator"]


def check_mutator(
    model: SuiteModel, base: Path, label: str, locate: Any, problems: list[str]
) -> None:
    """Check that a Python mutator's callable can be imported; call nothing."""
    spec = model.mutator
    if not isinstance(spec, PythonMutatorSpec):
        return
    search = [base / spec.path] if spec.path else [base]
    try:
        target = load_callable(spec.callable, search_path=search)
    except StatevalError as exc:
        problems.append(
            format_problem(
                label, locate(("mutator", "callable")), None, "mutator.callable", str(exc)
            )
        )
        return
    if not callable(target) and not callable(getattr(target, "mutate", None)):
        # what `as_mutator` takes: a callable, or an object with a mutate method
        problems.append(
            format_problem(
                label,
                locate(("mutator", "callable")),
                None,
                "mutator.callable",
                "neither callable nor a mutator (an object with a mutate method)",
            )
        )


def build_mutator(
    model: SuiteModel, base: Path, label: str, locate: Any, problems: list[str]
) -> Mutator | None:
    """The suite's mutator (imported, and called with ``mutator.args`` when given); what goes
    wrong is added to ``problems`` and None returned."""
    spec = model.mutator
    if isinstance(spec, PythonMutatorSpec):
        field = "mutator.callable"
        search = [base / spec.path] if spec.path else [base]
        try:
            target = load_callable(spec.callable, search_path=search)
            if spec.args is not None:
                field = "mutator.args"
                target = target(**spec.args)
            return as_mutator(target)
        except StatevalError as exc:
            problems.append(
                format_problem(label, locate(tuple(field.split("."))), None, field, str(exc))
            )
        except Exception as exc:
            message = f"calling {spec.callable} raised {type(exc).__name__}: {exc}"
            problems.append(
                format_problem(label, locate(("mutator", "args")), None, field, message)
            )
        return None
    if isinstance(spec, ReplayMutatorSpec):
        return _build_replay(spec, model.cases, base, label, locate, problems)
    return build_llm_mutator(spec, label, locate, problems)


def _build_replay(
    spec: ReplayMutatorSpec,
    cases: CasesSpec,
    base: Path,
    label: str,
    locate: Any,
    problems: list[str],
) -> Mutator | None:
    fmt, confidence = cases.format, cases.confidence

    def parse(data: Mapping[str, Any]) -> InterpretiveState:
        return read_state(data, fmt, confidence)

    if spec.predictions is None:
        return ReplayMutator(parse)
    path = base / spec.predictions
    try:
        predictions, bad = Predictions.scan(path)
    except OSError as exc:
        message = f"cannot read {spec.predictions}: {exc.strerror or type(exc).__name__}"
        where = locate(("mutator", "predictions"))
        problems.append(format_problem(label, where, None, "mutator.predictions", message))
        return None
    where = display_path(path)
    problems.extend(format_problem(where, line, None, None, message) for line, message in bad)
    return ReplayMutator(parse, predictions) if not bad else None
