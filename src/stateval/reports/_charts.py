"""The HTML report's charts: matplotlib figures rendered to inline SVG.

matplotlib (the ``report`` extra) is imported only when a chart is drawn. Figures are built
with `matplotlib.figure.Figure` (no pyplot, no global state, no GUI backend); text stays text
(``svg.fonttype: none``), which keeps each chart a few kilobytes, and the output carries no
date, so the same run renders the same bytes.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from stateval.episodes import RETENTION_AGE
from stateval.errors import StatevalError

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.ticker import Formatter

    from stateval.calibration import Calibration
    from stateval.episodes import AgePoint
    from stateval.run import FieldRow

__all__ = [
    "field_accuracy_chart",
    "reliability_chart",
    "require_charts",
    "retention_chart",
    "triage_chart",
]

_BLUE = "#3b6ea5"
_RED = "#c0392b"
_GREY = "#9a9a9a"
_PALETTE = ("#3b6ea5", "#e67e22", "#27ae60", "#8e44ad", "#c0392b", "#16a085")
_INSTALL = "pip install 'stateval[report]'"


def require_charts() -> None:
    """Check that matplotlib can be imported.

    Raises:
        StatevalError: It cannot; the message says how to install it.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise StatevalError(f"--report-html draws its charts with matplotlib: {_INSTALL}") from exc


def _figure(width: float, height: float) -> Figure:
    require_charts()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg(fig: Figure, name: str) -> str:
    import matplotlib
    from matplotlib.text import Text

    # field paths and values are drawn as they are: ``$\frac$`` is not TeX to typeset
    for artist in fig.findobj(Text):
        artist.set_parse_math(False)
    buffer = io.StringIO()
    # A salt per chart keeps the element ids of two inline SVGs apart.
    with (
        matplotlib.rc_context(
            {
                "svg.fonttype": "none",
                "svg.hashsalt": f"stateval-{name}",
                "text.usetex": False,
                "text.parse_math": False,
            }
        ),
        warnings.catch_warnings(),
    ):
        # the SVG keeps text as text for the browser's fonts: a glyph matplotlib's own font
        # lacks (Arabic, CJK, emoji in a field name) only shifts its layout estimate
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font")
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    svg = text[text.index("<svg") :]  # without the XML declaration and DOCTYPE
    return svg.replace("<svg ", f'<svg class="chart" data-chart="{name}" role="img" ', 1)


def field_accuracy_chart(rows: Sequence[FieldRow]) -> str:
    """Horizontal bars of each field's accuracy, worst at the top (rows come worst first)."""
    shown = [r for r in rows if r.n_expected]
    fig = _figure(7.0, 0.8 + 0.28 * max(len(shown), 1))
    ax = fig.add_subplot()
    labels = [r.path for r in shown]
    values = [r.accuracy for r in shown]
    colours = [_BLUE if r.passed else _RED for r in shown]
    positions = list(range(len(shown)))
    bars = ax.barh(positions, values, color=colours, height=0.7)
    for bar, row in zip(bars, shown, strict=True):
        bar.set_gid(f"bar-{row.path}")  # the SVG group's id: the field each bar draws
    for y, r in zip(positions, shown, strict=True):
        ax.text(min(r.accuracy, 0.86) + 0.01, y, f"{r.accuracy:.0%}", va="center", fontsize=8)
        if r.minimum is not None:
            ax.plot([r.minimum, r.minimum], [y - 0.4, y + 0.4], color="black", linewidth=1)
    ax.set_yticks(positions, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy (expected fields)")
    ax.xaxis.set_major_formatter(_percent())
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, "fields")


def _percent() -> Formatter:
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(xmax=1.0, decimals=0)


def reliability_chart(calibration: Calibration) -> str:
    """The reliability diagram: accuracy against mean confidence per equal-width bin, with
    the diagonal of perfect calibration and each bin's count."""
    fig = _figure(4.6, 4.2)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], linestyle="--", color=_GREY, linewidth=1, label="perfectly calibrated")
    bins = calibration.reliability
    bars = ax.bar(
        [(b.lower + b.upper) / 2 for b in bins],
        [b.accuracy for b in bins],
        width=[(b.upper - b.lower) * 0.9 for b in bins],
        color=_BLUE,
        alpha=0.75,
        label="accuracy in bin",
    )
    for i, bar in enumerate(bars):
        bar.set_gid(f"bin-{i}")
    ax.plot(
        [b.mean_confidence for b in bins],
        [b.accuracy for b in bins],
        marker="o",
        linestyle="none",
        color=_RED,
        label="bin's mean confidence",
    )
    for b in bins:
        ax.text((b.lower + b.upper) / 2, b.accuracy + 0.02, str(b.n), ha="center", fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.08)
    ax.set_xlabel("confidence")
    ax.set_ylabel("share of values right")
    ax.set_title(f"{calibration.path}: ECE {calibration.ece:.3f}", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, "reliability")


def triage_chart(calibrations: Sequence[Calibration]) -> str:
    """Errors caught against the share of values reviewed, lowest confidence first, for the
    pooled values and a few fields; the diagonal is reviewing in random order."""
    fig = _figure(4.6, 4.2)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], linestyle="--", color=_GREY, linewidth=1, label="random order")
    for colour, calibration in zip(_PALETTE, calibrations, strict=False):
        curve = calibration.triage_curve
        ax.plot(
            [p.fraction for p in curve],
            [p.caught for p in curve],
            color=colour,
            linewidth=2 if colour == _PALETTE[0] else 1.2,
            label=calibration.path,
            gid=f"curve-{calibration.path}",
        )
    for x in (0.05, 0.10, 0.20):
        ax.axvline(x, color=_GREY, linewidth=0.5, linestyle=":")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("values reviewed, lowest confidence first")
    ax.set_ylabel("errors caught")
    ax.xaxis.set_major_formatter(_percent())
    ax.yaxis.set_major_formatter(_percent())
    ax.legend(fontsize=7, loc="lower right")
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, "triage")


def retention_chart(curves: Sequence[tuple[str, Sequence[AgePoint]]]) -> str:
    """Accuracy by memory age with its 95% interval, one line per mode (``(name, points)``);
    the dotted line marks the ``retention_at_5`` cutoff."""
    fig = _figure(5.2, 3.4)
    ax = fig.add_subplot()
    for colour, (name, points) in zip(_PALETTE, curves, strict=False):
        ages = [p.age for p in points]
        ax.fill_between(
            ages, [p.low for p in points], [p.high for p in points], color=colour, alpha=0.15
        )
        ax.plot(
            ages,
            [p.accuracy for p in points],
            color=colour,
            marker="o",
            markersize=3,
            linewidth=1.5,
            label=name,
            gid=f"retention-{name}",
        )
    ax.axvline(RETENTION_AGE, color=_GREY, linewidth=0.8, linestyle=":")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("memory age (turns since the gold value was set)")
    ax.set_ylabel("fields right")
    ax.yaxis.set_major_formatter(_percent())
    ax.legend(fontsize=7, loc="lower left")
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, "retention")
