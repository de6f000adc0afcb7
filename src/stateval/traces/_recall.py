"""How much a monitor misses: its no-gold checks measured on state mutants of real calls.

A monitor that flags 6% of production spans says nothing about the errors it lets through.
`measure_recall` takes a sample of real mutator calls, degrades each call's post-state with
stateval's state operators (`stateval.mutation.STATE_OPERATORS`: drop an update, keep the stale
pre-state, clobber an untouched field, hallucinate a field, perturb a value...), runs the
monitor's checks on every mutant and on the original, and counts a mutant of a call as *caught*
when the checks raise a flag on it that the original call did not have. Recall is the share of
applied mutants caught, per operator, per operator and field, and per check, each with a 95%
Wilson interval; an operator or field the checks never catch is a *survivor*, named with the
monitor setting that would catch it. The flag rate on the originals is reported beside it: where
the sampled calls are right, it is the checks' false-flag rate.

Example:
    >>> from stateval.state import InterpretiveState
    >>> from stateval.traces._checks import NoGoldChecks
    >>> from stateval.traces._mapping import MappedCall
    >>> calls = [MappedCall(
    ...     InterpretiveState.from_flat({"phone": "555-0100", "name": "Ada"}),
    ...     f"my phone is now 555-01{i:02d}",
    ...     InterpretiveState.from_flat({"phone": f"555-01{i:02d}", "name": "Ada"}),
    ... ) for i in range(1, 6)]
    >>> recall = measure_recall(calls, NoGoldChecks(unexplained_changes=True))
    >>> recall.operators["clobber_field"].recall
    1.0
    >>> recall.operators["perturb_value"].recall
    0.0
    >>> [(s.operator, s.path) for s in recall.survivors]
    [('drop_field', 'phone'), ('perturb_value', 'phone'), ('stale', 'phone')]
    >>> recall.survivors[1].suggestion
    'ground phone in the input: add it to `grounded:`'
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from stateval.mutation import (
    STATE_OPERATORS,
    EpisodeTransform,
    System,
    split_transforms,
    wilson_interval,
)
from stateval.mutators import StructuredInput
from stateval.state import InterpretiveState
from stateval.suite import TracesSpec
from stateval.traces._checks import CHECKS, CallVerdict, NoGoldChecks
from stateval.traces._export import _rank
from stateval.traces._mapping import MappedCall
from stateval.traces._reader import SpanWindow, read_calls
from stateval.upload import PhoenixUploader

__all__ = [
    "DEFAULT_OPERATORS",
    "CallSample",
    "MonitorRecall",
    "RecallTally",
    "Survivor",
    "measure_recall",
    "sample_calls",
]

DEFAULT_OPERATORS: tuple[str, ...] = (
    "drop_field",
    "stale",
    "clobber_field",
    "hallucinate_field",
    "perturb_value",
    "swap_values",
    "change_case",
    "perturb_list_item",
    "change_date_format",
    "missed_delete",
    "spurious_delete",
)
"""The state operators a monitor is measured on by default: the ones that change a value a
person would call wrong (not confidences, provenance or the order of a set-like list)."""

_SUGGESTIONS: Mapping[str, str] = {
    "drop_field": "a lost update leaves {path} as it was, which no no-gold check can see: "
    "judge {path} (`judged:`) or review a sample with gold (`stateval traces export`)",
    "stale": "a lost update leaves {path} as it was, which no no-gold check can see: "
    "judge {path} (`judged:`) or review a sample with gold (`stateval traces export`)",
    "clobber_field": "turn on `unexplained_changes:`",
    "spurious_delete": "turn on `unexplained_changes:`",
    "missed_delete": "a lost delete leaves {path} as it was, which no no-gold check can see: "
    "judge {path} (`judged:`) or review a sample with gold (`stateval traces export`)",
    "hallucinate_field": "ground {path} in the input: add it to `grounded:`",
    "perturb_value": "ground {path} in the input: add it to `grounded:`",
    "swap_values": "ground {path} in the input: add it to `grounded:`",
    "change_case": "add a `checks:` rule (regex or a categorical slot schema) for {path}",
    "perturb_list_item": "ground {path} in the input: add it to `grounded:`",
    "change_date_format": "add a `checks:` regex for the date format of {path}",
}


@dataclass(slots=True)
class RecallTally:
    """Mutants applied and caught, for one operator, field or check."""

    applied: int = 0
    caught: int = 0

    @property
    def recall(self) -> float | None:
        """The share caught (None when nothing was applied: not measurable)."""
        return self.caught / self.applied if self.applied else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% Wilson interval of the recall (None when nothing was applied)."""
        return wilson_interval(self.caught, self.applied) if self.applied else None

    def to_dict(self) -> dict[str, object]:
        interval = self.interval
        return {
            "applied": self.applied,
            "caught": self.caught,
            "recall": self.recall,
            "low": None if interval is None else interval[0],
            "high": None if interval is None else interval[1],
        }


@dataclass(frozen=True, slots=True)
class Survivor:
    """A kind of error the checks never caught on the sample.

    Attributes:
        operator: The state operator.
        path: The field it degraded.
        description: What the mutant does.
        applied: On how many calls it changed the post-state.
        suggestion: The monitor setting that would catch it.
    """

    operator: str
    path: str
    description: str
    applied: int
    suggestion: str

    def to_dict(self) -> dict[str, object]:
        return {
            "operator": self.operator,
            "path": self.path,
            "description": self.description,
            "applied": self.applied,
            "suggestion": self.suggestion,
        }


@dataclass(slots=True)
class MonitorRecall:
    """A monitor's recall on state mutants of sampled calls, and its flag rate on the originals.

    Attributes:
        calls: The calls sampled.
        operators: Operator -> tally, pooled over fields and calls.
        fields: (operator, field) -> tally.
        checks: Check -> tally: mutants the check caught among all applied.
        fields_checked: Fields of the original calls that some check applied to.
        fields_flagged: Of those, the fields flagged.
        survivors: Operator and field pairs never caught, most applied first.
    """

    calls: int = 0
    operators: dict[str, RecallTally] = field(default_factory=dict)
    fields: dict[tuple[str, str], RecallTally] = field(default_factory=dict)
    checks: dict[str, RecallTally] = field(default_factory=dict)
    fields_checked: int = 0
    fields_flagged: int = 0
    survivors: list[Survivor] = field(default_factory=list)

    @property
    def original_flag_rate(self) -> float | None:
        """The share of checked fields flagged on the original calls (None when none checked)."""
        return self.fields_flagged / self.fields_checked if self.fields_checked else None

    def to_dict(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "original_flag_rate": self.original_flag_rate,
            "fields_checked": self.fields_checked,
            "fields_flagged": self.fields_flagged,
            "operators": {name: t.to_dict() for name, t in self.operators.items()},
            "fields": [
                {"operator": op, "path": path, **t.to_dict()}
                for (op, path), t in self.fields.items()
            ],
            "checks": {name: t.to_dict() for name, t in self.checks.items()},
            "survivors": [s.to_dict() for s in self.survivors],
        }


class _Unused:
    """The mutator a profiled `System` needs: mutants here transform recorded outputs."""

    async def mutate(
        self, state: InterpretiveState, input: StructuredInput
    ) -> InterpretiveState:  # pragma: no cover - never called
        raise AssertionError("a monitor's mutants transform recorded calls; nothing is run")


def _flag_keys(verdict: CallVerdict) -> set[tuple[str, str]]:
    return {(flag.path, flag.check) for flag in verdict.flags}


def measure_recall(
    calls: Iterable[MappedCall],
    checks: NoGoldChecks,
    *,
    operators: Sequence[str] = DEFAULT_OPERATORS,
    seed: int = 0,
) -> MonitorRecall:
    """Measure the monitor's checks on state mutants of ``calls``.

    Args:
        calls: The sampled calls (a few hundred are enough; all are held in memory).
        checks: The monitor's no-gold checks.
        operators: Names in `stateval.mutation.STATE_OPERATORS`.
        seed: Seeds the operators' random choices (values to hallucinate, perturbations).

    Raises:
        ValueError: An operator name that is not a state operator.
    """
    unknown = [name for name in operators if name not in STATE_OPERATORS]
    if unknown:
        raise ValueError(
            f"unknown state operator {unknown[0]!r}; known: {', '.join(STATE_OPERATORS)}"
        )
    sample = list(calls)
    result = MonitorRecall(calls=len(sample))
    empty = InterpretiveState()
    befores = [call.pre_state if call.pre_state is not None else empty for call in sample]
    inputs = [StructuredInput(call.input_text, f"call-{i}") for i, call in enumerate(sample)]
    originals = [checks.check(call) for call in sample]
    original_flags = [_flag_keys(verdict) for verdict in originals]
    flats = [call.post_state.to_flat() for call in sample]
    for verdict in originals:
        result.fields_checked += len(verdict.checked)
        result.fields_flagged += len(verdict.flagged)
    system = System.from_cases(
        _Unused(), zip(befores, (call.post_state for call in sample), strict=True), seed=seed
    )
    caught_by_check: Counter[str] = Counter()
    applied = 0
    first_description: dict[tuple[str, str], str] = {}
    for name in operators:
        pooled = result.operators.setdefault(name, RecallTally())
        for mutant in STATE_OPERATORS[name](system):
            assert mutant.system.mutator is not None
            _, transforms = split_transforms(mutant.system.mutator)
            if any(isinstance(t, EpisodeTransform) for t in transforms):
                continue
            for call, before, message, flags, flat in zip(
                sample, befores, inputs, original_flags, flats, strict=True
            ):
                post = call.post_state
                for transform in transforms:
                    post = transform(before, message, post)
                if post is call.post_state:
                    continue
                changed = _changed_paths(flat, post.to_flat())
                if not changed:
                    continue
                verdict = checks.check(
                    MappedCall(call.pre_state, call.input_text, post, call.episode)
                )
                new = {(path, check) for path, check in _flag_keys(verdict) - flags}
                on_changed = {(path, check) for path, check in new if path in changed}
                applied += 1
                pooled.applied += 1
                pooled.caught += bool(on_changed)
                caught_by_check.update({check for _, check in on_changed})
                for path in changed:
                    tally = result.fields.setdefault((name, path), RecallTally())
                    tally.applied += 1
                    tally.caught += any(p == path for p, _ in on_changed)
                    first_description.setdefault((name, path), mutant.description)
    for check_name in CHECKS:
        result.checks[check_name] = RecallTally(applied, caught_by_check[check_name])
    result.survivors = sorted(
        (
            Survivor(
                name,
                path,
                first_description[(name, path)],
                tally.applied,
                _SUGGESTIONS.get(name, "add a `checks:` rule for {path}").format(path=path),
            )
            for (name, path), tally in result.fields.items()
            if tally.caught == 0
        ),
        key=lambda s: (-s.applied, s.operator, s.path),
    )
    return result


def _changed_paths(before: Mapping[str, object], after: Mapping[str, object]) -> set[str]:
    """The fields whose value differs between two flat states (added and removed included)."""
    missing = object()
    return {
        path
        for path in before.keys() | after.keys()
        if before.get(path, missing) != after.get(path, missing)
    }


@dataclass(frozen=True, slots=True)
class CallSample:
    """A seeded sample of a monitor's calls, and what was read to draw it.

    Attributes:
        calls: The sampled calls, in the sample's (seeded) order.
        read: Spans read in the window.
        unmapped: Spans that were not readable mutator calls.
    """

    calls: tuple[MappedCall, ...]
    read: int
    unmapped: int


async def sample_calls(
    phoenix: PhoenixUploader, spec: TracesSpec, window: SpanWindow, n: int, seed: int = 0
) -> CallSample:
    """``n`` of the monitor's calls in ``window``, the same ones for the same seed.

    Each span's place is a hash of the seed and its span id (as `stateval traces export`
    samples), and only the ``n`` best places are held while the spans are paged, so memory
    does not grow with the window.
    """
    kept: list[tuple[bytes, int, MappedCall]] = []  # a max-heap on the place (negated bytes)
    read = unmapped = 0
    async for page in read_calls(phoenix, spec, window):
        read += page.read
        for span, call in page.calls:
            if not isinstance(call, MappedCall):
                unmapped += 1
                continue
            place = bytes(255 - b for b in _rank(seed, span.span_id))
            entry = (place, span.row, call)
            if len(kept) < n:
                heapq.heappush(kept, entry)
            elif place > kept[0][0]:
                heapq.heapreplace(kept, entry)
    ordered = sorted(kept, key=lambda entry: entry[0], reverse=True)
    return CallSample(tuple(call for _, _, call in ordered), read, unmapped)
