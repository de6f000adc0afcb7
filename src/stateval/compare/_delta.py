"""The delta view: score what a mutator was expected to change apart from what it should keep."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from itertools import compress
from operator import not_

from stateval.compare._comparison import StateComparison, compare_states
from stateval.compare._decide import decide_statuses
from stateval.compare._field_comparison import FieldComparison, FieldStatus
from stateval.compare._field_policies import FieldPolicies
from stateval.compare._policy import MatchPolicy
from stateval.state import InterpretiveState

__all__ = ["DeltaComparison", "compare_delta", "delta_of", "split_delta"]


@dataclass(frozen=True, slots=True)
class DeltaComparison:
    """A comparison split into the fields the mutator should change and those it should keep.

    Every compared path lands in exactly one of the two views.

    Attributes:
        changed: Expected paths whose best candidate differs from the pre-state's (or that the
            pre-state lacks), pre-state paths the expected state drops (kept in the actual
            state, they count as extra), and paths only the actual state holds (extra).
        preserved: Expected paths whose best candidate equals the pre-state's under the policy.
        changed_paths: Paths the mutator was expected to set or remove, in expected then
            pre-state order (independent of the actual state).
        preserved_paths: Paths the mutator was expected to leave as they were.
    """

    changed: StateComparison
    preserved: StateComparison
    changed_paths: tuple[str, ...] = ()
    preserved_paths: tuple[str, ...] = ()

    @property
    def changed_accuracy(self) -> float:
        """`StateComparison.accuracy_score` of `changed` (0.0 when `n_changed` is 0)."""
        return self.changed.accuracy_score

    @property
    def preserved_accuracy(self) -> float:
        """`StateComparison.accuracy_score` of `preserved` (0.0 when `n_preserved` is 0)."""
        return self.preserved.accuracy_score

    @property
    def n_changed(self) -> int:
        """Expected fields in the changed view (the denominator of `changed_accuracy`)."""
        return self.changed.n_expected

    @property
    def n_preserved(self) -> int:
        """Expected fields in the preserved view (the denominator of `preserved_accuracy`)."""
        return self.preserved.n_expected


def compare_delta(
    pre: InterpretiveState,
    expected: InterpretiveState,
    actual: InterpretiveState,
    policies: FieldPolicies | MatchPolicy | None = None,
) -> DeltaComparison:
    """Compare ``actual`` with ``expected``, split by what changed from ``pre`` to ``expected``.

    Whether an expected field "changed" is decided by the field's own policy (so a field whose
    confidence is ignored is preserved when only its confidence moved). A mutator that clobbers
    fields it should have kept scores below 1.0 on `DeltaComparison.preserved_accuracy`.
    """
    resolved = FieldPolicies.of(policies)
    return split_delta(compare_states(expected, actual, resolved), pre, expected, resolved)


def split_delta(
    comparison: StateComparison,
    pre: InterpretiveState,
    expected: InterpretiveState,
    policies: FieldPolicies | MatchPolicy | None = None,
) -> DeltaComparison:
    """Split an existing comparison of ``expected`` with an actual state into the delta view.

    ``comparison`` is not recomputed (a field an LLM judge ruled on keeps its verdict): its
    fields are sorted into the changed and preserved views by comparing ``expected`` with
    ``pre`` under each field's policy, as `compare_delta` does.
    """
    resolved = FieldPolicies.of(policies)
    # expected against pre: expected paths in order, then the pre-state's others; a path
    # kept as it was is a matching one (strict policies decided by equality, nothing made;
    # the statuses only, as `compare_states` decides them, without a comparison around them)
    paths, statuses, _, _ = decide_statuses(expected, pre, resolved, None)
    kept = list(map(FieldStatus.MATCHING.__eq__, statuses))
    return delta_of(
        comparison, tuple(compress(paths, kept)), tuple(compress(paths, map(not_, kept)))
    )


def delta_of(
    comparison: StateComparison, preserved: tuple[str, ...], changed: tuple[str, ...]
) -> DeltaComparison:
    """The delta view of ``comparison`` once the paths the case expects kept (``preserved``)
    and changed (``changed``) are known (`split_delta`, `stateval.compare.StrictCase`)."""
    keep = set(preserved)
    return DeltaComparison(
        changed=_view(comparison, keep, keep=False),
        preserved=_view(comparison, keep, keep=True),
        changed_paths=changed,
        preserved_paths=preserved,
    )


def _view(comparison: StateComparison, paths: Collection[str], *, keep: bool) -> StateComparison:
    """The comparison of only ``paths`` (``keep=False``: of every other path), in its order,
    sharing its statuses and the field comparisons made so far (none is made for the view).

    Example:
        >>> both = compare_states(InterpretiveState.from_flat({"a": 1, "b": 2}),
        ...                       InterpretiveState.from_flat({"a": 1, "b": 3}))
        >>> _view(both, {"a"}, keep=True).counts["matching"], _view(both, {"a"}, keep=False).paths
        (1, ('b',))
    """

    def decide() -> tuple[
        list[str], list[FieldStatus], Callable[[int], FieldComparison], dict[int, FieldComparison]
    ]:
        chosen = [item for item in comparison.items() if (item[0] in paths) is keep]
        made = {j: f for j, (_, _, f) in enumerate(chosen) if f is not None}

        def make(j: int) -> FieldComparison:
            found = comparison.field(chosen[j][0])
            assert found is not None  # a path of the comparison
            return found

        return [p for p, _, _ in chosen], [s for _, s, _ in chosen], make, made

    return StateComparison.deferred(decide)
