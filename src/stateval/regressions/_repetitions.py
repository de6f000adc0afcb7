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

from collections.abc import Mapping, Sequence
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
    """Every field's mean, interval and flakiness over ``run``'s repetitions, flakiest first.

    Example:
        >>> from stateval.regressions import Observation, ScoredRun
        >>> right, wrong = Observation({"field:a": 1.0}), Observation({"field:a": 0.0})
        >>> run = ScoredRun("r", {"c1": (right, wrong), "c2": (right, right)})
        >>> [(f.path, f.mean, f.flaky) for f in field_stability(run)]
        [('a', 0.75, 1)]
    """
    per_field: dict[str, list[tuple[str, float, bool, int, int]]] = {}
    for case_id, reps in run.cases.items():
        names = {n for obs in reps for n in obs.scores if n.startswith(FIELD_PREFIX)}
        for name in names:
            values = [obs.scores.get(name, 1.0) for obs in reps]
            right = [v >= 1.0 for v in values]
            per_field.setdefault(name.removeprefix(FIELD_PREFIX), []).append(
                (case_id, sum(values) / len(values), len(set(right)) > 1, sum(right), len(right))
            )
    k_max = run.repetitions
    out = []
    for path, rows in per_field.items():
        means = [m for _, m, _, _, _ in rows]
        flaky = tuple(c for c, _, f, _, _ in rows if f)
        out.append(
            FieldStability(
                path=path,
                n=len(rows),
                mean=sum(means) / len(means),
                interval=bootstrap_mean(means, seed=seed, resamples=resamples),
                flaky=len(flaky),
                flaky_cases=flaky,
                pass_k=pass_k_curve(((c, n) for *_, c, n in rows), k_max),
            )
        )
    out.sort(key=lambda f: (-f.flakiness, f.mean, f.path))
    return tuple(out)


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
    k_max = run.repetitions
    counts = [(sum(map(_right, reps)), len(reps)) for reps in run.cases.values()]
    out_episodes: dict[int, float] = {}
    n_episodes = 0
    if episodes:
        per_episode = []
        for ids in episodes.values():
            reps = [run.cases.get(c, ()) for c in ids]
            n = min((len(r) for r in reps), default=0)
            if not ids or n == 0:
                continue
            passed = sum(all(_right(r[i]) for r in reps) for i in range(n))
            per_episode.append((passed, n))
        n_episodes = len(per_episode)
        out_episodes = pass_k_curve(per_episode, k_max)
    return Reliability(k_max, pass_k_curve(counts, k_max), len(counts), out_episodes, n_episodes)


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
