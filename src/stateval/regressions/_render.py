"""A diff for people: the terminal table and Markdown for a pull-request comment."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from stateval._markdown_cells import cell, code
from stateval.regressions._diff import FieldDiff, MetricDiff, RunDiff

__all__ = ["markdown_diff", "print_diff"]

_STYLE = {
    "regressed": "bold red",
    "improved": "green",
    "no evidence": "dim",
    "not judged": "dim",
}
_SHOWN_CASES = 8


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _signed(value: float | None, *, seconds: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value * 1000:+.1f}ms" if seconds else f"{value * 100:+.1f}pt"


def _metric_value(metric: MetricDiff, value: float | None) -> str:
    if metric.name == "mean_time":
        return "n/a" if value is None else f"{value * 1000:.1f}ms"
    return _pct(value)


def _interval(metric: MetricDiff) -> str:
    if metric.interval is None:
        return "n/a"
    seconds = metric.name == "mean_time"
    low = _signed(metric.interval.low, seconds=seconds)
    return f"[{low},{_signed(metric.interval.high, seconds=seconds)}]"


def _unpaired(diff: RunDiff) -> str:
    text = f"{diff.n_paired} paired cases"
    for what, ids in (
        ("only in the baseline (removed)", diff.removed),
        ("only in the candidate (added)", diff.added),
    ):
        if ids:
            shown = ", ".join(ids[:_SHOWN_CASES]) + (" ..." if len(ids) > _SHOWN_CASES else "")
            text += f"; {len(ids)} {what}: {shown}"
    return text


def _reps(diff: RunDiff) -> str:
    if diff.base_repetitions == diff.cand_repetitions == 1:
        return ""
    return f" (repetitions: baseline {diff.base_repetitions}, candidate {diff.cand_repetitions})"


def print_diff(diff: RunDiff, console: Console, *, max_fields: int = 25) -> None:
    """Print the per-field verdicts (regressions first), run-level intervals and unpaired cases.

    Fields where no paired case changed are counted, not listed.
    """
    console.print()
    console.print(Text.assemble(("stateval diff ", "bold"), f"{diff.base} -> {diff.cand}"))
    console.print(Text(_unpaired(diff) + _reps(diff)), soft_wrap=True)
    changed = [f for f in diff.fields if f.regressed or f.improved]
    if changed:
        table = Table(title="fields, regressions first", title_justify="left", show_edge=False)
        table.add_column("field", overflow="fold", min_width=12)
        for name in ("n", "worse", "better", "base", "cand", "change", "p Holm"):
            table.add_column(name, justify="right", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
        for row in changed[:max_fields]:
            table.add_row(
                Text(row.path),
                str(row.n),
                str(row.regressed),
                str(row.improved),
                _pct(row.base_accuracy),
                _pct(row.cand_accuracy),
                _signed(row.change),
                f"{row.p_adjusted:.3g}",
                Text(row.verdict, style=_STYLE[row.verdict]),
            )
        console.print(table)
        if len(changed) > max_fields:
            console.print(f"  ... and {len(changed) - max_fields} more changed fields (see --json)")
    same = len(diff.fields) - len(changed)
    if same:
        console.print(f"{same} field(s) unchanged in every paired case")
    if diff.metrics:
        table = Table(
            title=f"run metrics, paired bootstrap 95% interval (seed {diff.seed})",
            title_justify="left",
            show_edge=False,
        )
        table.add_column("metric", overflow="fold")
        for name in ("base", "cand", "change", "95% interval"):
            table.add_column(name, justify="right", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
        for m in diff.metrics:
            table.add_row(
                m.name,
                _metric_value(m, m.base),
                _metric_value(m, m.cand),
                _signed(m.change, seconds=m.name == "mean_time"),
                _interval(m),
                Text(m.verdict, style=_STYLE[m.verdict]),
            )
        console.print(table)
    for row in diff.regressed_fields:
        if row.compare_url:
            console.print(Text(f"{row.path}: {row.compare_url}"), soft_wrap=True)
    regressed = len(diff.regressed_fields)
    improved = len(diff.improved_fields)
    verdict = (
        f"{regressed} field(s) regressed, {improved} improved (alpha {diff.alpha}, Holm over "
        f"{diff.tested_fields} testable field(s))"
    )
    console.print(Text(verdict, style="bold red" if regressed else "bold green"))


def _cases(row: FieldDiff) -> str:
    ids = row.regressed_cases
    shown = ", ".join(code(c) for c in ids[:_SHOWN_CASES])
    return shown + (f" (+{len(ids) - _SHOWN_CASES})" if len(ids) > _SHOWN_CASES else "")


def _md_field(row: FieldDiff) -> str:
    name = f"[{code(row.path)}]({row.compare_url})" if row.compare_url else code(row.path)
    return (
        f"| {name} | {row.n} | {row.regressed} | {row.improved} | {_pct(row.base_accuracy)} | "
        f"{_pct(row.cand_accuracy)} | {_signed(row.change)} | {row.p_adjusted:.3g} | "
        f"{_cases(row)} |"
    )


def markdown_diff(diff: RunDiff) -> str:
    """The diff as Markdown for a pull-request comment: the verdict first, the worst
    regressions first, each linked to its Phoenix compare page when there is one."""
    regressed, improved = diff.regressed_fields, diff.improved_fields
    icon = ":x:" if regressed or diff.regressed_metrics else ":white_check_mark:"
    lines = [
        f"### {icon} stateval: {len(regressed)} field(s) regressed, {len(improved)} improved",
        "",
        f"Baseline {_md_link(diff.base, diff.base_url)} → candidate "
        f"{_md_link(diff.cand, diff.cand_url)}; {cell(_unpaired(diff))}{_reps(diff)}.",
        "",
    ]
    header = [
        "| field | n | worse | better | baseline | candidate | change | p (Holm) "
        "| regressed cases |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    if regressed:
        lines += ["**Regressed**", "", *header, *(_md_field(r) for r in regressed), ""]
        filters = [r for r in regressed if r.filter]
        if filters:
            lines += [
                "<details><summary>Phoenix filters (paste into the compare page's filter box)"
                "</summary>",
                "",
                *(f"- {code(r.path)}: {code(r.filter)}" for r in filters if r.filter),
                "",
                "</details>",
                "",
            ]
    if improved:
        lines += ["**Improved**", "", *header, *(_md_field(r) for r in improved), ""]
    if diff.metrics:
        lines += [
            f"**Run metrics** (paired bootstrap 95% interval, seed {diff.seed})",
            "",
            "| metric | baseline | candidate | change | 95% interval | verdict |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for m in diff.metrics:
            change = _signed(m.change, seconds=m.name == "mean_time")
            lines.append(
                f"| {m.name} | {_metric_value(m, m.base)} | {_metric_value(m, m.cand)} | "
                f"{change} | {_interval(m)} | {m.verdict} |"
            )
        lines.append("")
    quiet = len(diff.fields) - len(regressed) - len(improved)
    lines.append(
        f"{quiet} other field(s): no evidence of a change (exact McNemar, Holm-corrected over "
        f"the {diff.tested_fields} field(s) with enough changed cases to be significant "
        f"(Tarone), alpha {diff.alpha})."
    )
    return "\n".join(lines) + "\n"


def _md_link(label: str, url: str | None) -> str:
    return f"[{code(label)}]({url})" if url else code(label)
