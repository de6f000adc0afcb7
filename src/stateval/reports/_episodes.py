"""Episode sections of the terminal and Markdown reports: trajectory metrics (success, first
divergence, error propagation, recovery, the per-turn curve, fields by where they first go wrong)
and, when both modes were run, the two side by side."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from rich.console import Console
from rich.table import Table
from rich.text import Text

from stateval.episodes import EPISODE_METRICS, EpisodeMetric
from stateval.run import RunSummary, TrajectorySummary

__all__ = [
    "MODE_NAMES",
    "episode_rows",
    "markdown_episodes",
    "mode_rows",
    "print_episodes",
    "retention_rows",
    "turn_curve",
]

_TURNS_SHOWN = 30
_FIELDS_SHOWN = 10
MODE_NAMES = {"teacher_forced": "teacher-forced", "free_running": "free-running"}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _mode(mode: str | None) -> str:
    return MODE_NAMES.get(mode or "", mode or "n/a")


def _divergence(episodes: TrajectorySummary) -> str:
    """``turn 0: 12, turn 1: 30, ...`` (the first-divergence distribution)."""
    if not episodes.first_divergence:
        return "none"
    return ", ".join(f"turn {t}: {n}" for t, n in sorted(episodes.first_divergence.items()))


def _metric(metric: EpisodeMetric, episodes: TrajectorySummary) -> str:
    text = _pct(metric.run_value(episodes))
    return text if metric.count is None else f"{text} {metric.count(episodes)}"


def episode_rows(episodes: TrajectorySummary) -> list[tuple[str, str]]:
    """The episode figures as (label, value) rows: the reported metrics of
    `stateval.episodes.EPISODE_METRICS`, error propagation, the first divergences and the
    retention slope."""
    return [
        ("episodes", f"{episodes.n_episodes} ({_mode(episodes.mode)})"),
        *((m.label, _metric(m, episodes)) for m in EPISODE_METRICS.values() if m.report),
        (
            "field errors inherited / introduced / corrected",
            f"{episodes.inherited} / {episodes.introduced} / {episodes.corrected}",
        ),
        ("first divergence", _divergence(episodes)),
        ("retention by memory age", _slope(episodes)),
    ]


def _slope(episodes: TrajectorySummary) -> str:
    slope = None if episodes.retention is None else episodes.retention.slope
    if slope is None:
        return "n/a"
    verdict = "falls significantly" if slope.significant else "no significant fall"
    return f"{slope.slope:+.2%} per turn of age (one-sided p = {slope.p_value:.3g}: {verdict})"


def retention_rows(summary: RunSummary) -> tuple[list[str], list[list[str]]]:
    """The retention curve: one row per memory age, each mode's accuracy, its count and
    95% interval."""
    runs = [r for r in summary.side_by_side() if r.episodes and r.episodes.retention]
    columns = ["age"]
    for r in runs:
        columns += [f"{_mode(r.mode)} accuracy", "n", "95% interval"]
    curves = [
        {p.age: p for p in r.episodes.retention.points}  # type: ignore[union-attr]
        for r in runs
    ]
    ages = sorted(set().union(*curves)) if curves else []
    rows = []
    for age in ages[:_TURNS_SHOWN]:
        cells = [str(age)]
        for curve in curves:
            p = curve.get(age)
            cells += (
                ["", "", ""]
                if p is None
                else [_pct(p.accuracy), str(p.n), f"{_pct(p.low)} to {_pct(p.high)}"]
            )
        rows.append(cells)
    return columns, rows


def _figure(run: RunSummary, metric: EpisodeMetric) -> str:
    episodes = run.episodes
    return "n/a" if episodes is None else _pct(metric.run_value(episodes))


def _propagated(run: RunSummary) -> str:
    episodes = run.episodes
    return "n/a" if episodes is None else f"{episodes.inherited} / {episodes.introduced}"


_MODE_ROWS: tuple[tuple[str, Callable[[RunSummary], str]], ...] = (
    ("run", lambda r: r.run_id),
    ("joint goal accuracy", lambda r: _pct(r.joint_goal_accuracy)),
    ("accuracy (expected fields)", lambda r: _pct(r.accuracy)),
    *((m.label, partial(_figure, metric=m)) for m in EPISODE_METRICS.values() if m.report),
    ("errors inherited / introduced", _propagated),
    ("passed", lambda r: "yes" if r.passed else "no"),
)


def mode_rows(summary: RunSummary) -> list[tuple[str, list[str]]]:
    """Rows of the modes table: a label and one cell per mode."""
    runs = summary.side_by_side()
    return [(label, [cell(r) for r in runs]) for label, cell in _MODE_ROWS]


def turn_curve(summary: RunSummary) -> tuple[list[str], list[list[str]]]:
    """The per-turn curve: columns and rows (one per turn index, each mode's JGA)."""
    runs = summary.side_by_side()
    points = [{p.turn: p for p in (r.episodes.turns if r.episodes else ())} for r in runs]
    turns = sorted(set().union(*points))
    both = len(runs) > 1
    columns = ["turn", "episodes"]
    if both:
        columns += [f"JGA {_mode(r.mode)}" for r in runs]
    else:
        columns += ["JGA", "accuracy", "inherited", "introduced", "corrected"]
    rows: list[list[str]] = []
    for turn in turns[:_TURNS_SHOWN]:
        first = next(p[turn] for p in points if turn in p)
        cells = [str(turn), str(first.n)]
        if both:
            cells += [_pct(p[turn].joint_goal_accuracy) if turn in p else "" for p in points]
        else:
            cells += [
                _pct(first.joint_goal_accuracy),
                _pct(first.accuracy),
                str(first.inherited),
                str(first.introduced),
                str(first.corrected),
            ]
        rows.append(cells)
    return columns, rows


def print_episodes(summary: RunSummary, console: Console) -> None:
    """Print the episode section of the terminal summary (nothing without episodes)."""
    episodes = summary.episodes
    if episodes is None:
        return
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for label, value in episode_rows(episodes):
        table.add_row(Text(label), Text(value))
    console.print(table)
    if summary.compared is not None:
        modes = Table(title="teacher-forced vs free-running", title_justify="left", show_edge=False)
        modes.add_column("")
        for run in summary.side_by_side():
            modes.add_column(_mode(run.mode), justify="right")
        for label, cells in mode_rows(summary):
            modes.add_row(Text(label), *map(Text, cells))
        console.print(modes)
    columns, rows = turn_curve(summary)
    curve = Table(title="by turn index", title_justify="left", show_edge=False)
    for i, name in enumerate(columns):
        curve.add_column(name, justify="left" if i == 0 else "right")
    for cells in rows:
        curve.add_row(*map(Text, cells))
    console.print(curve)
    columns, rows = retention_rows(summary)
    if rows:
        ages = Table(
            title="retention by memory age (turns since the gold value was set)",
            title_justify="left",
            show_edge=False,
        )
        for i, name in enumerate(columns):
            ages.add_column(name, justify="left" if i == 0 else "right")
        for cells in rows:
            ages.add_row(*cells)
        console.print(ages)
    if episodes.fields:
        fields = Table(
            title="fields by the episodes they go wrong in", title_justify="left", show_edge=False
        )
        for name in ("field", "episodes wrong", "first wrong (mean turn)", "inherited"):
            fields.add_column(name, justify="left" if name == "field" else "right")
        for row in episodes.fields[:_FIELDS_SHOWN]:
            first = "n/a" if row.mean_first_wrong is None else f"{row.mean_first_wrong:.1f}"
            fields.add_row(Text(row.path), str(row.episodes_wrong), first, str(row.inherited))
        console.print(fields)


def markdown_episodes(summary: RunSummary) -> list[str]:
    """The episode section of the Markdown report, as lines (none without episodes)."""
    episodes = summary.episodes
    if episodes is None:
        return []
    lines = ["", "**Episodes**", "", "| metric | value |", "|---|---:|"]
    lines += [f"| {label} | {value} |" for label, value in episode_rows(episodes)]
    if summary.compared is not None:
        runs = summary.side_by_side()
        lines += [
            "",
            "**Teacher-forced vs free-running**",
            "",
            "| | " + " | ".join(_mode(r.mode) for r in runs) + " |",
            "|---|" + "---:|" * len(runs),
        ]
        lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in mode_rows(summary)]
    columns, curve = turn_curve(summary)
    lines += [
        "",
        "<details><summary>By turn index</summary>",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---:|" * len(columns),
    ]
    lines += ["| " + " | ".join(cells) + " |" for cells in curve]
    lines += ["", "</details>"]
    columns, ages = retention_rows(summary)
    if ages:
        lines += [
            "",
            "<details><summary>Retention by memory age</summary>",
            "",
            "| " + " | ".join(columns) + " |",
            "|" + "---:|" * len(columns),
        ]
        lines += ["| " + " | ".join(cells) + " |" for cells in ages]
        lines += ["", "</details>"]
    return lines
