"""The report's figures of preference-pair results: accuracy per subset with its Wilson 95% CI
(RewardBench, RM-Bench, LLMBar), RM-Bench's chosen-style × rejected-style matrix as a heat map
(RM-Bench, arXiv 2410.16184, Sec. 3), and the reliability diagram with how many pairs each
bin holds (RMs Under Distribution Shift, arXiv 2311.14743, Sec. 3.1).
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
from matplotlib.figure import Figure

from rmaudit.benchmark.pairs.parsers import RM_BENCH_STYLES
from rmaudit.components.vocabulary import RELIABILITY_DIAGRAM, ResultKey
from rmaudit.display.formatting import NEUTRAL_COLOUR, short_label, visible
from rmaudit.results.pair_breakdown import StyleMatrix

from ._plotting import WIDTH, figure_title, legend_outside, plot_rms, rm_colours

#: a metric's overall accuracy (its per-subset accuracies: ``ResultKey(OVERALL, subset)``)
OVERALL = "accuracy"


def subset_keys(summary, metric: str) -> list[str]:
    """The metric's accuracy keys, overall first, then its subsets in stored order; empty
    when it stored no per-subset accuracy."""
    keys = [c.key for c in summary.columns if c.metric == metric]
    subsets = [
        k for k in keys if ResultKey.read(k).name == OVERALL and ResultKey.read(k).part is not None
    ]
    return ([OVERALL] if OVERALL in keys else []) + subsets if subsets else []


#: the widest line of a subset's name on the per-subset figure
SUBSET_CHARACTERS = 22


def subset_figure(summary, metric: str) -> Figure:
    """Accuracy per subset, one row per subset and a dot per RM with its Wilson 95% CI."""
    keys = subset_keys(summary, metric)
    # a subset's name in at most two lines of SUBSET_CHARACTERS: the axes keep most of the width
    names = [
        "all pairs"
        if k == OVERALL
        else "\n".join(
            textwrap.wrap(
                visible(ResultKey.read(k).part or k),
                SUBSET_CHARACTERS,
                max_lines=2,
                placeholder="…",
            )
        )
        for k in keys
    ]
    rms = summary.reward_models
    colours = rm_colours(summary)
    figure = Figure(figsize=(WIDTH, 2.2 + 0.32 * len(keys) * (1 + 0.35 * (len(rms) - 1))))
    figure.set_layout_engine("constrained")
    ax = figure.add_subplot()
    step = 0.7 / max(len(rms), 1)
    for position, (label, rm_key) in enumerate(rms):
        y, value, low, high = [], [], [], []
        for row, key in enumerate(keys):
            cell = summary.cells.get((rm_key, metric, key))
            if cell is None or not math.isfinite(cell.value):
                continue
            y.append(row + (position - (len(rms) - 1) / 2) * step)
            value.append(cell.value)
            low.append(cell.value - cell.ci_low if math.isfinite(cell.ci_low) else 0.0)
            high.append(cell.ci_high - cell.value if math.isfinite(cell.ci_high) else 0.0)
        ax.errorbar(
            value,
            y,
            xerr=[low, high],
            fmt="o",
            markersize=4,
            capsize=2,
            color=colours[rm_key],
            label=short_label(label),
        )
    ax.axvline(0.5, color="grey", linewidth=0.8, linestyle="--")
    ax.set_yticks(range(len(keys)), labels=names)
    for tick in ax.get_yticklabels():
        tick.set_parse_math(False)  # a subset named "$x$" is shown as written
    ax.invert_yaxis()  # all pairs on top, then the subsets in stored order
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy (share of pairs with chosen scored above rejected; ½ = chance)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(figure_title(summary, f"{metric}: accuracy per subset, Wilson 95% CI"))
    legend_outside(figure)
    return figure


def style_figure(summary, matrices: dict[str, StyleMatrix]) -> Figure:
    """Each RM's RM-Bench style matrix: rows the chosen response's style, columns the rejected
    one's; above the diagonal is hard (the chosen response is plainer), below it easy."""
    shown = [
        (label, matrices[rm_key]) for label, rm_key in summary.reward_models if rm_key in matrices
    ]
    figure = Figure(figsize=(WIDTH, 4.2 * len(shown) + 1.2), layout="constrained")
    axes = np.atleast_1d(figure.subplots(len(shown), 1, squeeze=False)).ravel()
    styles = [style.replace(" ", "\n") for style in RM_BENCH_STYLES]
    image = None
    for ax, (label, matrix) in zip(axes, shown, strict=True):
        image = ax.imshow(matrix.accuracy, cmap="RdYlGn", vmin=0, vmax=1)
        for (i, j), count in np.ndenumerate(matrix.count):
            value = matrix.accuracy[i, j]
            text = "—" if count == 0 else f"{value:.2f}\n{count:,} pairs"
            ax.text(j, i, text, ha="center", va="center", fontsize="small", color="black")
        ax.set_xticks(range(len(styles)), labels=styles, fontsize="small")
        ax.set_yticks(range(len(styles)), labels=styles, fontsize="small")
        ax.set_xlabel("rejected response's style")
        ax.set_ylabel("chosen response's style")
        ax.set_title(short_label(label))
    if image is not None:
        figure.colorbar(image, ax=list(axes[: len(shown)]), label="accuracy", shrink=0.8)
    figure.suptitle(
        figure_title(
            summary,
            "RM-Bench accuracy by style: above the diagonal hard (chosen plainer), "
            "on it normal, below easy",
        )
    )
    return figure


def reliability_figure(summary, metric: str, counts: dict[str, np.ndarray] | None = None) -> Figure:
    """Accuracy against mean confidence per bin; the diagonal y = x is perfect calibration.
    With ``counts`` (rm_key → pairs per filled bin) a panel below shows how many pairs each
    bin holds, so a bin of 3 pairs does not look like one of 3,000."""
    figure = Figure(figsize=(WIDTH, 6.5 if counts else 5), layout="constrained")
    if counts:
        ax, below = figure.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    else:
        ax, below = figure.add_subplot(), None
    ax.plot(
        [0.5, 1.0],
        [0.5, 1.0],
        color=NEUTRAL_COLOUR,
        linestyle="--",
        linewidth=1,
        label="perfectly calibrated (y = x)",
    )
    plot_rms(ax, summary, metric, RELIABILITY_DIAGRAM, stored_interval=True)
    ax.set_ylabel("accuracy in the bin")
    ax.set_title(figure_title(summary, "Reliability diagram, Wilson 95% interval per bin"))
    if below is not None and counts:  # both or neither
        colours = rm_colours(summary)
        shown = [
            (rm_key, c)
            for _, rm_key in summary.reward_models
            if (c := counts.get(rm_key)) is not None
        ]
        width = 0.08 / max(len(shown), 1)
        for position, (rm_key, count) in enumerate(shown):
            curve = summary.curves.get((rm_key, metric, RELIABILITY_DIAGRAM))
            if curve is None or len(curve.x) != len(count):
                continue
            offset = (position - (len(shown) - 1) / 2) * width
            bars = below.bar(curve.x + offset, count, width=width, color=colours[rm_key], alpha=0.8)
            below.bar_label(bars, labels=[f"{c:,}" for c in count], fontsize="x-small")
        below.set_yscale("log")
        below.set_ylim(bottom=0.8, top=max(max(c) for _, c in shown) * 4)  # 1 pair shows too
        below.set_ylabel("pairs in the bin")
        below.grid(True, axis="y", alpha=0.3)
    (below or ax).set_xlabel("mean confidence of the RM in the bin")
    legend_outside(figure)
    return figure
