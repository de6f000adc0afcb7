"""Lists of records: expected and actual items paired one to one, then compared sub-field by
sub-field (``list_mode: align``).

An item is an object; its sub-fields are named ``<path>[].<key>`` (``line_items[].quantity``)
and compared under the policy `FieldPolicies` gives that name (the seed rule by default), so a
sub-field may have its own normalisers, tolerance, typed comparator, weight, or be a list of
records itself (nested lists recurse: ``orders[].lines[].sku``).

Pairing: with ``item_key``, items pair by equal ids (in order among duplicates); otherwise by
the optimal assignment (`scipy.optimize.linear_sum_assignment`) on item similarity: the
weighted share of sub-fields (the union of both items' keys) that match, a nested list counting
its own score. Identical items pair first without the assignment, so a reordered list costs one
pass. A pair less similar than ``item_threshold`` is not a pair: a missing and an extra item.

Per item: ``matched`` (every sub-field matches), ``partial``, ``missing`` or ``extra``; per
sub-field of a pair: correct or wrong (or missing / extra when one item lacks the key); every
sub-field of an unpaired item is missing or extra. Duplicates count: two equal expected items
and one actual make one matched and one missing item.

The list's score is the summed similarity of its pairs over the longer list's length (a
reorder-only list scores 1.0, one wrong sub-field of four in one of four items 0.9375), the
quantity stickler-eval calls a structured list's similarity.

Example:
    >>> from stateval.compare._field_policies import FieldPolicies
    >>> want = [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]
    >>> got = [{"sku": "B", "qty": 3}, {"sku": "A", "qty": 1}]
    >>> found = align_records("items", want, got, FieldPolicies(), threshold=0.5)
    >>> [(i.status, i.expected_index, i.actual_index) for i in found.items]
    [('matched', 0, 1), ('partial', 1, 0)]
    >>> found.score, found.summary()
    (0.75, '2 items: 1 matched, 1 partial (items[1].qty), 0 missing, 0 extra')
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson

from stateval.compare._match import match_values
from stateval.compare._policy import MatchPolicy
from stateval.compare._typed import COMPARATORS, Unreadable

if TYPE_CHECKING:
    from stateval.compare._field_policies import FieldPolicies

__all__ = [
    "ItemResult",
    "RecordAlignment",
    "SubOutcome",
    "align_records",
    "is_item_path",
    "is_records",
    "item_path",
]

ItemStatus = Literal["matched", "partial", "missing", "extra"]
SubStatus = Literal["correct", "wrong", "missing", "extra"]


def item_path(path: str, key: str) -> str:
    """The name of sub-field ``key`` of the items of ``path``: ``line_items[].quantity``."""
    return f"{path}[].{key}"


def is_item_path(path: str) -> bool:
    """Whether ``path`` names a sub-field of a list's items (``line_items[].quantity``): it is
    counted per item, beside its list field, never as a field of the state."""
    return "[]." in path


@dataclass(frozen=True, slots=True)
class SubOutcome:
    """One sub-field of one item: its name (``line_items[].quantity``) and outcome."""

    path: str
    status: SubStatus


@dataclass(frozen=True, slots=True)
class ItemResult:
    """One item: its positions (None on the side that lacks it), status, similarity in [0, 1]
    and its sub-fields' outcomes (nested lists' sub-fields included)."""

    expected_index: int | None
    actual_index: int | None
    status: ItemStatus
    similarity: float
    fields: tuple[SubOutcome, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (wrong sub-fields named)."""
        return {
            "expected_index": self.expected_index,
            "actual_index": self.actual_index,
            "status": self.status,
            "similarity": self.similarity,
            "not_correct": [f"{s.path}:{s.status}" for s in self.fields if s.status != "correct"],
        }


@dataclass(frozen=True, slots=True)
class RecordAlignment:
    """How two lists of records line up: items in expected order, then extra items."""

    path: str
    items: tuple[ItemResult, ...]
    score: float

    @property
    def all_matched(self) -> bool:
        """Every item paired and every sub-field right."""
        return all(i.status == "matched" for i in self.items)

    def sub_outcomes(self) -> list[SubOutcome]:
        """Every sub-field outcome of every item, in item order."""
        return [s for item in self.items for s in item.fields]

    def counts(self) -> dict[str, int]:
        """Items by status."""
        out = dict.fromkeys(("matched", "partial", "missing", "extra"), 0)
        for item in self.items:
            out[item.status] += 1
        return out

    def summary(self) -> str:
        """One line: items by status, the wrong sub-fields of partial items named."""
        c = self.counts()
        wrong = [
            f"{self.path}[{i.expected_index}].{s.path.rsplit('[].', 1)[-1]}"
            for i in self.items
            if i.status == "partial"
            for s in i.fields
            if s.status != "correct"
        ]
        partial = f"{c['partial']} partial" + (f" ({', '.join(wrong[:5])})" if wrong else "")
        n = sum(1 for i in self.items if i.expected_index is not None)
        head = f"{n} items: {c['matched']} matched, {partial}"
        return f"{head}, {c['missing']} missing, {c['extra']} extra"


_NEVER = object()


def _freeze(value: Any) -> Hashable:
    """A hashable key equal for two values exactly when `json_equal` says they are."""
    if isinstance(value, bool) or value is None:
        return ("j", value)
    if isinstance(value, int | float):
        return ("n", float(value))
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list | tuple):
        return ("l", tuple(_freeze(v) for v in value))
    if isinstance(value, Mapping):
        return ("d", tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    return ("o", json.dumps(value, default=repr))


def _keyer(policy: MatchPolicy) -> Any:
    """A function giving values a key equal exactly when ``policy`` matches them (values
    only), or None when the policy is not an equivalence (tolerances, fuzzy, list modes)."""
    if policy.list_mode != "exact" or policy.fuzzy is not None:
        return None
    if policy.numeric_tolerance is not None:
        return None
    if policy.comparator is not None:
        if policy.date_tolerance is not None or policy.comparator == "unit":
            return None
        comparator = COMPARATORS[policy.comparator]

        def typed(value: Any) -> Hashable:
            if isinstance(value, list):
                return ("l", tuple(typed(v) for v in value))
            try:
                return ("t", comparator.read(value, policy))
            except Unreadable:
                return ("x", id(value), object())  # unreadable: matches nothing

        return typed
    if policy.is_strict:
        return _freeze

    def canonical(value: Any) -> Hashable:
        if isinstance(value, str):
            return ("s", policy.canonical(value))
        if isinstance(value, list):
            return ("l", tuple(canonical(v) for v in value))
        if isinstance(value, Mapping):
            return ("d", tuple(sorted((k, canonical(v)) for k, v in value.items())))
        return _freeze(value)

    return canonical


class _Aligner:
    """Compares the items of one list path (sub-policies resolved once per key)."""

    def __init__(self, path: str, policies: FieldPolicies) -> None:
        self.path = path
        self.policies = policies
        self._subs: dict[str, tuple[str, MatchPolicy]] = {}

    def sub(self, key: str) -> tuple[str, MatchPolicy]:
        found = self._subs.get(key)
        if found is None:
            name = item_path(self.path, key)
            found = self._subs[key] = (name, self.policies.for_path(name))
        return found

    def keys(self, e: Mapping[str, Any], a: Mapping[str, Any]) -> list[str]:
        keys = [k for k in e if not self.sub(k)[1].ignore]
        keys += [k for k in a if k not in e and not self.sub(k)[1].ignore]
        return keys

    def compare_pair(
        self, e: Mapping[str, Any], a: Mapping[str, Any]
    ) -> tuple[float, list[SubOutcome]]:
        """Similarity of two items and their sub-field outcomes."""
        total = got = 0.0
        outcomes: list[SubOutcome] = []
        for key in self.keys(e, a):
            name, policy = self.sub(key)
            weight = policy.weight
            total += weight
            if key not in a:
                outcomes.append(SubOutcome(name, "missing"))
                continue
            if key not in e:
                outcomes.append(SubOutcome(name, "extra"))
                continue
            if policy.list_mode == "align" and is_records(e[key]) and is_records(a[key]):
                nested = align_records(
                    name,
                    e[key],
                    a[key],
                    self.policies,
                    threshold=policy.item_threshold,
                    key=policy.item_key,
                )
                got += weight * nested.score
                outcomes.extend(nested.sub_outcomes())
                outcomes.append(SubOutcome(name, "correct" if nested.all_matched else "wrong"))
                continue
            ok = match_values(policy, e[key], a[key]).matched
            got += weight * ok
            outcomes.append(SubOutcome(name, "correct" if ok else "wrong"))
        return (got / total if total else 1.0), outcomes

    def unpaired(self, item: Mapping[str, Any], status: SubStatus) -> list[SubOutcome]:
        out: list[SubOutcome] = []
        for key in item:
            name, policy = self.sub(key)
            if policy.ignore:
                continue
            if policy.list_mode == "align" and is_records(item[key]):
                inner = _Aligner(name, self.policies)
                for nested in item[key]:
                    out.extend(inner.unpaired(nested, status))
            out.append(SubOutcome(name, status))
        return out

    def similarity_matrix(
        self, want: Sequence[Mapping[str, Any]], got: Sequence[Mapping[str, Any]]
    ) -> Any:
        """Item similarities, vectorised per sub-field whose policy is an equivalence."""
        import numpy as np

        keys = list(dict.fromkeys(k for item in (*want, *got) for k in item))
        keys = [k for k in keys if not self.sub(k)[1].ignore]
        score = np.zeros((len(want), len(got)))
        total = np.zeros((len(want), len(got)))
        for key in keys:
            policy = self.sub(key)[1]
            w = policy.weight
            has_e = np.array([key in item for item in want])
            has_a = np.array([key in item for item in got])
            total += w * (has_e[:, None] | has_a[None, :])
            keyer = None if policy.list_mode == "align" else _keyer(policy)
            if keyer is not None:
                ids: dict[Hashable, int] = {}
                e_ids = np.array(
                    [ids.setdefault(keyer(i[key]), len(ids)) if key in i else -1 for i in want]
                )
                a_ids = np.array(
                    [ids.setdefault(keyer(i[key]), len(ids)) if key in i else -2 for i in got]
                )
                score += w * (e_ids[:, None] == a_ids[None, :])
                continue
            for r, e in enumerate(want):
                for c, a in enumerate(got):
                    if key in e and key in a:
                        sim, _ = self.compare_pair({key: e[key]}, {key: a[key]})
                        score[r, c] += w * sim
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, score / np.where(total > 0, total, 1), 1.0)


def is_records(value: Any) -> bool:
    """True for a list of objects (what ``list_mode: align`` pairs item by item)."""
    return isinstance(value, list) and all(isinstance(v, Mapping) for v in value)


def _by_key(
    want: Sequence[Mapping[str, Any]], got: Sequence[Mapping[str, Any]], key: str
) -> list[tuple[int, int]]:
    def ident(item: Mapping[str, Any]) -> Hashable:
        node: Any = item
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return _NEVER
            node = node[part]
        return _freeze(node)

    waiting: dict[Hashable, list[int]] = {}
    for j, item in enumerate(got):
        waiting.setdefault(ident(item), []).append(j)
    pairs = []
    for i, item in enumerate(want):
        k = ident(item)
        if k is not _NEVER and waiting.get(k):
            pairs.append((i, waiting[k].pop(0)))
    return pairs


def _identity(item: Mapping[str, Any]) -> Hashable:
    """A key equal for identical items (stricter than `json_equal`: ``1`` and ``1.0`` differ,
    which only sends such a pair to the assignment)."""
    try:
        return orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return _freeze(item)


def _assign(
    aligner: _Aligner, want: Sequence[Mapping[str, Any]], got: Sequence[Mapping[str, Any]]
) -> list[tuple[int, int]]:
    """Identical items first, then the optimal assignment of the rest."""
    waiting: dict[Hashable, list[int]] = {}
    for j, item in enumerate(got):
        waiting.setdefault(_identity(item), []).append(j)
    pairs: list[tuple[int, int]] = []
    rest_e: list[int] = []
    for i, item in enumerate(want):
        slots = waiting.get(_identity(item))
        if slots:
            pairs.append((i, slots.pop(0)))
        else:
            rest_e.append(i)
    taken = {j for _, j in pairs}
    rest_a = [j for j in range(len(got)) if j not in taken]
    if len(rest_e) == 1 and len(rest_a) == 1:
        pairs.append((rest_e[0], rest_a[0]))  # the only candidates: the threshold decides
    elif rest_e and rest_a:
        from scipy.optimize import linear_sum_assignment

        sim = aligner.similarity_matrix([want[i] for i in rest_e], [got[j] for j in rest_a])
        rows, cols = linear_sum_assignment(sim, maximize=True)
        pairs.extend((rest_e[r], rest_a[c]) for r, c in zip(rows, cols, strict=True))
    return pairs


def align_records(
    path: str,
    expected: Sequence[Mapping[str, Any]],
    actual: Sequence[Mapping[str, Any]],
    policies: FieldPolicies,
    *,
    threshold: float = 0.5,
    key: str | None = None,
) -> RecordAlignment:
    """Pair the items of two lists of records and compare each pair (see the module docs).

    Args:
        path: The list's field path (sub-fields are ``<path>[].<key>``).
        expected: The expected items (objects).
        actual: The actual items.
        policies: Where each sub-field's policy comes from.
        threshold: Pairs less similar than this are unpaired.
        key: Pair by this dotted id key instead of by similarity.
    """
    aligner = _Aligner(path, policies)
    pairs = _by_key(expected, actual, key) if key else _assign(aligner, expected, actual)
    by_e: dict[int, ItemResult] = {}
    paired_a: set[int] = set()
    extra_items: list[ItemResult] = []
    total = 0.0
    for i, j in pairs:
        sim, outcomes = aligner.compare_pair(expected[i], actual[j])
        if sim < threshold or (sim == 0.0 and not key):
            extra_items.append(
                ItemResult(None, j, "extra", 0.0, tuple(aligner.unpaired(actual[j], "extra")))
            )
            paired_a.add(j)
            continue
        total += sim
        status: ItemStatus = (
            "matched" if all(o.status == "correct" for o in outcomes) else "partial"
        )
        by_e[i] = ItemResult(i, j, status, sim, tuple(outcomes))
        paired_a.add(j)
    items = [
        by_e.get(i) or ItemResult(i, None, "missing", 0.0, tuple(aligner.unpaired(e, "missing")))
        for i, e in enumerate(expected)
    ]
    items += [
        ItemResult(None, j, "extra", 0.0, tuple(aligner.unpaired(a, "extra")))
        for j, a in enumerate(actual)
        if j not in paired_a
    ]
    items += sorted(extra_items, key=lambda r: r.actual_index or 0)
    longest = max(len(expected), len(actual))
    score = total / longest if longest else 1.0
    return RecordAlignment(path, tuple(items), score)
