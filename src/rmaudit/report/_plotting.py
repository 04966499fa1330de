"""What every report figure shares: each RM's colour, a line with its ±1 stderr band per RM,
legends outside the axes, and titles that are never mathtext."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from rmaudit.components import RUN_LEVEL
from rmaudit.display.formatting import NEUTRAL_COLOUR, rm_colour, short_label, visible
from rmaudit.results.browse import ACROSS_RMS
from rmaudit.results.summary import Curve, RunSummary


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
) -> None:
    """One line and ±1 stderr band per RM, and for the run-level curve of a metric across RMs;
    with ``stored_interval`` the band is each point's stored interval (a Wilson interval)."""
    colours = rm_colours(summary)
    for label, rm_key in (*summary.reward_models, (ACROSS_RMS, RUN_LEVEL)):
        curve: Curve | None = summary.curves.get((rm_key, metric, key))
        if curve is None:
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
        # as many entries a row as fit the figure's width (about 14 small characters an inch)
        widest = max(len(str(h.get_label())) for h in handles) + 6
        fit = int(figure.get_figwidth() * 14 // widest)
        figure.legend(
            handles=handles,
            loc="outside lower center",
            fontsize="small",
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


def figure_title(summary: RunSummary, what: str) -> str:
    return visible(f"{what}{' (SIMULATED)' if summary.simulated else ''}")
