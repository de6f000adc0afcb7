"""A repeated run (``stateval run --repeat N``): per field, the mean accuracy over repetitions
with a 95% interval, and how flaky the field is.

A case's correctness on a field is the mean over its repetitions (a repetition that did not
evaluate the field, nothing expected and nothing produced, has it right, as in a diff). The
interval is a seeded bootstrap over cases, so repetitions of one case are resampled together. A
case is *flaky* on a field when its repetitions disagree (some right, some wrong); the flakiness
rate is the share of such cases.

Beside flakiness, **pass^k** (τ-bench's reliability measure, `stateval.calibration.pass_hat_k`):
the chance that k repetitions all get it right, estimated without bias as the mean over items of
C(c, k) / C(n, k), for k = 1..N, per field (a case's field), per case (every field right, the
call not failed) and per episode (every turn right in one repetition).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from stateval.calibration import pass_k_curve
from stateval.regressions._scores import FIELD_PREFIX, Observation, ScoredRun
from stateval.regressions._stats import Interval, bootstrap_mean

__all__ = [
    "FieldStability",
    "Reliability",
    "RepetitionsBuilder",
    "field_stability",
    "print_reliability",
    "print_stability",
    "reliability",
]


@dataclass(frozen=True, slots=True)
class FieldStability:
    """One field over a repeated run.

    Attributes:
        path: The field.
        n: Cases that evaluated the field in some repetition.
        mean: Mean correctness over those cases (each case's mean over its repetitions).
        interval: Bootstrap 95% interval of ``mean`` (None with fewer than two cases).
        flaky: Cases whose repetitions disagree on the field.
        flaky_cases: Their ids.
        pass_k: k -> pass^k of the field over its cases (k = 1..repetitions).
    """

    path: str
    n: int
    mean: float
    interval: Interval | None
    flaky: int
    flaky_cases: tuple[str, ...] = ()
    pass_k: Mapping[int, float] = field(default_factory=dict)

    @property
    def flakiness(self) -> float:
        """Share of the field's cases whose repetitions disagree."""
        return self.flaky / self.n if self.n else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "path": self.path,
            "n": self.n,
            "mean": self.mean,
            "low": None if self.interval is None else self.interval.low,
            "high": None if self.interval is None else self.interval.high,
            "flaky": self.flaky,
            "flakiness": self.flakiness,
            "flaky_cases": list(self.flaky_cases),
            "pass_k": {str(k): v for k, v in self.pass_k.items()},
        }


def field_stability(
    run: ScoredRun, *, seed: int = 0, resamples: int = 2000
) -> tuple[FieldStability, ...]:
    """Every field's mean, interval and flakiness over ``run``'s repetitions, flakiest first
    (`RepetitionsBuilder.fields` of its cases).

    Example:
        >>> from stateval.regressions import Observation, ScoredRun
        >>> right, wrong = Observation({"field:a": 1.0}), Observation({"field:a": 0.0})
        >>> run = ScoredRun("r", {"c1": (right, wrong), "c2": (right, right)})
        >>> [(f.path, f.mean, f.flaky) for f in field_stability(run)]
        [('a', 0.75, 1)]
    """
    builder = RepetitionsBuilder()
    for case_id, reps in run.cases.items():
        builder.add(case_id, reps)
    return builder.fields(seed=seed, resamples=resamples)


class RepetitionsBuilder:
    """What `field_stability` and `reliability` report of a repeated run, from one case's
    repetitions at a time: per field, each case's mean correctness and its right and tried
    repetitions in arrays, the flaky cases' ids; per case, the same two counts; with
    ``episodes`` (episode -> its case ids), which repetitions of each case were right. A
    caller that reads a run case by case (`stateval.regressions.local_run`) keeps no
    observation alive: at 100,000 cases of 20 fields this is about 20 MB.

    Example:
        >>> from stateval.regressions import Observation
        >>> ok, bad = Observation({"field:a": 1.0}), Observation({"field:a": 0.0})
        >>> builder = RepetitionsBuilder()
        >>> builder.add("c1", (ok, bad))
        >>> builder.add("c2", (ok, ok))
        >>> [(f.path, f.mean, f.flaky_cases) for f in builder.fields()]
        [('a', 0.75, ('c1',))]
    """

    def __init__(self, episodes: Mapping[str, Sequence[str]] | None = None) -> None:
        self._episodes = episodes
        self._fields: dict[str, _FieldRows] = {}
        self._cases = _Counts()
        self._right: dict[str, bytes] = {}  # case id -> 1 per right repetition (with episodes)
        self._repetitions = 0

    def add(self, case_id: str, reps: Sequence[Observation]) -> None:
        """Count one case's repetitions (each case once)."""
        self._repetitions = max(self._repetitions, len(reps))
        names = {n for obs in reps for n in obs.scores if n.startswith(FIELD_PREFIX)}
        for name in names:
            values = [obs.scores.get(name, 1.0) for obs in reps]
            right = [v >= 1.0 for v in values]
            rows = self._fields.get(name)
            if rows is None:
                rows = self._fields[name] = _FieldRows()
            rows.means.append(sum(values) / len(values))
            rows.counts.add(sum(right), len(right))
            if len(set(right)) > 1:
                rows.flaky.append(case_id)
        passed = bytes(map(_right, reps))
        self._cases.add(passed.count(1), len(passed))
        if self._episodes:
            self._right[case_id] = passed

    def fields(self, *, seed: int = 0, resamples: int = 2000) -> tuple[FieldStability, ...]:
        """Every field's mean, interval and flakiness, flakiest first (`field_stability`)."""
        out = []
        for name, rows in self._fields.items():
            means = rows.means
            out.append(
                FieldStability(
                    path=name.removeprefix(FIELD_PREFIX),
                    n=len(means),
                    mean=sum(means) / len(means),
                    interval=bootstrap_mean(means, seed=seed, resamples=resamples),
                    flaky=len(rows.flaky),
                    flaky_cases=tuple(rows.flaky),
                    pass_k=pass_k_curve(rows.counts.pairs(), self._repetitions),
                )
            )
        out.sort(key=lambda f: (-f.flakiness, f.mean, f.path))
        return tuple(out)

    def reliability(self) -> Reliability:
        """pass^k of the cases and of the episodes (`reliability`)."""
        k_max = self._repetitions
        out_episodes: dict[int, float] = {}
        n_episodes = 0
        if self._episodes:
            per_episode = []
            for ids in self._episodes.values():
                passed = [self._right.get(c, b"") for c in ids]
                n = min(map(len, passed), default=0)
                if not ids or n == 0:
                    continue
                per_episode.append((sum(all(p[i] for p in passed) for i in range(n)), n))
            n_episodes = len(per_episode)
            out_episodes = pass_k_curve(per_episode, k_max)
        cases = self._cases
        return Reliability(
            k_max, pass_k_curve(cases.pairs(), k_max), len(cases), out_episodes, n_episodes
        )


class _Counts:
    """``(right, tried)`` per item, in the order added, as two arrays."""

    __slots__ = ("_right", "_tried")

    def __init__(self) -> None:
        self._right = array("l")
        self._tried = array("l")

    def add(self, right: int, tried: int) -> None:
        self._right.append(right)
        self._tried.append(tried)

    def pairs(self) -> Iterator[tuple[int, int]]:
        return zip(self._right, self._tried, strict=True)

    def __len__(self) -> int:
        return len(self._right)


class _FieldRows:
    """One field over the cases that evaluate it, in the order they were added."""

    __slots__ = ("counts", "flaky", "means")

    def __init__(self) -> None:
        self.means = array("d")
        self.counts = _Counts()
        self.flaky: list[str] = []


def print_stability(
    fields: tuple[FieldStability, ...], repetitions: int, console: Console, *, max_fields: int = 25
) -> None:
    """Print the per-field table of a repeated run (flakiest first)."""
    table = Table(
        title=f"fields over {repetitions} repetitions, flakiest first",
        title_justify="left",
        show_edge=False,
    )
    table.add_column("field", overflow="fold", min_width=12)
    for name in ("n", "mean", "95% interval", "flaky", "flakiness", f"pass^{repetitions}"):
        table.add_column(name, justify="right", no_wrap=True)
    for row in fields[:max_fields]:
        interval = (
            "n/a" if row.interval is None else f"[{row.interval.low:.1%}, {row.interval.high:.1%}]"
        )
        table.add_row(
            Text(row.path),
            str(row.n),
            f"{row.mean:.1%}",
            Text(interval),
            str(row.flaky),
            f"{row.flakiness:.1%}",
            _pct(row.pass_k.get(repetitions)),
            style="yellow" if row.flaky else None,
        )
    console.print(table)
    if len(fields) > max_fields:
        console.print(f"  ... and {len(fields) - max_fields} more fields")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _right(obs: Observation) -> bool:
    """One repetition of a case is right: the call did not fail and every scored slot (every
    field without a slot schema) is right."""
    if obs.error:
        return False
    slots = obs.scores.get("slot_accuracy")
    if slots is not None:
        return slots >= 1.0
    return obs.scores.get("overall_match", 0.0) >= 1.0


@dataclass(frozen=True, slots=True)
class Reliability:
    """pass^k of a repeated run's cases and episodes.

    Attributes:
        repetitions: N.
        cases: k -> pass^k over cases (a case passes a repetition when `_right`).
        n_cases: Cases counted.
        episodes: k -> pass^k over episodes (an episode passes a repetition when every turn of
            it does); empty without episodes.
        n_episodes: Episodes counted (those with every turn in every repetition).
    """

    repetitions: int
    cases: Mapping[int, float]
    n_cases: int
    episodes: Mapping[int, float] = field(default_factory=dict)
    n_episodes: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "cases": {str(k): v for k, v in self.cases.items()},
            "n_cases": self.n_cases,
            "episodes": {str(k): v for k, v in self.episodes.items()},
            "n_episodes": self.n_episodes,
        }


def reliability(run: ScoredRun, episodes: Mapping[str, Sequence[str]] | None = None) -> Reliability:
    """pass^k for k = 1..N of ``run``'s cases and, given ``episodes`` (episode -> its case
    ids), of its episodes.

    Example:
        >>> from stateval.regressions import Observation, ScoredRun
        >>> ok, bad = Observation({"overall_match": 1.0}), Observation({"overall_match": 0.0})
        >>> run = ScoredRun("r", {"t0": (ok, ok, ok), "t1": (ok, bad, ok)})
        >>> r = reliability(run, {"d": ["t0", "t1"]})
        >>> r.cases[3], r.episodes[1], r.episodes[3]
        (0.5, 0.6666666666666666, 0.0)
    """
    builder = RepetitionsBuilder(episodes)
    for case_id, reps in run.cases.items():
        builder.add(case_id, reps)
    return builder.reliability()


def print_reliability(result: Reliability, console: Console) -> None:
    """Print pass^k of the cases (and episodes) of a repeated run, k = 1..N."""
    ks = range(1, result.repetitions + 1)
    head = " ".join(f"pass^{k}" for k in ks)
    console.print(
        f"cases ({result.n_cases}): {head} = " + " ".join(_pct(result.cases.get(k)) for k in ks)
    )
    if result.n_episodes:
        console.print(
            f"episodes ({result.n_episodes}): {head} = "
            + " ".join(_pct(result.episodes.get(k)) for k in ks)
        )
