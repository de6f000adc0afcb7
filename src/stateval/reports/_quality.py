"""One-line summaries of a run's calibration and judge agreement (terminal and Markdown)."""

from __future__ import annotations

from stateval.run import RunSummary

__all__ = ["quality_lines"]


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def quality_lines(summary: RunSummary) -> list[str]:
    """``calibration: ...`` and ``judge vs humans: ...`` lines (none when there is nothing)."""
    lines: list[str] = []
    calibration = summary.calibration
    if calibration is not None and calibration.overall.n:
        c = calibration.overall
        if not c.measurable:
            lines.append(f"calibration of confidences: not measurable ({c.reason})")
        else:
            shares = "/".join(f"{p.fraction:.0%}" for p in c.triage)
            caught = "/".join(f"{p.caught:.0%}" for p in c.triage)
            lines.append(
                f"calibration of confidences: Brier {_num(c.brier)}, ECE {_num(c.ece)} "
                f"(equal-mass {_num(c.ece_mass)}), AUROC {_num(c.auroc)} over {c.n} values; "
                f"reviewing the lowest-confidence {shares} catches {caught} "
                f"of {c.n_wrong} wrong values"
            )
    agreement = summary.agreement
    if agreement is not None:
        a = agreement.overall
        tpr = "n/a" if a.tpr is None else f"{a.tpr:.0%}"
        tnr = "n/a" if a.tnr is None else f"{a.tnr:.0%}"
        line = (
            f"judge vs humans: kappa {_num(a.kappa)} over {a.n} verdicts "
            f"(TPR {tpr}, TNR {tnr}), {len(agreement.disagreements)} disagreements"
        )
        if agreement.not_judged:
            line += f", {len(agreement.not_judged)} human verdicts not judged"
        lines.append(line)
    return lines
