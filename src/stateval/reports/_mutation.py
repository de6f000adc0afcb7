"""Reports of a mutation test: the terminal report (rich), JSON, JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from stateval.mutation import STATUSES, MutationReport
from stateval.reports._atomic import write_atomically
from stateval.reports._junit import xml_safe

__all__ = [
    "added_update_errors",
    "inert_summary",
    "mutation_junit_xml",
    "print_mutation_report",
    "write_mutation_json",
    "write_mutation_junit",
]

_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}
_INERT_FIELDS = 8


def print_mutation_report(
    report: MutationReport,
    console: Console,
    *,
    fail_under: float | None = None,
    max_survivors: int = 25,
    max_equivalents: int = 5,
) -> None:
    """Print the baseline, the scores, survivors (most severe first), equivalent mutants,
    operators and probes.

    Args:
        report: The mutation test.
        console: Where to print.
        fail_under: The gate, in percent, if any (prints the verdict against it).
        max_survivors: Survivor rows shown; the rest are counted.
        max_equivalents: Equivalent mutants shown; the rest are counted.
    """
    base = report.baseline
    console.print()
    console.print(
        Text.assemble(
            ("stateval mutate ", "bold"), (report.suite_name, "bold cyan"), f"  seed {report.seed}"
        )
    )
    verdict = "passes" if base.passed else "FAILS"
    episodes = base.episodes
    runs = "" if episodes is None else f" in {episodes.n_episodes} episodes, {report.mode}"
    console.print(f"baseline: {base.n_cases} cases{runs}, {verdict} the suite's thresholds")
    for line in report.baseline_failures[:5]:
        console.print(Text(f"  baseline already fails: {line} (it cannot kill mutants)", "yellow"))
    if len(report.baseline_failures) > 5:
        console.print(Text(f"  ... and {len(report.baseline_failures) - 5} more", "yellow"))
    counts = ", ".join(f"{report.count(s)} {s}" for s in STATUSES)
    console.print(f"mutants: {len(report.results)} ({counts})")
    inert = inert_summary(report)
    if inert:
        console.print(Text(inert, "yellow"))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("mutation score", report.score.describe())
    grid.add_row(
        "effective score", f"{report.effective_score.describe()}, equivalent and inert left out"
    )
    budget = f" of {report.max_calls}" if report.max_calls is not None else ""
    grid.add_row("paid calls", f"{report.calls}{budget}")
    console.print(grid)
    logged = report.phoenix
    if logged is not None:
        if logged.baseline is not None:
            line = f"Phoenix baseline experiment: {logged.baseline.url}"
            console.print(Text(line), soft_wrap=True)
        if logged.error:
            console.print(Text(f"warning: Phoenix logging stopped: {logged.error}", "yellow"))
    _operator_table(report, console)
    survivors = report.survivors
    if survivors:
        console.print(Text("survivors, most severe first", style="bold"))
        for r in survivors[:max_survivors]:
            style = _SEVERITY_STYLE.get(r.severity or "", "")
            console.print(
                Text.assemble(
                    f"  {r.id} ",
                    (f"{r.severity:<6}", style),
                    f" {r.mutant.operator}: ",
                    r.description,
                )
            )
            if r.suggestion:
                console.print(Text(f"       would kill it: {r.suggestion}", "cyan"))
            url = None if logged is None else logged.url_of(r.id)
            if url:
                console.print(Text(f"       in Phoenix: {url}", "dim"), soft_wrap=True)
        if len(survivors) > max_survivors:
            console.print(f"  ... and {len(survivors) - max_survivors} more (see --report-json)")
    _equivalents(report, console, max_equivalents)
    if report.probes:
        console.print(Text("probes", style="bold"))
        for p in report.probes:
            mark = Text("  ok   " if p.ok else "  WARN ", "green" if p.ok else "yellow")
            console.print(Text.assemble(mark, (p.name, "bold"), f": {p.summary}"))
            if p.detail and not p.ok:
                console.print(Text(f"         {p.detail}", "dim"))
    if fail_under is not None:
        ok = report.passes(fail_under)
        line = (
            f"mutation score {'>=' if ok else '<'} {fail_under:g}%: {'PASSED' if ok else 'FAILED'}"
        )
        console.print(Text(line, "bold green" if ok else "bold red"))


def inert_summary(report: MutationReport) -> str | None:
    """One line on the inert mutants (output identical to the baseline's on every case), or
    None when there are none: how many, the fields the cases expect changed that the mutator
    never writes (usually why), and how they weigh on the scores."""
    inert = report.count("inert")
    if not inert:
        return None
    fields = list(report.unwritten)
    shown = ", ".join(fields[:_INERT_FIELDS])
    if len(fields) > _INERT_FIELDS:
        shown += f" (+{len(fields) - _INERT_FIELDS} more)"
    why = (
        f"; the mutator never writes {len(fields)} field(s) the cases expect it to change: {shown}"
        if fields
        else ""
    )
    return (
        f"{inert} inert mutant(s): their output equals the baseline's, so no suite can kill "
        f"them{why}. The mutation score counts them as not killed, the effective score leaves "
        "them out."
    )


def _equivalents(report: MutationReport, console: Console, limit: int) -> None:
    equivalents = report.equivalents
    if not equivalents:
        return
    console.print(
        Text(
            "equivalent: the output changed, but nothing the suite observes did "
            "(no fix needed unless the change matters)",
            style="bold",
        )
    )
    for r in equivalents[:limit]:
        console.print(Text(f"  {r.id} {r.mutant.operator}: {r.description}"))
        if r.suggestion:
            console.print(Text(f"       why: {r.suggestion}", "dim"))
    if len(equivalents) > limit:
        console.print(f"  ... and {len(equivalents) - limit} more (see --report-json)")


def added_update_errors(report: MutationReport) -> dict[str, Counter[str]]:
    """Operator -> the update errors of the edit-operation matrix its mutants add over the
    baseline's (summed over its mutants that ran), so the report shows which cell each lands in."""
    base = report.baseline.edits
    before = Counter(base.pooled.errors) if base is not None else Counter()
    out: dict[str, Counter[str]] = {}
    for r in report.results:
        edits = None if r.summary is None else r.summary.edits
        if edits is None:
            continue
        added = Counter(edits.pooled.errors)
        added.subtract(before)
        out.setdefault(r.mutant.operator, Counter()).update(
            {k: v for k, v in added.items() if v > 0}
        )
    return out


def _operator_table(report: MutationReport, console: Console) -> None:
    per: dict[str, Counter[str]] = {}
    for r in report.results:
        per.setdefault(r.mutant.operator, Counter())[r.status] += 1
    if not per:
        return
    added = added_update_errors(report)
    table = Table(title="by operator", title_justify="left", show_edge=False)
    table.add_column("operator")
    for name in ("mutants", "killed", "survived", "equivalent", "inert", "skipped"):
        table.add_column(name, justify="right")
    table.add_column("update errors added")
    for operator, c in per.items():
        errors = added.get(operator, Counter())
        table.add_row(
            Text(operator),
            str(sum(c.values())),
            str(c["killed"]),
            str(c["survived"]),
            str(c["equivalent"]),
            str(c["inert"]),
            str(c["skipped"] + c["error"]),
            ", ".join(f"{k} +{v}" for k, v in errors.most_common(2)),
            style="red" if c["survived"] else None,
        )
    console.print(table)


def mutation_junit_xml(report: MutationReport) -> ET.Element:
    """``<testsuites>``: one test case per mutant (a survivor is a failure, an equivalent, inert
    or skipped mutant is skipped, one that could not run is an error) and one per probe."""
    root = ET.Element("testsuites", name="stateval-mutate")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"mutation:{report.suite_name}",
        tests=str(len(report.results)),
        failures=str(report.count("survived")),
        errors=str(report.count("error")),
        skipped=str(report.count("equivalent") + report.count("inert") + report.count("skipped")),
    )
    props = ET.SubElement(suite, "properties")
    score = report.score
    for key, value in (
        ("seed", str(report.seed)),
        ("mutation_score", "" if score.value is None else f"{score.value:.4f}"),
        ("ci95_low", f"{score.low:.4f}"),
        ("ci95_high", f"{score.high:.4f}"),
        ("calls", str(report.calls)),
    ):
        ET.SubElement(props, "property", name=key, value=value)
    for r in report.results:
        case = ET.SubElement(
            suite, "testcase", classname=r.mutant.operator, name=f"{r.id} {r.mutant.description}"
        )
        if r.wrote:
            ET.SubElement(case, "properties").append(
                ET.Element("property", name="wrote", value=r.wrote)
            )
        if r.status == "survived":
            failure = ET.SubElement(
                case, "failure", type=f"Survivor.{r.severity}", message=r.suggestion or ""
            )
            failure.text = "\n".join(
                line
                for line in (
                    f"changed {r.n_changed} case(s): {', '.join(r.changed_cases[:10])}",
                    f"closest: {r.closest}" if r.closest else "",
                )
                if line
            )
        elif r.status == "equivalent":
            why = f": {r.suggestion}" if r.suggestion else ""
            ET.SubElement(
                case, "skipped", message=f"equivalent: nothing the suite observes changed{why}"
            )
        elif r.status == "inert":
            ET.SubElement(case, "skipped", message="inert: output identical to the baseline")
        elif r.status == "skipped":
            ET.SubElement(case, "skipped", message=r.error or "skipped")
        elif r.status == "error":
            ET.SubElement(case, "error", message=r.error or "error")
        else:
            ET.SubElement(case, "system-out").text = "\n".join(r.kills)
    probes = ET.SubElement(
        root,
        "testsuite",
        name=f"probes:{report.suite_name}",
        tests=str(len(report.probes)),
        failures=str(sum(1 for p in report.probes if not p.ok)),
    )
    for p in report.probes:
        case = ET.SubElement(probes, "testcase", classname="probe", name=p.name)
        if not p.ok:
            ET.SubElement(case, "failure", message=p.summary).text = p.detail or ""
    return root


def write_mutation_junit(report: MutationReport, path: str | Path) -> None:
    """Write `mutation_junit_xml` to ``path``."""
    root = mutation_junit_xml(report)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    write_atomically(path, "<?xml version='1.0' encoding='utf-8'?>\n" + xml_safe(text) + "\n")


def write_mutation_json(report: MutationReport, path: str | Path) -> None:
    """Write `MutationReport.to_dict` to ``path`` as JSON."""
    write_atomically(path, json.dumps(report.to_dict(), indent=2) + "\n")
