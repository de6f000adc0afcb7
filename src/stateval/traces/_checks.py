"""The checks a monitor runs on one mutator call without gold, field by field.

Each check is one function in `CHECKS` taking the field being looked at (`FieldView`) and
returning a `FieldFlag` when the field fails it, `PASSED` when it passes, None when it does not
apply:

* ``grounded``: a value the call wrote (changed from the pre-state, or any value without one)
  on a field named in ``grounded:`` must be written in the input (see `Grounding`);
* ``unexplained_change``: a field that differs from the pre-state (set, changed or removed)
  while the input mentions neither the field's name nor its old or new value (outside a
  signature block: a phone number taken from an e-mail signature is not explained by it);
* ``rule``: the ``checks:`` criteria of the field (regex, JSON Schema, keywords...), run with no
  reference;
* ``slot_value``: a categorical slot of the slot schema holding a value it does not list.

A field counts as checked when at least one check applies to it; `CallVerdict.score` is the
share of checked fields with no flag. The LLM judge (``judged:``) adds its flags separately
(`stateval.traces._judge`).

Example:
    >>> from stateval.state import InterpretiveState
    >>> from stateval.traces._mapping import MappedCall
    >>> checks = NoGoldChecks(grounded=("phone",), unexplained_changes=True)
    >>> verdict = checks.check(MappedCall(
    ...     InterpretiveState.from_flat({"phone": "555-0100", "name": "Ada"}),
    ...     "my new number is 555-0199",
    ...     InterpretiveState.from_flat({"phone": "555-0199", "name": "Bob"}),
    ... ))
    >>> [(f.path, f.check) for f in verdict.flags], verdict.score
    ([('name', 'unexplained_change')], 0.5)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from stateval.checks import Criterion, check_criteria
from stateval.compare import FieldPolicies, FieldStatus, compare_field
from stateval.state import ValueConfidence
from stateval.suite import Monitor, SlotSchema
from stateval.traces._grounding import Grounding
from stateval.traces._mapping import MappedCall

__all__ = [
    "CHECKS",
    "CHECK_NAMES",
    "PASSED",
    "CallVerdict",
    "FieldFlag",
    "FieldView",
    "NoGoldChecks",
]

_ABSENT: Any = object()
_GLOB = frozenset("*?[")
_NAME_WORDS = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")


@dataclass(frozen=True, slots=True)
class FieldFlag:
    """One field of one call that failed a check.

    Attributes:
        path: The field.
        check: The check it failed (one of `CHECK_NAMES`).
        explanation: One sentence saying why.
    """

    path: str
    check: str
    explanation: str


@dataclass(frozen=True, slots=True)
class CallVerdict:
    """What the checks found in one call.

    Attributes:
        checked: The fields at least one check applied to.
        flags: The failures, at most one per field and check.
    """

    checked: tuple[str, ...]
    flags: tuple[FieldFlag, ...] = ()

    @property
    def flagged(self) -> tuple[str, ...]:
        """The fields with at least one flag, in order."""
        return tuple(dict.fromkeys(flag.path for flag in self.flags))

    @property
    def score(self) -> float | None:
        """The share of checked fields without a flag (None when nothing was checked)."""
        if not self.checked:
            return None
        return 1.0 - len(self.flagged) / len(self.checked)

    @property
    def label(self) -> str:
        """``flagged``, ``ok``, or ``unchecked`` when no check applied."""
        if self.flags:
            return "flagged"
        return "ok" if self.checked else "unchecked"

    def with_flags(self, checked: tuple[str, ...], flags: tuple[FieldFlag, ...]) -> CallVerdict:
        """This verdict with more checked fields and flags (the judge's)."""
        return CallVerdict(tuple(dict.fromkeys((*self.checked, *checked))), (*self.flags, *flags))


@dataclass(frozen=True, slots=True)
class FieldView:
    """One field of one call, as the checks see it.

    Attributes:
        path: The field.
        old: Its value in the pre-state (`FieldView.absent` when it had none or there is no
            pre-state).
        new: Its value in the post-state (`FieldView.absent` when removed).
        changed: Whether the call wrote it (differs from the pre-state; always True without
            a pre-state).
        has_pre_state: Whether the call's pre-state is known.
        grounding: The input, read for `Grounding.supports`.
        input_text: The input's text.
    """

    path: str
    old: Any
    new: Any
    changed: bool
    has_pre_state: bool
    grounding: Grounding
    input_text: str

    absent: Any = field(default=_ABSENT, init=False, repr=False)


PASSED = True
"""What a check returns for a field that passes it."""

Check = Callable[["NoGoldChecks", FieldView], FieldFlag | bool | None]


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _grounded(checks: NoGoldChecks, view: FieldView) -> FieldFlag | bool | None:
    if view.new is _ABSENT or not view.changed or not checks.is_grounded(view.path):
        return None
    form = view.grounding.supports(view.new)
    if form is None:
        return None
    if form is not False:
        return PASSED
    return FieldFlag(
        view.path,
        "grounded",
        f"{_shown(view.new)} is not written in the input (as text, number, date or phone)",
    )


def _unexplained(checks: NoGoldChecks, view: FieldView) -> FieldFlag | bool | None:
    if not checks.unexplained_changes or not view.has_pre_state or not view.changed:
        return None
    body = view.grounding.body()  # a signature block explains nothing
    if any(body.mentions(word) for word in _name_words(view.path)):
        return PASSED
    for value in (view.old, view.new):
        if value is not _ABSENT and body.supports(value):
            return PASSED
    if view.new is _ABSENT:
        what = f"removed (was {_shown(view.old)})"
    elif view.old is _ABSENT:
        what = f"set to {_shown(view.new)}"
    else:
        what = f"changed from {_shown(view.old)} to {_shown(view.new)}"
    return FieldFlag(
        view.path,
        "unexplained_change",
        f"{what}, but the input mentions neither the field nor either value",
    )


def _rule(checks: NoGoldChecks, view: FieldView) -> FieldFlag | bool | None:
    if view.new is _ABSENT:
        return None
    criteria = checks.criteria_of(view.path)
    if not criteria:
        return None
    result = check_criteria(view.new, criteria, None)
    if result.passed:
        return PASSED
    return FieldFlag(view.path, "rule", f"{_shown(view.new)}: {result.explanation}")


def _slot_value(checks: NoGoldChecks, view: FieldView) -> FieldFlag | bool | None:
    allowed = checks.allowed_values(view.path)
    if view.new is _ABSENT or allowed is None or not isinstance(view.new, str):
        return None
    if view.new.casefold().strip() in allowed:
        return PASSED
    return FieldFlag(
        view.path,
        "slot_value",
        f"{_shown(view.new)} is not one of the slot's values ({len(allowed)} listed)",
    )


CHECKS: Mapping[str, Check] = {
    "grounded": _grounded,
    "unexplained_change": _unexplained,
    "rule": _rule,
    "slot_value": _slot_value,
}
"""The no-gold checks by name, in the order they run: a new check is one function and one
line here."""

CHECK_NAMES: tuple[str, ...] = (*CHECKS, "judge")
"""Every check a flag can name (``judge``: the reference-free LLM judge)."""


@functools.lru_cache(maxsize=4096)
def _name_words(path: str) -> tuple[str, ...]:
    """The words of a field's name (its last segment): ``renewal_date`` -> renewal, date."""
    name = path.rsplit(".", 1)[-1]
    return tuple(w for w in _NAME_WORDS.findall(name) if len(w) >= 3 and not w.isdigit())


class NoGoldChecks:
    """The checks of one monitor, ready to run on calls.

    Args:
        grounded: Paths or globs checked for grounding (``"*"`` for every field).
        unexplained_changes: Flag changes the input does not explain.
        checks: Path or glob -> criteria (the monitor's ``checks:``).
        policies: Field policies: two values equal under a field's policy are no change.
        slot_schema: Categorical slots whose values are checked.
    """

    __slots__ = (
        "_allowed",
        "_checks",
        "_criteria_cache",
        "_grounded",
        "_grounded_cache",
        "policies",
        "unexplained_changes",
    )

    def __init__(
        self,
        *,
        grounded: tuple[str, ...] = (),
        unexplained_changes: bool = False,
        checks: Mapping[str, tuple[Criterion, ...]] | None = None,
        policies: FieldPolicies | None = None,
        slot_schema: SlotSchema | None = None,
    ) -> None:
        self._grounded = grounded
        self.unexplained_changes = unexplained_changes
        self._checks = dict(checks or {})
        self.policies = policies or FieldPolicies()
        self._allowed = {
            slot.path: frozenset(v.casefold().strip() for v in slot.possible_values)
            for slot in (slot_schema.slots if slot_schema is not None else ())
            if slot.categorical and slot.possible_values
        }
        self._grounded_cache: dict[str, bool] = {}
        self._criteria_cache: dict[str, tuple[Criterion, ...]] = {}

    @classmethod
    def of(cls, monitor: Monitor) -> NoGoldChecks:
        """The checks a monitor file asks for."""
        return cls(
            grounded=monitor.grounded,
            unexplained_changes=monitor.unexplained_changes,
            checks=monitor.checks,
            policies=monitor.policies,
            slot_schema=monitor.slot_schema,
        )

    def is_grounded(self, path: str) -> bool:
        """Whether ``path`` is checked for grounding."""
        cached = self._grounded_cache.get(path)
        if cached is None:
            cached = any(_matches(path, pattern) for pattern in self._grounded)
            self._grounded_cache[path] = cached
        return cached

    def criteria_of(self, path: str) -> tuple[Criterion, ...]:
        """The ``checks:`` criteria that apply to ``path``."""
        cached = self._criteria_cache.get(path)
        if cached is None:
            cached = tuple(
                c
                for pattern, criteria in self._checks.items()
                if _matches(path, pattern)
                for c in criteria
            )
            self._criteria_cache[path] = cached
        return cached

    def allowed_values(self, path: str) -> frozenset[str] | None:
        """The values a categorical slot may take (casefolded), None for other fields."""
        return self._allowed.get(path)

    def check(self, call: MappedCall) -> CallVerdict:
        """Run every check on every field of ``call``."""
        post = call.post_state.to_flat()
        pre = {} if call.pre_state is None else call.pre_state.to_flat()
        grounding = Grounding(call.input_text)
        checked: list[str] = []
        flags: list[FieldFlag] = []
        for path in dict.fromkeys((*post, *pre)):
            old = pre.get(path, _ABSENT)
            new = post.get(path, _ABSENT)
            view = FieldView(
                path,
                old,
                new,
                self._changed(path, old, new) if call.pre_state is not None else True,
                call.pre_state is not None,
                grounding,
                call.input_text,
            )
            applied = False
            for check in CHECKS.values():
                outcome = check(self, view)
                if outcome is None:
                    continue
                applied = True
                if isinstance(outcome, FieldFlag):
                    flags.append(outcome)
            if applied:
                checked.append(path)
        return CallVerdict(tuple(checked), tuple(flags))

    def _changed(self, path: str, old: Any, new: Any) -> bool:
        if old is _ABSENT or new is _ABSENT:
            return old is not new
        if old == new and type(old) is type(new):
            return False
        compared = compare_field(
            path, ValueConfidence(old, 1.0), ValueConfidence(new, 1.0), self.policies.for_path(path)
        )
        return compared.status is not FieldStatus.MATCHING


def _matches(path: str, pattern: str) -> bool:
    if _GLOB.intersection(pattern):
        return fnmatchcase(path, pattern)
    return path == pattern or path.startswith(pattern + ".")
