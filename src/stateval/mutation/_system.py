"""The system under test as operators see it: a state mutator, its prompt, and the suite's fields.

Operators (``fn(target) -> list[Mutant]``) receive a `System` or a bare prompt string and call
`as_system` to normalise it. A `System` knows what operators need to name their mutants: the
fields the suite expects, the fields some case's input changes, example values per field and
fields that change together, plus the seed that makes every random choice repeatable.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from string import Template
from types import MappingProxyType
from typing import Any, Protocol, TypeAlias, runtime_checkable

from stateval.errors import MutationError
from stateval.mutators import (
    LLMMutator,
    Mutator,
    MutatorLike,
    StructuredInput,
    as_mutator,
    describe_mutator,
)
from stateval.state import InterpretiveState

__all__ = [
    "EpisodeTransform",
    "OutputTransform",
    "System",
    "TransformedMutator",
    "Turn",
    "as_system",
    "is_llm_mutator",
    "split_transforms",
]

OutputTransform: TypeAlias = Callable[
    [InterpretiveState, StructuredInput, InterpretiveState], InterpretiveState
]
"""``(pre_state, input, post_state) -> degraded post_state``; must not change its arguments."""

Turn: TypeAlias = tuple[InterpretiveState, StructuredInput, InterpretiveState]
"""One turn of an episode as an `EpisodeTransform` sees it: pre-state, input, post-state."""


@runtime_checkable
class EpisodeTransform(Protocol):
    """An `OutputTransform` that degrades a whole episode at once, so a turn's output can depend
    on the episode's earlier turns (a stale value that persists, say).

    Mutation testing hands it each episode's turns in order (`over_episode`); a call on one
    output alone (a case outside any episode, or the transform run live by a
    `TransformedMutator`) sees no earlier turn.
    """

    def __call__(
        self, pre: InterpretiveState, input: StructuredInput, post: InterpretiveState
    ) -> InterpretiveState:
        """One output with no earlier turn."""
        ...

    def over_episode(self, turns: Sequence[Turn]) -> list[InterpretiveState]:
        """The degraded post-state of each turn, in the order given; changes no argument."""
        ...


_VALUES_PER_FIELD = 8


class TransformedMutator:
    """A mutator whose every output goes through ``transform`` (what state operators build).

    Args:
        inner: The mutator whose output is degraded.
        transform: ``(pre_state, input, post_state) -> post_state``.
        label: What the transform does, for `describe`.
    """

    def __init__(self, inner: Mutator, transform: OutputTransform, label: str) -> None:
        self.inner = inner
        self.transform = transform
        self.label = label

    async def mutate(self, state: InterpretiveState, input: StructuredInput) -> InterpretiveState:
        """Run the inner mutator on a copy of ``state`` and transform its output."""
        post = await self.inner.mutate(state.copy(), input)
        return self.transform(state, input, post)

    def describe(self) -> str:
        """``<label> over <inner mutator>``."""
        return f"{self.label} over {describe_mutator(self.inner)}"


def split_transforms(mutator: Mutator) -> tuple[Mutator, tuple[OutputTransform, ...]]:
    """The innermost mutator and the output transforms stacked on it, innermost first."""
    transforms: list[OutputTransform] = []
    while isinstance(mutator, TransformedMutator):
        transforms.append(mutator.transform)
        mutator = mutator.inner
    return mutator, tuple(reversed(transforms))


def is_llm_mutator(mutator: object) -> bool:
    """True when calling ``mutator`` makes a paid model call (an `LLMMutator`, or ``is_llm``)."""
    if isinstance(mutator, TransformedMutator):
        return is_llm_mutator(mutator.inner)
    return isinstance(mutator, LLMMutator) or getattr(mutator, "is_llm", False) is True


def _inline_instructions(template: str, instructions: str) -> str:
    escaped = instructions.replace("$", "$$")

    def sub(match: Any) -> str:
        name = match.group("named") or match.group("braced")
        return escaped if name == "instructions" else str(match.group(0))

    return str(Template.pattern.sub(sub, template))


def _prompt_of(mutator: Mutator | None) -> str | None:
    if isinstance(mutator, LLMMutator):
        return _inline_instructions(mutator.prompt_template, mutator.instructions)
    prompt = getattr(mutator, "prompt", None)
    if isinstance(prompt, str) and callable(getattr(mutator, "with_prompt", None)):
        return prompt
    return None


@dataclass(frozen=True, slots=True)
class System:
    """The system under test: a state mutator (or only a prompt) and what the suite expects.

    Attributes:
        mutator: The state mutator, or None for a bare prompt.
        prompt: The prompt an operator may edit: an `LLMMutator`'s template with its
            instructions written in (``$state``, ``$prompt``... stay placeholders), the
            ``prompt`` of a mutator that also has ``with_prompt(prompt)``, or the bare prompt.
        fields: Every path some case expects, in first-seen order.
        changed_fields: Paths some case's input changes (expected differs from the pre-state).
        kept_fields: Paths some case keeps from its pre-state (the input does not change them).
        deleted_fields: Paths some case deletes (its pre-state holds them, its expected state
            does not).
        values: Up to 8 distinct expected values per path, in first-seen order.
        pairs: Paths that change together in some case, most frequent first, each path in at
            most one pair.
        seed: Seeds every random choice of the operators (see `rng`).
        episodes: The suite groups its cases into episodes (episode-aware operators make
            mutants only then).
    """

    mutator: Mutator | None = None
    prompt: str | None = None
    fields: tuple[str, ...] = ()
    changed_fields: tuple[str, ...] = ()
    kept_fields: tuple[str, ...] = ()
    deleted_fields: tuple[str, ...] = ()
    values: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    pairs: tuple[tuple[str, str], ...] = ()
    seed: int = 0
    episodes: bool = False

    def __post_init__(self) -> None:
        frozen = {k: tuple(v) for k, v in self.values.items()}
        object.__setattr__(self, "values", MappingProxyType(frozen))

    def rng(self, *key: object) -> random.Random:
        """A random generator seeded by `seed` and ``key`` (the same key gives the same draws)."""
        return random.Random("|".join([str(self.seed), *map(str, key)]))

    def with_prompt(self, prompt: str) -> System:
        """This system with ``prompt`` instead of its prompt.

        Raises:
            MutationError: The mutator has no prompt to replace.
        """
        if self.mutator is None:
            return replace(self, prompt=prompt)
        if isinstance(self.mutator, LLMMutator):
            mutator: Mutator = LLMMutator(self.mutator.client, "", prompt_template=prompt)
            return replace(self, mutator=mutator, prompt=prompt)
        with_prompt = getattr(self.mutator, "with_prompt", None)
        if self.prompt is None or not callable(with_prompt):
            raise MutationError(
                f"{describe_mutator(self.mutator)} has no prompt to mutate "
                "(use an LLMMutator, or give the mutator `prompt` and `with_prompt(prompt)`)"
            )
        return replace(self, mutator=as_mutator(with_prompt(prompt)), prompt=prompt)

    def with_output(self, transform: OutputTransform, label: str) -> System:
        """This system with every output of its mutator passed through ``transform``.

        Raises:
            MutationError: The system has no mutator (a bare prompt).
        """
        if self.mutator is None:
            raise MutationError("a bare prompt has no mutator output to transform")
        return replace(self, mutator=TransformedMutator(self.mutator, transform, label))

    @classmethod
    def from_cases(
        cls,
        mutator: MutatorLike | None,
        cases: Iterable[tuple[InterpretiveState, InterpretiveState]],
        *,
        seed: int = 0,
        episodes: bool = False,
    ) -> System:
        """A system profiled from ``(pre_state, expected_post_state)`` pairs.

        Args:
            mutator: The mutator (or None for a bare prompt).
            cases: Each case's pre-state and expected post-state.
            seed: See `seed`.
            episodes: See `episodes`.
        """
        fields: dict[str, None] = {}
        changed: dict[str, None] = {}
        kept: dict[str, None] = {}
        deleted: dict[str, None] = {}
        values: dict[str, dict[str, Any]] = {}
        pair_counts: Counter[tuple[str, str]] = Counter()
        for pre, expected in cases:
            updated = []
            for path in expected.paths():
                fields[path] = None
                best = expected.best(path)
                assert best is not None
                seen = values.setdefault(path, {})
                key = json.dumps(best.value, sort_keys=True)
                if key not in seen and len(seen) < _VALUES_PER_FIELD:
                    seen[key] = best.value
                if pre.best(path) != best:
                    changed[path] = None
                    updated.append(path)
                else:
                    kept[path] = None
            for path in pre.paths():
                if path not in expected:
                    deleted[path] = None
            for i, a in enumerate(updated):
                for b in updated[i + 1 :]:
                    pair_counts[(a, b) if a < b else (b, a)] += 1
        pairs: list[tuple[str, str]] = []
        used: set[str] = set()
        for (a, b), _ in sorted(pair_counts.items(), key=lambda kv: (-kv[1], kv[0])):
            if a not in used and b not in used:
                pairs.append((a, b))
                used.update((a, b))
        real = None if mutator is None else as_mutator(mutator)
        return cls(
            mutator=real,
            prompt=_prompt_of(real),
            fields=tuple(fields),
            changed_fields=tuple(changed),
            kept_fields=tuple(kept),
            deleted_fields=tuple(deleted),
            values={p: tuple(v.values()) for p, v in values.items()},
            pairs=tuple(pairs),
            seed=seed,
            episodes=episodes,
        )


def as_system(target: System | MutatorLike | str) -> System:
    """Normalise an operator's target: a `System` as is, a prompt string or a mutator wrapped.

    Raises:
        MutationError: ``target`` is none of these.
    """
    if isinstance(target, System):
        return target
    if isinstance(target, str):
        return System(prompt=target)
    try:
        mutator = as_mutator(target)
    except Exception as exc:
        raise MutationError(
            f"an operator target is a System, a mutator or a prompt string, "
            f"not {type(target).__name__}"
        ) from exc
    return System(mutator=mutator, prompt=_prompt_of(mutator))
