"""A repeated run (``stateval run --repeat N``): per field, the mean accuracy over repetitions
with a 95% interval, and how flaky the field is.

A case's correctness on a field is the mean over its repetitions (a repetition that did not
evaluate the field, nothing expected and nothing produced, has it right, as in a diff). The
interval is a seeded bootstrap over cases, so repetitions of one case are resampled together. A
case is *flaky* on a field when its repetitions disagree (some right, some wrong); the flakiness
rate is the share of such cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from stateval.regressions._scores import FIELD_PREFIX, ScoredRun
from stateval.regressions._stats import Interval, bootstrap_mean

__all__ = ["FieldStability", "field_stability", "print_stability"]


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
    """

    path: str
    n: int
    mean: float
    interval: Interval | None
    flaky: int
    flaky_cases: tuple[str, ...] = ()

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
    per_field: dict[str, list[tuple[str, float, bool]]] = {}
    for case_id, reps in run.cases.items():
        names = {n for obs in reps for n in obs.scores if n.startswith(FIELD_PREFIX)}
        for name in names:
            values = [obs.scores.get(name, 1.0) for obs in reps]
            right = [v >= 1.0 for v in values]
            per_field.setdefault(name.removeprefix(FIELD_PREFIX), []).append(
                (case_id, sum(values) / len(values), len(set(right)) > 1)
            )
    out = []
    for path, rows in per_field.items():
        means = [m for _, m, _ in rows]
        flaky = tuple(c for c, _, f in rows if f)
        out.append(
            FieldStability(
                path=path,
                n=len(rows),
                mean=sum(means) / len(means),
                interval=bootstrap_mean(means, seed=seed, resamples=resamples),
                flaky=len(flaky),
                flaky_cases=flaky,
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
    for name in ("n", "mean", "95% interval", "flaky", "flakiness"):
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
            style="yellow" if row.flaky else None,
        )
    console.print(table)
    if len(fields) > max_fields:
        console.print(f"  ... and {len(fields) - max_fields} more fields")
