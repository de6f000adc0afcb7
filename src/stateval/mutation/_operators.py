"""State operators: degrade any mutator by transforming its output, one field at a time.

Each operator returns one `Mutant` per field it can degrade (from the `System`'s profile of the
suite), so a survivor names its field: "drops the update to hotel.area". A transform sees the
case's pre-state, input and the mutator's output, never the expected state; an episode-aware
one (`stale_in_episode`, an `EpisodeTransform`) sees the turns of an episode in order. Random
choices (which character to drop, which value to hallucinate) come from `System.rng`, so they
repeat under the same seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from stateval.mutation._mutant import Mutant
from stateval.mutation._system import OutputTransform, System, Turn, as_system
from stateval.mutation._value_changes import (
    near_miss,
    other_case,
    perturb_item,
    reformat_date,
    reorder,
)
from stateval.mutators import StructuredInput
from stateval.state import InterpretiveState, ValueConfidence

__all__ = [
    "change_case",
    "change_date_format",
    "clobber_field",
    "drop_field",
    "hallucinate_field",
    "near_miss",
    "perturb_confidence",
    "perturb_list_item",
    "perturb_value",
    "rename_path",
    "reorder_list",
    "stale",
    "stale_in_episode",
    "strip_provenance",
    "swap_values",
]

CONFIDENCE_STEP = 0.2


# -- helpers on states ----------------------------------------------------------------------------


def _updated(pre: InterpretiveState, post: InterpretiveState, path: str) -> bool:
    return path in post and pre.best(path) != post.best(path)


def _restore(out: InterpretiveState, pre: InterpretiveState, path: str) -> None:
    out.remove(path)
    for vc in pre.candidates(path):
        out.add_value(path, vc)


def _replace_best(state: InterpretiveState, path: str, new: ValueConfidence) -> InterpretiveState:
    """A copy where ``path``'s best candidate is ``new`` (same position, other candidates kept)."""
    out = InterpretiveState()
    best = state.best(path)
    for p in state.paths():
        candidates = state.candidates(p)
        if p == path and best is not None:
            candidates[candidates.index(best)] = new
        for vc in candidates:
            out.add_value(p, vc)
    return out


def _mutants(
    system: System,
    operator: str,
    items: list[tuple[str, OutputTransform]],
) -> list[Mutant]:
    return [
        Mutant(operator, description, system.with_output(transform, description), "state")
        for description, transform in items
    ]


def _per_path(
    system: System,
    operator: str,
    paths: tuple[str, ...],
    make: Callable[[str], tuple[str, OutputTransform]],
) -> list[Mutant]:
    return _mutants(system, operator, [make(path) for path in paths])


def _system(target: Any) -> System | None:
    system = as_system(target)
    return system if system.mutator is not None else None


# -- operators --------------------------------------------------------------------------------


def drop_field(target: Any) -> list[Mutant]:
    """Per changed field: the mutator's update to it is lost (pre-state value, or no value)."""
    system = _system(target)
    if system is None:
        return []

    def make(path: str) -> tuple[str, OutputTransform]:
        def transform(
            pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
        ) -> InterpretiveState:
            if not _updated(pre, post, path):
                return post
            out = post.copy()
            _restore(out, pre, path)
            return out

        return (
            f"drops the update to {path} (the output keeps its pre-state value, or none)",
            transform,
        )

    return _per_path(system, "drop_field", system.changed_fields, make)


def hallucinate_field(target: Any) -> list[Mutant]:
    """Per field: set it, with a value seen in the suite, wherever neither side has it."""
    system = _system(target)
    if system is None:
        return []

    def make(path: str) -> tuple[str, OutputTransform]:
        seen = system.values.get(path, ())
        value = system.rng("hallucinate_field", path).choice(seen) if seen else "unknown"

        def transform(
            pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
        ) -> InterpretiveState:
            if path in post or path in pre:
                return post
            out = post.copy()
            out.add_value(path, ValueConfidence(value, 1.0))
            return out

        return (
            f"adds hallucinated field {path} = {value!r} (confidence 1.0) wherever neither the "
            "pre-state nor the output has it",
            transform,
        )

    return _per_path(system, "hallucinate_field", system.fields, make)


def stale(target: Any) -> list[Mutant]:
    """One mutant that returns the pre-state unchanged."""
    system = _system(target)
    if system is None:
        return []

    def transform(
        pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
    ) -> InterpretiveState:
        return pre.copy()

    description = "returns the pre-state unchanged (every update of the mutator is lost)"
    return _mutants(system, "stale", [(description, transform)])


def _value_operator(
    target: Any,
    operator: str,
    change: Callable[[Any, Any], Any],
    describe: Callable[[str], str],
) -> list[Mutant]:
    system = _system(target)
    if system is None:
        return []

    def make(path: str) -> tuple[str, OutputTransform]:
        def transform(
            pre: InterpretiveState, input: StructuredInput, post: InterpretiveState
        ) -> InterpretiveState:
            best = post.best(path)
            if best is None or not _updated(pre, post, path):
                return post
            rng = system.rng(operator, path, input.message_id)
            new = change(best.value, rng)
            if new is None or new == best.value:
                return post
            return _replace_best(post, path, replace(best, value=new))

        return describe(path), transform

    paths = tuple(
        p
        for p in system.changed_fields
        if not system.values.get(p)
        or any(change(v, system.rng(operator, p)) is not None for v in system.values[p])
    )
    return _per_path(system, operator, paths, make)


def perturb_value(target: Any) -> list[Mutant]:
    """Per changed field: a near-miss value (see `near_miss`) where the mutator changed it.

    The description says what kind of change; what the mutant actually wrote is read off its
    outputs (`MutantResult.wrote`), not off the suite's expected values.
    """

    def describe(path: str) -> str:
        return (
            f"replaces the update to {path} with a near-miss (a string loses one letter or "
            "digit, a number is off by one)"
        )

    return _value_operator(target, "perturb_value", near_miss, describe)


def change_case(target: Any) -> list[Mutant]:
    """Per changed string field: the value in another letter case (lower <-> Title)."""

    def describe(path: str) -> str:
        return f"changes the letter case of the update to {path} (lower <-> Title)"

    return _value_operator(target, "change_case", other_case, describe)


def perturb_list_item(target: Any) -> list[Mutant]:
    """Per changed list-of-records field: one sub-field of one item becomes a near miss."""

    def describe(path: str) -> str:
        return f"replaces one sub-field of one item of {path} with a near-miss"

    return _value_operator(target, "perturb_list_item", perturb_item, describe)


def reorder_list(target: Any) -> list[Mutant]:
    """Per changed list field: the same items in another order (rotated by one). Where order
    does not matter (``list_mode: set`` or ``align``) this mutant should be equivalent."""

    def describe(path: str) -> str:
        return f"reorders the items of {path} (rotated by one)"

    return _value_operator(target, "reorder_list", reorder, describe)


def change_date_format(target: Any) -> list[Mutant]:
    """Per changed ISO-date field: the same date in its long form (``March 1, 2026``). Under
    ``comparator: date`` this mutant should be equivalent."""

    def describe(path: str) -> str:
        return f"writes the date of {path} in another form (2026-03-01 -> March 1, 2026)"

    return _value_operator(target, "change_date_format", reformat_date, describe)


def perturb_confidence(target: Any) -> list[Mutant]:
    """Per changed field: the confidence 0.2 lower (0.2 higher when below 0.2)."""
    system = _system(target)
    if system is None:
        return []

    def make(path: str) -> tuple[str, OutputTransform]:
        def transform(
            pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
        ) -> InterpretiveState:
            best = post.best(path)
            if best is None or not _updated(pre, post, path):
                return post
            c = best.confidence
            new = round(c - CONFIDENCE_STEP if c >= CONFIDENCE_STEP else c + CONFIDENCE_STEP, 6)
            return _replace_best(post, path, replace(best, confidence=new))

        return (
            f"lowers the confidence of the update to {path} by {CONFIDENCE_STEP} (raises it "
            f"when below {CONFIDENCE_STEP})",
            transform,
        )

    return _per_path(system, "perturb_confidence", system.changed_fields, make)


def swap_values(target: Any) -> list[Mutant]:
    """Per pair of fields that change together: their values swapped."""
    system = _system(target)
    if system is None:
        return []
    items: list[tuple[str, OutputTransform]] = []
    for a, b in system.pairs:

        def transform(
            pre: InterpretiveState,
            _: StructuredInput,
            post: InterpretiveState,
            a: str = a,
            b: str = b,
        ) -> InterpretiveState:
            va, vb = post.best(a), post.best(b)
            if va is None or vb is None or not (_updated(pre, post, a) and _updated(pre, post, b)):
                return post
            out = _replace_best(post, a, replace(va, value=vb.value))
            return _replace_best(out, b, replace(vb, value=va.value))

        items.append((f"swaps the values of {a} and {b} where the mutator updates both", transform))
    return _mutants(system, "swap_values", items)


def _renamed(path: str, taken: set[str]) -> str:
    head, dot, last = path.rpartition(".")
    name = f"{head}_{last}" if dot else f"{path}s"
    while name in taken:
        name += "_x"
    return name


def rename_path(target: Any) -> list[Mutant]:
    """Per changed field: the update written to a wrong path (``hotel.area`` -> ``hotel_area``)."""
    system = _system(target)
    if system is None:
        return []
    taken = set(system.fields)

    def make(path: str) -> tuple[str, OutputTransform]:
        wrong = _renamed(path, taken)

        def transform(
            pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
        ) -> InterpretiveState:
            best = post.best(path)
            if best is None or not _updated(pre, post, path):
                return post
            out = post.copy()
            _restore(out, pre, path)
            out.add_value(wrong, best)
            return out

        return (
            f"writes the update to {path} at the wrong path {wrong} ({path} keeps its "
            "pre-state value)",
            transform,
        )

    return _per_path(system, "rename_path", system.changed_fields, make)


def strip_provenance(target: Any) -> list[Mutant]:
    """One mutant whose output values carry no inference and no message_id."""
    system = _system(target)
    if system is None:
        return []

    def transform(
        pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
    ) -> InterpretiveState:
        out = InterpretiveState()
        for path in post.paths():
            for vc in post.candidates(path):
                out.add_value(path, replace(vc, inference=None, message_id=None))
        return out

    description = "removes inference and message_id from every value of the output"
    return _mutants(system, "strip_provenance", [(description, transform)])


def clobber_field(target: Any) -> list[Mutant]:
    """Per kept field: overwritten where the input did not change it."""
    system = _system(target)
    if system is None:
        return []

    def make(path: str) -> tuple[str, OutputTransform]:
        seen = system.values.get(path, ())

        def transform(
            pre: InterpretiveState, input: StructuredInput, post: InterpretiveState
        ) -> InterpretiveState:
            best = post.best(path)
            if best is None or path not in pre or _updated(pre, post, path):
                return post
            rng = system.rng("clobber_field", path, input.message_id)
            others = [v for v in seen if v != best.value]
            new = rng.choice(others) if others else near_miss(best.value, rng)
            if new is None:
                return post
            out = post.copy()
            out.set_value(path, replace(best, value=new))
            return out

        return (
            f"overwrites {path} where the input did not change it, with another value seen in "
            "the suite (or a near-miss)",
            transform,
        )

    return _per_path(system, "clobber_field", system.kept_fields, make)


class _StaleInEpisode:
    """From the turn of an episode that first updates ``path``, ``path`` keeps that value."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(
        self, pre: InterpretiveState, _: StructuredInput, post: InterpretiveState
    ) -> InterpretiveState:
        return post  # one output alone has no earlier turn whose value could persist

    def over_episode(self, turns: Sequence[Turn]) -> list[InterpretiveState]:
        path = self.path
        stuck: ValueConfidence | None = None
        out: list[InterpretiveState] = []
        for pre, _, post in turns:
            best = post.best(path)
            if stuck is None:
                if _updated(pre, post, path):
                    stuck = best
                out.append(post)
            elif best is None:
                kept = post.copy()
                kept.add_value(path, stuck)
                out.append(kept)
            elif best.value != stuck.value:
                out.append(_replace_best(post, path, replace(best, value=stuck.value)))
            else:
                out.append(post)
        return out


def stale_in_episode(target: Any) -> list[Mutant]:
    """Per changed field, in a suite of episodes: from the turn an episode first updates the
    field, it keeps that value for the rest of the episode (later updates are lost, and it
    stays even where the mutator dropped it). Teacher-forced turns each start from the expected
    state, so only a mutant that remembers earlier turns can make this error; no mutants
    without episodes."""
    system = _system(target)
    if system is None or not system.episodes:
        return []

    def make(path: str) -> tuple[str, OutputTransform]:
        return (
            f"keeps the first value an episode gives {path} for the rest of the episode "
            "(later updates to it are lost)",
            _StaleInEpisode(path),
        )

    return _per_path(system, "stale_in_episode", system.changed_fields, make)
