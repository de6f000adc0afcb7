"""Operators: what each state and prompt operator changes, named in its description, repeatably."""

from __future__ import annotations

import asyncio
import random

import pytest

from stateval import InterpretiveState, StructuredInput, ValueConfidence
from stateval.errors import MutationError, PluginError
from stateval.mutation import (
    Mutant,
    System,
    TransformedMutator,
    as_system,
    generate_mutants,
    near_miss,
)

PRE = InterpretiveState.from_flat({"hotel.area": "north", "hotel.stars": "4"})
EXPECTED = InterpretiveState.from_flat(
    {"hotel.area": "north", "hotel.stars": "4", "hotel.name": "acorn", "hotel.people": "2"}
)
INPUT = StructuredInput("book the acorn for 2", "m-1")


def tracker(state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
    """Sets hotel.name and hotel.people, with provenance."""
    state.set_value("hotel.name", ValueConfidence("acorn", 0.9, "named", input.message_id))
    state.set_value("hotel.people", ValueConfidence("2", 0.9, "counted", input.message_id))
    return state


def system(seed: int = 0) -> System:
    other = (InterpretiveState(), InterpretiveState.from_flat({"hotel.name": "bridge house"}))
    return System.from_cases(tracker, [(PRE, EXPECTED), other], seed=seed)


def run(mutant: Mutant, pre: InterpretiveState = PRE) -> InterpretiveState:
    assert mutant.system.mutator is not None
    return asyncio.run(mutant.system.mutator.mutate(pre, INPUT))


def only(operator: str, needle: str = "", seed: int = 0) -> Mutant:
    found = [m for m in generate_mutants(system(seed), [operator]) if needle in m.description]
    assert len(found) == 1, [m.description for m in found]
    return found[0]


def test_the_profile_knows_changed_kept_fields_values_and_pairs() -> None:
    s = system()
    assert s.fields == ("hotel.area", "hotel.stars", "hotel.name", "hotel.people")
    assert s.changed_fields == ("hotel.name", "hotel.people")
    assert s.kept_fields == ("hotel.area", "hotel.stars")
    assert s.values["hotel.name"] == ("acorn", "bridge house")
    assert s.pairs == (("hotel.name", "hotel.people"),)


def test_drop_field_loses_one_update_and_keeps_the_rest() -> None:
    mutant = only("drop_field", "hotel.name")
    assert mutant.target == "state"
    assert mutant.description == (
        "drops the update to hotel.name (the output keeps its pre-state value, or none)"
    )
    out = run(mutant)
    assert "hotel.name" not in out
    assert out.best("hotel.people") == ValueConfidence("2", 0.9, "counted", "m-1")
    assert out.best("hotel.area") == PRE.best("hotel.area")


def test_stale_returns_the_pre_state() -> None:
    assert run(only("stale")) == PRE


def test_hallucinate_adds_a_suite_value_only_where_neither_side_has_the_field() -> None:
    mutant = only("hallucinate_field", "hotel.stars")
    out = run(mutant, InterpretiveState())
    assert out.best("hotel.stars") == ValueConfidence("4", 1.0)
    assert "hotel.stars = '4'" in mutant.description
    untouched = tracker(PRE.copy(), INPUT)
    assert run(mutant) == untouched  # the pre-state has hotel.stars: nothing is invented


def test_perturb_value_and_change_case_touch_only_the_named_update() -> None:
    out = run(only("perturb_value", "hotel.people"))
    assert out.best("hotel.people").value in ("1", "3")  # type: ignore[union-attr]
    assert out.best("hotel.name").value == "acorn"  # type: ignore[union-attr]
    case = only("change_case", "hotel.name")
    # no example from the expected states: what the mutant wrote comes from its outputs
    assert (
        case.description == "changes the letter case of the update to hotel.name (lower <-> Title)"
    )
    assert run(case).best("hotel.name").value == "Acorn"  # type: ignore[union-attr]
    assert not [m for m in generate_mutants(system(), ["change_case"]) if "people" in m.description]


def test_perturb_confidence_lowers_the_best_candidate_in_place() -> None:
    out = run(only("perturb_confidence", "hotel.name"))
    best = out.best("hotel.name")
    assert best is not None
    assert (best.value, best.confidence, best.message_id) == ("acorn", 0.7, "m-1")


def test_swap_rename_strip_and_clobber() -> None:
    swapped = run(only("swap_values"))
    assert (swapped.best("hotel.name").value, swapped.best("hotel.people").value) == ("2", "acorn")  # type: ignore[union-attr]
    rename = only("rename_path", "hotel.people")
    assert "at the wrong path hotel_people" in rename.description
    renamed = run(rename)
    assert "hotel.people" not in renamed
    assert renamed.best("hotel_people").value == "2"  # type: ignore[union-attr]
    stripped = run(only("strip_provenance"))
    assert all(stripped.best(p).message_id is None for p in stripped)  # type: ignore[union-attr]
    assert stripped.to_flat() == run(only("stale")).to_flat() | {
        "hotel.name": "acorn",
        "hotel.people": "2",
    }
    clobbered = run(only("clobber_field", "hotel.area"))
    assert clobbered.best("hotel.area").value != "north"  # type: ignore[union-attr]
    assert clobbered.best("hotel.name") == ValueConfidence("acorn", 0.9, "named", "m-1")


def test_transformed_mutators_never_change_the_state_they_are_given() -> None:
    pre = PRE.copy()
    for mutant in generate_mutants(system(), None):
        if mutant.system.mutator is not None:
            run(mutant, pre)
    assert pre == PRE
    assert isinstance(only("stale").system.mutator, TransformedMutator)


def test_near_miss_is_close_and_repeatable() -> None:
    rng = random.Random(1)
    assert near_miss("4", rng) in ("3", "5")
    assert near_miss("0", rng) == "1"
    assert near_miss(True, rng) is False
    assert near_miss(10, rng) in (9, 11)
    assert near_miss(["a", "b"], rng) == ["a"]
    assert near_miss({"a": 1}, rng) is None
    dropped = near_miss("centre", rng)
    assert any(dropped == "centre"[:i] + "centre"[i + 1 :] for i in range(6))
    assert near_miss("centre", random.Random("x")) == near_miss("centre", random.Random("x"))


def test_operators_are_deterministic_under_a_seed() -> None:
    outputs = {}
    for seed in (1, 1, 2, 3, 4):
        mutant = only("perturb_value", "hotel.name", seed)
        state = asyncio.run(
            mutant.system.mutator.mutate(InterpretiveState(), StructuredInput("x", "m-9"))  # type: ignore[union-attr]
        )
        outputs.setdefault(seed, []).append(state.best("hotel.name").value)  # type: ignore[union-attr]
    assert outputs[1][0] == outputs[1][1]
    assert len({v[0] for v in outputs.values()}) > 1  # another seed drops another letter
    first = [m.description for m in generate_mutants(system(), None, seed=5, max_mutants=4)]
    again = [m.description for m in generate_mutants(system(), None, seed=5, max_mutants=4)]
    assert first == again
    assert len(first) == 4


PROMPT = """You fill a hotel booking form.
Never guess a value.
You must not set the price.
Example: "two people" -> {"hotel.people": "2"}
Input: the message."""


def test_prompt_operators_on_a_bare_prompt() -> None:
    mutants = generate_mutants(
        PROMPT, ["drop_instruction", "flip_negation", "weaken_modals", "truncate", "drop_examples"]
    )
    described = {m.description: m.system.prompt for m in mutants}
    assert described["drops prompt line 2: 'Never guess a value.'"] == PROMPT.replace(
        "Never guess a value.\n", ""
    )
    flipped = (
        "flips the negation in prompt line 3: 'You must not set the price.' -> "
        "'You must set the price.'"
    )
    assert "You must set the price." in (described[flipped] or "")
    weakened = next(p for d, p in described.items() if d.startswith("weakens"))
    assert "Rarely guess a value." in (weakened or "")
    assert "You may not set the price." in (weakened or "")
    truncated = next(p for d, p in described.items() if d.startswith("truncates"))
    assert truncated == "\n".join(PROMPT.splitlines()[:3])
    examples = next(p for d, p in described.items() if d.startswith("drops the 2 few-shot"))
    assert examples == "\n".join(PROMPT.splitlines()[:3])
    assert all(m.system.mutator is None and m.target == "prompt" for m in mutants)
    assert generate_mutants(PROMPT, ["drop_field", "stale"]) == []


def test_as_system_and_with_prompt_errors() -> None:
    assert as_system("hi").prompt == "hi"
    assert as_system(tracker).prompt is None
    with pytest.raises(MutationError, match="has no prompt to mutate"):
        as_system(tracker).with_prompt("x")
    with pytest.raises(MutationError, match="not int"):
        as_system(3)  # type: ignore[arg-type]
    with pytest.raises(MutationError, match="bare prompt"):
        as_system("hi").with_output(lambda pre, i, post: post, "noop")


def test_operators_passed_as_callables_and_broken_ones() -> None:
    def shout(target: object) -> list[Mutant]:
        s = as_system(target)
        assert s.prompt is not None
        return [Mutant("shout", "UPPERCASED the whole prompt", s.with_prompt(s.prompt.upper()))]

    (mutant,) = generate_mutants("be calm", [shout])
    assert mutant.system.prompt == "BE CALM"

    def broken(target: object) -> list[Mutant]:
        raise KeyError("x")

    with pytest.raises(PluginError, match="operator 'broken' raised KeyError"):
        generate_mutants("x", [broken])
    with pytest.raises(PluginError, match="must return a list of Mutant"):
        generate_mutants("x", [lambda target: ["not a mutant"]])


def _episode_system() -> System:
    return System.from_cases(tracker, [(PRE, EXPECTED)], episodes=True)


def test_stale_in_episode_keeps_the_first_update_for_the_rest_of_the_episode() -> None:
    from stateval.mutation import EpisodeTransform

    assert [m for m in generate_mutants(system(), ["stale_in_episode"])] == []
    mutants = generate_mutants(_episode_system(), ["stale_in_episode"])
    assert [m.description for m in mutants] == [
        f"keeps the first value an episode gives {path} for the rest of the episode "
        "(later updates to it are lost)"
        for path in ("hotel.name", "hotel.people")
    ]
    assert mutants[0].operator == "stale_in_episode"
    assert mutants[0].target == "state"
    mutator = mutants[0].system.mutator
    assert isinstance(mutator, TransformedMutator)
    transform = mutator.transform
    assert isinstance(transform, EpisodeTransform)

    def state(**values: str) -> InterpretiveState:
        return InterpretiveState.from_flat({f"hotel.{k}": v for k, v in values.items()})

    turns = [
        (state(), INPUT, state(area="north")),  # hotel.name not set yet
        (state(area="north"), INPUT, state(area="north", name="acorn")),  # first update
        (state(area="north", name="acorn"), INPUT, state(area="north", name="bridge house")),
        (state(area="north", name="bridge house"), INPUT, state(area="south")),  # dropped
        (state(area="south"), INPUT, state(area="south", name="acorn")),  # same value again
    ]
    before = [(pre.copy(), post.copy()) for pre, _, post in turns]
    out = transform.over_episode(turns)
    assert [o.to_flat() for o in out] == [
        {"hotel.area": "north"},
        {"hotel.area": "north", "hotel.name": "acorn"},
        {"hotel.area": "north", "hotel.name": "acorn"},
        {"hotel.area": "south", "hotel.name": "acorn"},
        {"hotel.area": "south", "hotel.name": "acorn"},
    ]
    assert [(pre, post) for pre, _, post in turns] == before  # nothing given was changed
    # One output alone has no earlier turn: unchanged.
    assert transform(state(), INPUT, state(name="acorn")) == state(name="acorn")


def test_an_episode_transform_sees_each_episode_in_turn_order() -> None:
    from stateval.mutation._verdict import transformed
    from stateval.run import CaseResult
    from stateval.suite import Case

    def case(case_id: str, episode: str | None, turn: int | None, name: str) -> Case:
        return Case(
            case_id,
            InterpretiveState(),
            StructuredInput(name, case_id),
            InterpretiveState.from_flat({"hotel.name": name}),
            episode_id=episode,
            turn_index=turn,
        )

    # Listed out of order and interleaved; b-1's mutator call failed.
    cases = [
        case("a-2", "a", 2, "cam"),
        case("b-0", "b", 0, "dove"),
        case("a-0", "a", 0, "acorn"),
        case("solo", None, None, "elm"),
        case("b-1", "b", 1, "fir"),
        case("a-1", "a", 1, "bell"),
        case("b-2", "b", 2, "gull"),
    ]
    base = {
        c.id: CaseResult(c.id, c.expected_post_state.copy(), None, None, 0.1)
        if c.id != "b-1"
        else CaseResult(c.id, None, "model timed out", "TimeoutError", 0.1)
        for c in cases
    }
    (mutant,) = [
        m
        for m in generate_mutants(_episode_system(), ["stale_in_episode"])
        if "hotel.name" in m.description
    ]
    assert isinstance(mutant.system.mutator, TransformedMutator)
    out = transformed(base, cases, [mutant.system.mutator.transform])
    names = {
        c: None if r.post_state is None else r.post_state.best("hotel.name").value  # type: ignore[union-attr]
        for c, r in out.items()
    }
    assert names == {
        "a-0": "acorn",
        "a-1": "acorn",
        "a-2": "acorn",
        "b-0": "dove",
        "b-1": None,
        "b-2": "dove",
        "solo": "elm",
    }
    assert out["b-1"].error == "model timed out"
