"""The checks of a suite that need every case, made in the one pass that reads the cases.

`load_suite` reads a JSONL case file once to validate it; `CaseAudit.add` is called with each
valid case as it is read, so checking the suite's policies, slot values and human verdicts
against its cases never reads the file again.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from stateval.compare import FieldPolicies, path_matches
from stateval.suite._case import Case
from stateval.suite._frame_audit import FrameAudit
from stateval.suite._metric_settings import scorer_label
from stateval.suite._models import SlotsFileSpec, SuiteModel
from stateval.suite._problems import Locate, format_problem
from stateval.suite._slot_schema import SlotSchema

__all__ = ["AuditPart", "CaseAudit"]

_GLOB = frozenset("*?[")
_MAX_VALUE_PROBLEMS = 20


class AuditPart(NamedTuple):
    """What a `CaseAudit` gathered from some of the cases (plain values: it pickles back from
    another process; see `CaseAudit.take`)."""

    known: set[str]
    human: list[tuple[str, str]]
    values: list[str]
    n_values: int
    list_gold: dict[str, tuple[str, Any]]
    scalar_gold: set[str]
    frames: tuple[int, int, list[str]] | None


class CaseAudit:
    """What a suite's settings must agree with in its cases, gathered one case at a time.

    Args:
        model: The suite file's settings.
        schema: The slot schema, if any.
        policies: The suite's field policies (the schema's included).
        where: How problems name the case file (the suite file for inline cases).
    """

    def __init__(
        self,
        model: SuiteModel,
        schema: SlotSchema | None,
        policies: FieldPolicies,
        where: str,
    ) -> None:
        self._model = model
        self._schema = schema
        self._policies = policies
        self._where = where
        self._known: set[str] = set()
        self._human: list[tuple[str, str]] = []
        self._values: list[str] = []
        self._n_values = 0
        self._allowed: dict[str, dict[str, str]] = {}
        self._slots = frozenset(() if schema is None else schema.paths)
        self._list_gold: dict[str, tuple[str, Any]] = {}  # path -> (case id, first list value)
        self._scalar_gold: set[str] = set()
        options = model.metrics.to_options()
        key = model.slots.services_key if isinstance(model.slots, SlotsFileSpec) else None
        self._frames = None
        if options.scope == "frame" and key is not None:
            self._frames = FrameAudit(key, scorer_label(options), where)
        if schema is not None:
            for slot in schema.slots:
                if slot.categorical and slot.possible_values:
                    policy = policies.for_path(slot.path)
                    self._allowed[slot.path] = {
                        policy.canonical(v): v for v in schema.legal_values(slot)
                    }

    def add(self, case: Case) -> None:
        """Take one valid case into account."""
        expected = case.expected_post_state
        flat = expected.flat_values
        if flat is not None:
            self.add_valid(case.id, flat.values, flat.all_strings, case.human, case.metadata)
        else:
            self.add_valid(case.id, expected.to_flat(), False, case.human, case.metadata)

    def add_valid(
        self,
        case_id: str,
        gold: Mapping[str, Any],
        all_strings: bool,
        human: Collection[str],
        metadata: Mapping[str, Any],
    ) -> None:
        """Take one valid case into account from its parts: its expected post-state's best
        value per path (``all_strings``: every one is known to be a string), the paths with a
        human verdict and its metadata (what the validating pass keeps of a case line)."""
        self._known.update(gold)
        if all_strings:
            self._scalar_gold.update(gold)
        else:
            for path, value in gold.items():
                if isinstance(value, list):
                    self._add_items(path, value)
                    self._list_gold.setdefault(path, (case_id, value))
                else:
                    self._scalar_gold.add(path)
        for path in human:
            if self._policies.for_path(path).judge is None:
                self._human.append((case_id, path))
        for path, values in self._allowed.items():
            if path in gold:
                self._check_values(case_id, path, gold[path], values)
        if self._frames is not None:
            self._frames.add(case_id, metadata)

    def fresh(self) -> CaseAudit:
        """An audit of the same settings that has seen no case (for a part of the cases)."""
        return CaseAudit(self._model, self._schema, self._policies, self._where)

    def gathered(self) -> AuditPart:
        """What this audit gathered, as plain values."""
        frames = None if self._frames is None else self._frames.gathered()
        return AuditPart(
            self._known,
            self._human,
            self._values,
            self._n_values,
            self._list_gold,
            self._scalar_gold,
            frames,
        )

    def take(self, part: AuditPart) -> None:
        """Take into account what an audit of the next cases gathered (`gathered`), as if
        this audit had seen them one by one."""
        self._known |= part.known
        self._scalar_gold |= part.scalar_gold
        for path, first in part.list_gold.items():
            self._list_gold.setdefault(path, first)
        self._human.extend(part.human)
        self._values.extend(part.values[: max(0, _MAX_VALUE_PROBLEMS - len(self._values))])
        self._n_values += part.n_values
        if self._frames is not None and part.frames is not None:
            self._frames.take(part.frames)

    def _add_items(self, path: str, items: list[Any]) -> None:
        """The sub-fields of a list of records (``line_items[].quantity``) are known paths."""
        for item in items:
            if not isinstance(item, dict):
                return
            for key, value in item.items():
                sub = f"{path}[].{key}"
                self._known.add(sub)
                if isinstance(value, list):
                    self._add_items(sub, value)

    def _check_values(self, case_id: str, path: str, value: Any, values: Mapping[str, str]) -> None:
        """An expected value of a categorical slot that is none of its possible values (after
        the slot's normalisers) is a labelling mistake."""
        policy = self._policies.for_path(path)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and policy.canonical(item) in values:
                continue
            self._n_values += 1
            if self._n_values > _MAX_VALUE_PROBLEMS:
                continue
            message = f"{item!r} is not one of the slot's possible values"
            close = difflib.get_close_matches(str(item), list(values.values()), n=1)
            if close:
                message += f" (did you mean {close[0]!r}?)"
            self._values.append(format_problem(self._where, None, case_id, path, message))

    def pattern_problems(self, slots: tuple[str, ...], label: str, locate: Locate) -> list[str]:
        """A policy or field threshold whose path matches no slot and no expected field is a
        typo that would silently fall back to another policy: one problem line each."""
        known = self._known | set(slots)
        problems = []
        sections: tuple[tuple[str, Collection[str]], ...] = (
            ("policies", self._model.policies),
            ("thresholds.fields", self._model.thresholds.fields),
            ("thresholds.critical_fields", self._model.thresholds.critical_fields),
        )
        for section, patterns in sections:
            for i, pattern in enumerate(patterns):
                if pattern == "*" or pattern in known:
                    continue
                if _GLOB.intersection(pattern) and any(path_matches(p, pattern) for p in known):
                    continue
                message = "matches no slot and no expected field"
                close = difflib.get_close_matches(pattern, sorted(known), n=1)
                if close:
                    message += f" (did you mean {close[0]!r}?)"
                loc: tuple[str | int, ...] = (*section.split("."), pattern)
                at: tuple[str | int, ...] = (
                    loc if isinstance(patterns, Mapping) else (*section.split("."), i)
                )
                problems.append(format_problem(label, locate(at), None, loc, message))
        return problems

    def value_problems(self) -> list[str]:
        """Expected values of categorical slots outside their possible values (the first 20,
        then how many more)."""
        more = self._n_values - _MAX_VALUE_PROBLEMS
        if more > 0:
            return [
                *self._values,
                format_problem(self._where, None, None, None, f"... and {more} more"),
            ]
        return list(self._values)

    def frame_problems(self) -> list[str]:
        """Under frame scope, cases that name no services (`FrameAudit`)."""
        return [] if self._frames is None else self._frames.problems()

    def list_warnings(self) -> list[str]:
        """A field whose expected value is a list, compared as a whole list (``list_mode:
        exact``), though it is a slot of the schema (a slot holds one value) or is a plain value
        in other cases: a plain predicted value never matches such gold (SGD's ``["1"]`` against
        ``"1"`` scored every categorical slot 0%). One line per field, naming the fix."""
        out = []
        for path, (case_id, value) in self._list_gold.items():
            if self._policies.for_path(path).list_mode != "exact":
                continue
            if path not in self._slots and path not in self._scalar_gold:
                continue
            why = "a slot of the schema" if path in self._slots else "a plain value elsewhere"
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            out.append(
                format_problem(
                    self._where,
                    None,
                    case_id,
                    path,
                    f"expected value {shown} is a list but {why}, and its policy compares whole "
                    "lists, so a plain predicted value scores wrong; add 'list_mode: any_of' to "
                    "its policy (or 'set' when predictions are lists too)",
                )
            )
        return out

    def human_problems(self, label: str) -> list[str]:
        """Human verdicts are on fields an LLM judges: a verdict on any other field is a
        problem."""
        return [
            format_problem(
                label,
                None,
                case_id,
                f"human.{path}",
                "a human verdict on a field no LLM judges (its policy has no 'judge: llm')",
            )
            for case_id, path in self._human
        ]
