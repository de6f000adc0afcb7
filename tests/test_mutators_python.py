"""PythonMutator, as_mutator and load_callable: plain functions as the system under test."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from stateval import InterpretiveState, PythonMutator, StructuredInput, ValueConfidence
from stateval.errors import MutatorError, MutatorLoadError
from stateval.mutators import LLMMutator, as_mutator, describe_mutator, load_callable
from stateval.testing import ScriptedClient

INPUT = StructuredInput(prompt="Ada", message_id="m-1")


def set_name(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    state.add_value("name", ValueConfidence(input.prompt, 0.9, message_id=input.message_id))
    return state


async def set_name_async(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    return set_name(state, input)


@pytest.mark.parametrize("fn", [set_name, set_name_async], ids=["sync", "async"])
async def test_a_function_mutates_a_copy_and_the_caller_state_is_unchanged(fn: object) -> None:
    pre = InterpretiveState.from_flat({"city": "London"})
    before = pre.copy()
    post = await PythonMutator(fn).mutate(pre, INPUT)  # type: ignore[arg-type]
    assert pre == before
    assert post.to_flat() == {"city": "London", "name": "Ada"}
    assert post.best("name") == ValueConfidence("Ada", 0.9, message_id="m-1")


async def test_a_sync_function_runs_off_the_event_loop_thread() -> None:
    seen: list[int] = []

    def record(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        seen.append(threading.get_ident())
        return state

    await PythonMutator(record).mutate(InterpretiveState(), INPUT)
    assert seen
    assert seen[0] != threading.get_ident()


async def test_async_callable_objects_and_sync_wrappers_of_coroutines_are_awaited() -> None:
    class Filler:
        async def __call__(
            self, state: InterpretiveState, input: StructuredInput
        ) -> InterpretiveState:
            return InterpretiveState.from_flat({"by": "object"})

    post = await PythonMutator(Filler()).mutate(InterpretiveState(), INPUT)
    assert post.to_flat() == {"by": "object"}
    post = await PythonMutator(lambda s, i: set_name_async(s, i)).mutate(InterpretiveState(), INPUT)
    assert post.to_flat() == {"name": "Ada"}


async def test_a_wrong_return_type_names_the_callable() -> None:
    def forgets_to_return(state: InterpretiveState, input: StructuredInput) -> None:
        state.add_value("x", ValueConfidence(1, 1.0))

    mutator = PythonMutator(forgets_to_return)  # type: ignore[arg-type]
    with pytest.raises(MutatorError) as caught:
        await mutator.mutate(InterpretiveState(), INPUT)
    message = str(caught.value)
    assert "forgets_to_return" in message
    assert "returned NoneType, not an InterpretiveState or a flat {path: value} dict" in message


async def test_a_flat_dict_is_the_post_state() -> None:
    def tracker(state: InterpretiveState, input: StructuredInput) -> dict[str, object]:
        return {**state.to_flat(), "hotel.area": "north", "hotel.stars": 4}

    pre = InterpretiveState.from_flat({"hotel.name": "acorn"})
    post = await PythonMutator(tracker).mutate(pre, INPUT)  # type: ignore[arg-type]
    assert post.to_flat() == {"hotel.name": "acorn", "hotel.area": "north", "hotel.stars": 4}
    assert post.best("hotel.area") == ValueConfidence("north", 1.0)

    def bad_path(state: InterpretiveState, input: StructuredInput) -> dict[str, object]:
        return {"hotel..area": "north"}

    with pytest.raises(MutatorError, match=r"bad_path returned a dict that is not a flat state"):
        await PythonMutator(bad_path).mutate(pre, INPUT)  # type: ignore[arg-type]


def test_describe_names_the_wrapped_callable() -> None:
    assert PythonMutator(set_name).describe() == f"python:{__name__}:set_name"
    assert describe_mutator(set_name) == f"{__name__}:set_name"


def test_as_mutator_keeps_mutators_and_wraps_callables() -> None:
    llm = LLMMutator(ScriptedClient([]))
    assert as_mutator(llm) is llm
    wrapped = as_mutator(set_name)
    assert isinstance(wrapped, PythonMutator)
    assert wrapped.fn is set_name


async def test_as_mutator_wraps_an_object_whose_mutate_is_sync() -> None:
    class SyncMutator:
        def mutate(self, state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
            return set_name(state, input)

    pre = InterpretiveState()
    post = await as_mutator(SyncMutator()).mutate(pre, INPUT)  # type: ignore[arg-type]
    assert post.to_flat() == {"name": "Ada"}
    assert len(pre) == 0


@pytest.mark.parametrize(
    ("obj", "message"),
    [(PythonMutator, "is a class; pass an instance"), (42, "int object is not a mutator")],
)
def test_as_mutator_rejects_classes_and_non_callables(obj: object, message: str) -> None:
    with pytest.raises(MutatorError, match=message):
        as_mutator(obj)  # type: ignore[arg-type]


def test_load_callable_resolves_module_and_dotted_attribute() -> None:
    assert load_callable(f"{__name__}:set_name") is set_name
    assert load_callable("collections:OrderedDict.fromkeys") is not None
    assert load_callable(" os.path : join ") is __import__("os").path.join


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("no_colon_here", "expected 'package.module:attribute'"),
        ("os.path:", "expected 'package.module:attribute'"),
        ("stateval_no_such_module_x:fn", "module 'stateval_no_such_module_x' not found"),
        ("os.path:no_such_fn", "'os.path' has no attribute 'no_such_fn'"),
        ("collections:OrderedDict.nope", "(missing 'nope')"),
    ],
)
def test_load_callable_errors_say_what_is_missing(spec: str, problem: str) -> None:
    with pytest.raises(MutatorLoadError) as caught:
        load_callable(spec)
    assert problem in str(caught.value)
    assert caught.value.spec == spec
    assert isinstance(caught.value, MutatorError)


def test_load_callable_imports_from_search_path_and_restores_sys_path(tmp_path: Path) -> None:
    (tmp_path / "suite_mutator_ok.py").write_text(
        "def fill(state, input):\n    return state\n", encoding="utf-8"
    )
    (tmp_path / "suite_mutator_broken.py").write_text("raise ValueError('boom')\n")
    (tmp_path / "suite_mutator_dep.py").write_text("import stateval_missing_dep_y\n")
    before = list(sys.path)
    try:
        fill = load_callable("suite_mutator_ok:fill", search_path=[tmp_path])
        assert fill.__module__ == "suite_mutator_ok"
        with pytest.raises(MutatorLoadError, match="raised ValueError: boom"):
            load_callable("suite_mutator_broken:x", search_path=[tmp_path])
        with pytest.raises(MutatorLoadError, match="module 'stateval_missing_dep_y' not found"):
            load_callable("suite_mutator_dep:x", search_path=[tmp_path])
        assert sys.path == before
    finally:
        for name in ("suite_mutator_ok", "suite_mutator_broken", "suite_mutator_dep"):
            sys.modules.pop(name, None)
