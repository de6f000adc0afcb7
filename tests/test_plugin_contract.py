"""The stable plugin API of seed 002: a plugin written against it keeps working across releases.

Changing anything pinned here is a breaking change and must be called out in the changelog.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stateval import InterpretiveState
from stateval.errors import PluginError
from stateval.mutation import (
    EVALS,
    OPERATORS,
    PLUGIN_GROUP,
    PROBES,
    EvalOutcome,
    Mutant,
    ProbeContext,
    ProbeResult,
    as_system,
    case_get,
    generate_mutants,
    load_plugins,
    register_eval,
    register_operator,
    register_probe,
    scorer_to_eval,
)
from stateval.mutation._evals import run_eval

EMPTY = inspect.Parameter.empty


def params(fn: Callable[..., Any]) -> list[tuple[str, Any]]:
    """``(name, default)`` of each parameter, in order."""
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def test_signatures_are_pinned() -> None:
    assert params(register_operator) == [("name", EMPTY), ("fn", EMPTY)]
    assert params(register_probe) == [("name", EMPTY), ("fn", EMPTY)]
    assert params(Mutant) == [
        ("operator", EMPTY),
        ("description", EMPTY),
        ("system", EMPTY),
        ("target", "prompt"),
    ]
    assert [name for name, _ in params(ProbeResult)] == [
        "name",
        "ok",
        "summary",
        "detail",
        "metrics",
    ]
    assert params(ProbeResult)[3] == ("detail", None)
    assert ProbeResult("p", True, "fine").metrics == {}
    assert params(EvalOutcome) == [
        ("passed", EMPTY),
        ("name", None),
        ("score", None),
        ("threshold", None),
    ]
    assert params(scorer_to_eval) == [("fn", EMPTY), ("threshold", EMPTY), ("name", None)]
    assert params(case_get) == [("case", EMPTY), ("key", EMPTY)]
    assert params(as_system) == [("target", EMPTY)]
    assert PLUGIN_GROUP == "stateval.plugins"


@pytest.fixture
def registered() -> Any:
    """Names registered by a test, removed afterwards."""
    names: list[tuple[dict[str, Any], str]] = []
    yield names
    for registry, name in names:
        registry.pop(name, None)


def test_the_seed_operator_example_runs(registered: list[tuple[dict[str, Any], str]]) -> None:
    def shout(target: Any) -> list[Mutant]:
        sys_ = as_system(target)
        assert sys_.prompt is not None
        return [
            Mutant(
                operator="shout",
                description="UPPERCASED the whole prompt",
                system=sys_.with_prompt(sys_.prompt.upper()),
            )
        ]

    register_operator("shout", shout)
    registered.append((OPERATORS, "shout"))
    (mutant,) = generate_mutants("Reply politely.", operators=["shout"])
    assert (mutant.operator, mutant.target, mutant.system.prompt) == (
        "shout",
        "prompt",
        "REPLY POLITELY.",
    )
    assert any(m.operator == "shout" for m in generate_mutants("Reply politely."))  # by default
    with pytest.raises(PluginError, match="'shout' is already registered"):
        register_operator("shout", shout)
    with pytest.raises(PluginError, match="'drop_field' is already registered"):
        register_operator("drop_field", shout)


async def test_the_seed_eval_shapes_work() -> None:
    state = InterpretiveState.from_flat({"price": "$12"})
    case = {"id": "c1", "expected": "$12"}

    def mentions_price(output: InterpretiveState, case: Any) -> EvalOutcome:
        return EvalOutcome(passed="$" in str(output.to_flat()), name="mentions_price")

    def plain(output: InterpretiveState, case: Any) -> bool:
        return case_get(case, "expected") == output.best("price").value  # type: ignore[union-attr]

    assert await run_eval(mentions_price, state, case) == (
        EvalOutcome(True, "mentions_price"),
        None,
    )
    assert await run_eval(plain, state, case) == (EvalOutcome(True, "plain"), None)

    class Metric:
        is_llm = True

        async def score(self, output: InterpretiveState, case: Any) -> float:
            return 0.72

    faithfulness = scorer_to_eval(Metric().score, threshold=0.7, name="faithfulness")
    assert getattr(faithfulness, "is_llm", False) is True
    outcome, error = await run_eval(faithfulness, state, case)
    assert error is None
    assert outcome == EvalOutcome(True, "faithfulness", 0.72, 0.7)
    assert outcome.margin == pytest.approx(0.02)
    with pytest.raises(PluginError, match="eval 'provenance' is already registered"):
        register_eval("provenance", plain)


def test_case_get_reads_dicts_objects_and_metadata() -> None:
    class Case:
        def __init__(self) -> None:
            self.id = "c1"
            self.metadata = {"unanswerable": True}

    assert case_get({"id": "c1"}, "id") == "c1"
    assert case_get({"metadata": {"unanswerable": True}}, "unanswerable") is True
    assert case_get(Case(), "id") == "c1"
    assert case_get(Case(), "unanswerable") is True
    assert case_get(Case(), "absent") is None


def test_the_seed_probe_example_runs(
    tmp_path: Path, registered: list[tuple[dict[str, Any], str]]
) -> None:
    def has_negative_case(config: ProbeContext) -> ProbeResult:
        ok = any(c.expected_post_state == c.pre_state for c in config.cases)
        return ProbeResult(
            name="has_negative_case",
            ok=ok,
            summary="suite includes a no-change case" if ok else "no negative case",
            detail="Add a case whose input changes nothing.",
        )

    register_probe("has_negative_case", has_negative_case)
    registered.append((PROBES, "has_negative_case"))
    assert PROBES["has_negative_case"] is has_negative_case
    with pytest.raises(PluginError, match="already registered"):
        register_probe("field_coverage", has_negative_case)


PLUGIN = """
from stateval.mutation import Mutant, as_system, register_eval, register_operator, register_probe
from stateval.mutation import ProbeResult


def upper(target):
    s = as_system(target)
    if s.prompt is None:
        return []
    return [Mutant("demo_upper", "uppercased", s.with_prompt(s.prompt.upper()))]


def register():
    register_operator("demo_upper", upper)
    register_probe("demo_probe", lambda config: ProbeResult("demo_probe", True, "fine"))
    register_eval("demo_eval", lambda output, case: True)
"""


def _distribution(folder: Path, name: str, entry: str) -> None:
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{PLUGIN_GROUP}]\n{entry}\n")


def test_plugins_are_found_through_the_entry_point_group(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    registered: list[tuple[dict[str, Any], str]],
) -> None:
    (tmp_path / "stateval_demo_plugin.py").write_text(PLUGIN, encoding="utf-8")
    _distribution(tmp_path, "stateval_demo_plugin", "demo = stateval_demo_plugin:register")
    monkeypatch.syspath_prepend(str(tmp_path))
    registered.extend([(OPERATORS, "demo_upper"), (PROBES, "demo_probe"), (EVALS, "demo_eval")])
    try:
        assert "demo" in load_plugins()
        assert {"demo_upper", "demo_probe", "demo_eval"} <= {*OPERATORS, *PROBES, *EVALS}
        assert "demo" not in load_plugins()  # loaded once
        (mutant,) = generate_mutants("quiet", ["demo_upper"])
        assert mutant.system.prompt == "QUIET"
    finally:
        sys.modules.pop("stateval_demo_plugin", None)


def test_a_plugin_that_cannot_load_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _distribution(tmp_path, "stateval_broken_plugin", "broken = stateval_no_such_module:register")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match=r"plugin 'broken' .* cannot be loaded"):
        load_plugins()


def test_the_seed_root_imports_work_from_stateval() -> None:
    # seed 002: `from muteval import as_system` / `from muteval import EvalOutcome`
    import stateval
    from stateval.mutation import EvalOutcome as MutationEvalOutcome
    from stateval.mutation import as_system as mutation_as_system

    assert stateval.as_system is mutation_as_system
    assert stateval.EvalOutcome is MutationEvalOutcome
