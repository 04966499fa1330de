"""What every report figure shares: each RM's colour, a line with its ±1 stderr band per RM,
legends outside the axes, titles that are never mathtext, and a size that reads on a phone.

Every figure is :data:`WIDTH` inches wide, one panel a row, with no text under
:data:`TEXT_PT` points: ``report.html`` shows a figure at most the page's width, 368 px on a
400-px-wide screen, where a point is then 368 / (72 · WIDTH) = 1.06 px and the smallest text
about 11.7 px font size (its box about 13 px tall), measured in Chromium by
``tests/test_report_html.py``; on a wide screen the page sets figures two a row.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection

import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import AutoLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from rmaudit.components import RUN_LEVEL
from rmaudit.display.formatting import NEUTRAL_COLOUR, rm_colour, short_label, visible
from rmaudit.results.browse import ACROSS_RMS
from rmaudit.results.summary import Curve, RunSummary

#: every figure's width in inches (a panel a row; several panels stack downwards)
WIDTH = 4.8
#: the smallest text of any figure, in points
TEXT_PT = 11.0
#: the most ticks an axis labels: numbers that fit side by side at WIDTH
TICKS = 5
#: an average character of DejaVu Sans, in ems (to wrap a title to the figure's width)
CHARACTER_EM = 0.62


def rm_colours(summary: RunSummary) -> dict[str, str]:
    """Each RM's colour by its place in the run, in every figure; results across RMs neutral."""
    colours = {rm_key: rm_colour(i) for i, (_, rm_key) in enumerate(summary.reward_models)}
    colours[RUN_LEVEL] = NEUTRAL_COLOUR
    return colours


def plot_rms(
    ax: Axes,
    summary: RunSummary,
    metric: str,
    key: str,
    transform=lambda x: x,
    linestyle: str = "-",
    labels: bool = True,
    stored_interval: bool = False,
    only: Collection[str] | None = None,
) -> None:
    """One line and ±1 stderr band per RM (``only``: those RM keys), and for the run-level
    curve of a metric across RMs; with ``stored_interval`` the band is each point's stored
    interval (a Wilson interval)."""
    colours = rm_colours(summary)
    if only is not None:  # the few drawn keep ten distinct colours between them
        drawn = [k for _, k in summary.reward_models if k in only]
        colours |= {k: rm_colour(i) for i, k in enumerate(drawn)}
    for label, rm_key in (*summary.reward_models, (ACROSS_RMS, RUN_LEVEL)):
        curve: Curve | None = summary.curves.get((rm_key, metric, key))
        if curve is None or (only is not None and rm_key not in only):
            continue
        x = transform(curve.x)
        stderr = np.nan_to_num(curve.stderr)
        if stored_interval:
            assert curve.ci_low is not None and curve.ci_high is not None, "stored with one"
            low, high = curve.ci_low, curve.ci_high
        else:
            low, high = curve.value - stderr, curve.value + stderr
        ax.plot(
            x,
            curve.value,
            marker="o",
            markersize=3,
            color=colours[rm_key],
            linestyle=linestyle,
            label=short_label(label) if labels else None,
        )
        ax.fill_between(
            x,
            low,
            high,
            color=colours[rm_key],
            alpha=0.2,
            linewidth=0,
        )
    ax.grid(True, alpha=0.3)


def legend_outside(figure: Figure, handles: list | None = None) -> None:
    """The legend (default: of the first axes) under every axes, never over the data."""
    if handles is None:
        handles = figure.axes[0].get_legend_handles_labels()[0]
    if handles:
        # as many entries a row as fit the figure's width; an entry wider than it wraps
        across = int(figure.get_figwidth() * 72 / (CHARACTER_EM * TEXT_PT))
        labels = [textwrap.fill(str(h.get_label()), across - 6) for h in handles]
        widest = max(len(line) for label in labels for line in label.split("\n")) + 6
        fit = int(across // widest)
        figure.legend(
            handles=handles,
            labels=labels,
            loc="outside lower center",
            fontsize=TEXT_PT,
            ncols=max(1, min(len(handles), fit)),
            frameon=False,
        )


def literal(figure: Figure) -> Figure:
    """No title, axis label or legend entry is mathtext: ``$`` in an RM's label is shown as
    written (tick labels keep theirs: a log axis writes 2⁴ as mathtext)."""
    # the suptitle's Text is private to matplotlib (get_suptitle() gives only its string)
    suptitle = figure._suptitle  # type: ignore[attr-defined]
    texts = [suptitle] if suptitle is not None else []
    for ax in figure.axes:
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label]
    for legend in figure.legends:
        texts += legend.get_texts()
    for text in texts:
        text.set_parse_math(False)
    return figure


def readable(figure: Figure) -> Figure:
    """No text under :data:`TEXT_PT`; titles and axis labels wrapped to the figure; at most
    :data:`TICKS` labelled ticks an axis, a log axis's as plain numbers (``16``, not mathtext
    2⁴ with its small exponent)."""
    for text in figure.findobj(Text):
        if text.get_fontproperties().get_size_in_points() < TEXT_PT:
            text.set_fontsize(TEXT_PT)
    for ax in figure.axes:
        ax.tick_params(which="both", labelsize=TEXT_PT)
        for axis in (ax.xaxis, ax.yaxis):
            _few_ticks(axis)
    figure.draw_without_rendering()  # lay the axes out: a title is centred over its axes
    width, height = figure.get_figwidth() * 72, figure.get_figheight() * 72
    suptitle = figure._suptitle  # type: ignore[attr-defined]
    if suptitle is not None:
        _wrap(suptitle, width * 0.95)
    for ax in figure.axes:
        box = ax.get_position()
        _wrap(ax.title, width * box.width)
        _wrap(ax.xaxis.label, width * box.width)
        _wrap(ax.yaxis.label, height * box.height)
    return figure


def _wrap(text: Text, points: float) -> None:
    """Wrap ``text``'s lines to ``points`` wide at its font size."""
    size = text.get_fontproperties().get_size_in_points()
    width = max(12, int(points / (CHARACTER_EM * size)))
    lines = text.get_text().split("\n")
    text.set_text("\n".join(textwrap.fill(line, width) for line in lines))


def _few_ticks(axis: Axis) -> None:
    if axis.get_scale() == "log":
        base = getattr(axis.get_transform(), "base", 10.0)  # a LogTransform's
        axis.set_major_locator(LogLocator(base=base, numticks=TICKS + 1))
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(NullFormatter())
    elif isinstance(axis.get_major_locator(), AutoLocator):
        axis.set_major_locator(MaxNLocator(nbins=TICKS, steps=[1, 2, 2.5, 5, 10]))


def figure_title(summary: RunSummary, what: str) -> str:
    return visible(f"{what}{' (SIMULATED)' if summary.simulated else ''}")
