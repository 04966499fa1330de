"""The report's figures: one PNG per kind of stored curve, every RM on it in its own colour.

The RETA curve against −log2 η (the RETA paper's Fig. 3); best-of-n and 2nd-best-of-n against
n on a log2 axis and against the KL divergence of that selection policy from the base policy
(:func:`rmaudit.metrics.rank_of_n_kl`); the reliability diagram with its y = x diagonal; the
shift sweep, one figure per quantity, RMs by colour and shift targets by line style (RMs Under
Distribution Shift, Fig. 1-2); a regret study's NDR curves and its Goodhart overlay
(Rethinking RM Evaluation, Fig. 8); any other curve against its own x.

Matplotlib is used through ``Figure`` objects, never pyplot, so nothing global changes and no
display is needed.  Legends sit outside the axes; no text is read as mathtext (an RM label
with a ``$`` is shown as written).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from itertools import cycle

import numpy as np
from matplotlib.figure import Figure

from rmaudit.components.vocabulary import (
    NDR_CURVE_PREFIX,
    RELIABILITY_DIAGRAM,
    RETA_CURVE,
    SHIFT_CURVE_PREFIX,
    SHIFT_QUANTITIES,
    SHIFT_TARGETS,
    best_of_n_curve_rank,
    is_best_of_n_curve,
    shift_curve_key,
    shift_curve_target,
)
from rmaudit.display.formatting import NEUTRAL_COLOUR, rm_colour, short_label, visible
from rmaudit.metrics import bon_kl, rank_of_n_kl
from rmaudit.results.pair_breakdown import reliability_counts, style_matrices
from rmaudit.results.pair_failures import ModelOnPair, model_on_pairs
from rmaudit.results.regret import goodhart_curve, goodhart_points, load_studies
from rmaudit.results.summary import OracleScale, RunSummary
from rmaudit.store import Store

from ._plotting import WIDTH, figure_title, legend_outside, literal, plot_rms, readable, rm_colours
from .pair_figures import reliability_figure, style_figure, subset_figure, subset_keys

GOODHART_FIGURE = "regret-goodhart.png"
STYLE_FIGURE = "rm-bench-styles.png"
#: how a shift target is drawn (RMs differ by colour), as in the TUI's shift panel
TARGET_LINES = dict(zip(SHIFT_TARGETS, ("-", "--", ":"), strict=True))
ORDINALS = {1: "best", 2: "2nd-best", 3: "3rd-best"}
#: RETA curves drawn at most before only the top ones are (and the baselines)
MOST_CURVES, TOP_CURVES = 10, 6


def _oracle_units(scale: OracleScale | None) -> str:
    """The oracle and its scale, for a y label's second line."""
    if scale is None:
        return "oracle score"
    if scale.declared:
        return f"{scale.oracle}, {scale.declared[0]:g}–{scale.declared[1]:g} scale"
    return f"{scale.oracle}, {scale.low:.1f}–{scale.high:.1f} on this benchmark"


def reta_figure(summary: RunSummary, metric: str) -> Figure:
    """Every RM's RETA curve; past :data:`MOST_CURVES` RMs, the :data:`TOP_CURVES` whose curve
    is highest on average over η, and the baselines, so that the lines stay readable."""
    figure = Figure(figsize=(WIDTH, 4.2), layout="constrained")
    ax = figure.add_subplot()
    curves = {
        rm_key: curve
        for _, rm_key in summary.reward_models
        if (curve := summary.curves.get((rm_key, metric, RETA_CURVE))) is not None
    }
    title = "RETA curve, ±1 stderr across prompts"
    only = None
    if len(curves) > MOST_CURVES:
        models = [k for k in curves if k not in summary.baselines]
        top = sorted(models, key=lambda k: -float(np.mean(curves[k].value)))[:TOP_CURVES]
        only = {*top, *summary.baselines}
        title += f": the {len(top)} of {len(models)} RMs highest on average over η"
    plot_rms(ax, summary, metric, RETA_CURVE, lambda eta: -np.log2(eta), only=only)
    ax.set_xlabel("−log₂ η  (smaller η: the RM's more extreme favourites)")
    ax.set_ylabel("RETA(η)  (1 = a random RM)")
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_title(figure_title(summary, title))
    legend_outside(figure)
    return figure


def best_of_n_figure(
    summary: RunSummary, metric: str, key: str, scale: OracleScale | None
) -> Figure:
    """Rank-j-of-n against n and against the KL of that selection policy (rank 1: best-of-n)."""
    rank = best_of_n_curve_rank(key)
    what = ORDINALS.get(rank, f"rank-{rank}")
    figure = Figure(figsize=(WIDTH, 7.6), layout="constrained")
    by_n, by_kl = figure.subplots(2, 1)
    plot_rms(by_n, summary, metric, key)
    by_n.set_xscale("log", base=2)
    by_n.set_xlabel("n (responses drawn)")
    plot_rms(by_kl, summary, metric, key, lambda n: rank_of_n_kl(np.rint(n).astype(int), rank))
    by_kl.set_xlabel(
        f"KL({what}-of-n ‖ base policy) [nats]"
        + ("  = log n − (n−1)/n" if rank == 1 else "  (Beta order-statistic density)")
    )
    pick = "the RM's pick" if rank == 1 else f"the RM's {what.removesuffix('-best')} favourite"
    for ax in (by_n, by_kl):
        ax.set_ylabel(visible(f"oracle score of {pick}\n({_oracle_units(scale)})"))
    figure.suptitle(figure_title(summary, f"{what}-of-n, ±1 stderr across prompts"))
    legend_outside(figure)
    return figure


def shift_figure(summary: RunSummary, metric: str, quantity: str) -> Figure:
    """One shift quantity against p: RMs by colour, targets by line style."""
    title, higher_is_better = SHIFT_QUANTITIES[quantity]
    figure = Figure(figsize=(WIDTH, 4.2), layout="constrained")
    ax = figure.add_subplot()
    for target in SHIFT_TARGETS:
        plot_rms(
            ax,
            summary,
            metric,
            shift_curve_key(quantity, target),
            linestyle=TARGET_LINES[target],
            labels=False,
        )
    colours = rm_colours(summary)
    handles = [
        ax.plot([], [], color=colours[rm_key], label=short_label(label))[0]
        for label, rm_key in summary.reward_models
    ]
    handles += [
        ax.plot([], [], color=NEUTRAL_COLOUR, linestyle=TARGET_LINES[t], label=f"{t} shifted")[0]
        for t in SHIFT_TARGETS
        if (metric, shift_curve_key(quantity, t)) in {(m, k) for m, k in summary.curve_keys()}
    ]
    legend_outside(figure, handles)
    ax.set_xlabel("shift level p")
    ax.set_ylabel(title)
    keys = {(metric, shift_curve_key(quantity, t)) for t in SHIFT_TARGETS}
    band = band_drawn(summary, keys)
    ax.set_title(
        figure_title(summary, f"{title} {'↑' if higher_is_better else '↓'} under shift, {band}")
    )
    return figure


def curve_figure(summary: RunSummary, metric: str, key: str) -> Figure:
    """Any other stored curve: value against its own x."""
    first = next(c for (_, m, k), c in summary.curves.items() if (m, k) == (metric, key))
    figure = Figure(figsize=(WIDTH, 4.2), layout="constrained")
    ax = figure.add_subplot()
    plot_rms(ax, summary, metric, key)
    ax.set_xlabel(visible(first.x_label))
    ax.set_ylabel(visible(first.label))
    band = band_drawn(summary, {(metric, key)})
    ax.set_title(figure_title(summary, f"{metric}: {first.label}, {band}"))
    legend_outside(figure)
    return figure


def ndr_figure(summary: RunSummary, metric: str) -> Figure:
    """A regret study's NDR against n (log2 axis) and against KL, one line per proxy."""
    curves = {
        key.removeprefix(NDR_CURVE_PREFIX): curve
        for (_, m, key), curve in summary.curves.items()
        if m == metric and key.startswith(NDR_CURVE_PREFIX)
    }
    colours = {label: rm_colour(i) for i, (label, _) in enumerate(summary.reward_models)}
    figure = Figure(figsize=(WIDTH, 7.6), layout="constrained")
    by_n, by_kl = figure.subplots(2, 1)
    for proxy, curve in curves.items():
        stderr = np.nan_to_num(curve.stderr)
        colour = colours.get(proxy, NEUTRAL_COLOUR)
        for ax, x in ((by_n, curve.x), (by_kl, bon_kl(np.rint(curve.x).astype(int)))):
            ax.plot(
                x, curve.value, marker="o", markersize=3, label=short_label(proxy), color=colour
            )
            ax.fill_between(
                x, curve.value - stderr, curve.value + stderr, color=colour, alpha=0.2, linewidth=0
            )
    by_n.set_xscale("log", base=2)
    by_n.set_xlabel("n (responses drawn)")
    by_kl.set_xlabel("KL(best-of-n ‖ base policy) = log n − (n−1)/n  [nats]")
    for ax in (by_n, by_kl):
        ax.set_ylabel("NDR (1 = as good as the gold's pick)")
    for ax in (by_n, by_kl):
        ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
        ax.grid(True, alpha=0.3)
    first = next(iter(curves.values()))
    figure.suptitle(
        figure_title(summary, f"{metric}: {first.label}, ±1 stderr (bootstrap over prompts)")
    )
    legend_outside(figure)
    return figure


def goodhart_figure(summary: RunSummary, points: dict[str, list]) -> Figure:
    """Observed (pairwise accuracy, best-of-n NDR) of every (gold, proxy) pair of each regret
    study against the closed-form curve of the Regressional Goodhart normal model (Rethinking
    RM Evaluation, Fig. 8)."""
    figure = Figure(figsize=(WIDTH, 5.2), layout="constrained")
    ax = figure.add_subplot()
    accuracy, ndr_values = goodhart_curve()
    ax.plot(
        accuracy,
        ndr_values,
        color="black",
        linewidth=1.5,
        label="normal model: NDR = sin(π (acc − ½))",
    )
    studies = [(label, found) for label, found in points.items() if found]
    # seven markers, then round again: a study is never dropped from the figure
    for marker, (label, found) in zip(cycle("os^Dv<>"), studies, strict=False):
        ax.scatter(
            [p.accuracy for p in found],
            [p.ndr for p in found],
            marker=marker,
            s=22,
            alpha=0.75,
            label=visible(f"{label} ({len(found)} gold-proxy pairs)"),
        )
    ax.set_xlabel("pairwise accuracy against the gold")
    ax.set_ylabel("best-of-n NDR (policy regret's complement)")
    ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
    ax.grid(True, alpha=0.3)
    ax.set_title(
        figure_title(
            summary,
            "Accuracy vs best-of-n NDR, observed and as the Regressional "
            "Goodhart model predicts\n(Rethinking RM Evaluation, Fig. 8)",
        )
    )
    legend_outside(figure)
    return figure


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")


def build_figures(
    summary: RunSummary, store: Store | None = None, scale: OracleScale | None = None
) -> dict[str, Figure]:
    """File name → figure for every kind of curve the run stored, and for per-subset
    accuracies.  A file is named after what it shows (``reta-curve.png``, ``best-of-n.png``,
    ``shift-accuracy.png``, ``accuracy-per-subset.png``), prefixed by the metric's label only
    when two metrics stored the same kind.  With ``store`` (the scores behind them) a
    reliability diagram shows its bins' pair counts, RM-Bench gets its style matrix and a
    regret study its Goodhart overlay."""
    on_pairs = _on_pairs(summary, store)
    named: dict[tuple[str, str], str] = {}  # (metric, what) → base name
    builders: dict[tuple[str, str], Callable[[], Figure]] = {}
    for metric, key in summary.curve_keys():
        build: Callable[[], Figure]
        if key.startswith(NDR_CURVE_PREFIX):
            what, build = "ndr", partial(ndr_figure, summary, metric)
        elif key.startswith(SHIFT_CURVE_PREFIX) and shift_curve_target(key):
            quantity = key.removeprefix(SHIFT_CURVE_PREFIX).rsplit("_", 1)[0]
            what = f"shift-{quantity}"
            build = partial(shift_figure, summary, metric, quantity)
        elif key == RETA_CURVE:
            what, build = "reta-curve", partial(reta_figure, summary, metric)
        elif is_best_of_n_curve(key):
            what = f"{ORDINALS.get(best_of_n_curve_rank(key), slug(key))}-of-n"
            build = partial(best_of_n_figure, summary, metric, key, scale)
        elif key == RELIABILITY_DIAGRAM:
            what = "reliability-diagram"
            build = partial(_reliability_figure, summary, metric, store, on_pairs)
        else:
            what, build = slug(key), partial(curve_figure, summary, metric, key)
        if (metric, what) not in named:
            named[(metric, what)] = what
            builders[(metric, what)] = build
    for metric in dict.fromkeys(c.metric for c in summary.columns):
        if subset_keys(summary, metric):
            named[(metric, "accuracy-per-subset")] = "accuracy-per-subset"
            builders[(metric, "accuracy-per-subset")] = partial(subset_figure, summary, metric)
    kinds = [what for _, what in named]
    figures = {}
    for (metric, what), build in builders.items():
        # a regret study's figure is per study; any other kind is prefixed only on a clash
        prefixed = what == "ndr" or kinds.count(what) > 1
        figures[f"{slug(metric) + '-' if prefixed else ''}{what}.png"] = literal(readable(build()))
    matrices = style_matrices(store, summary, on_pairs) if store is not None else {}
    if matrices:
        figures[STYLE_FIGURE] = literal(readable(style_figure(summary, matrices)))
    if store is not None:
        studies = load_studies(store, summary.run.id)
        points = {label: goodhart_points(rows) for label, rows in studies.items()}
        if any(points.values()):
            figures[GOODHART_FIGURE] = literal(readable(goodhart_figure(summary, points)))
    return figures


def _reliability_figure(
    summary: RunSummary,
    metric: str,
    store: Store | None,
    on_pairs: dict[str, list[ModelOnPair]],
) -> Figure:
    counts = reliability_counts(store, summary, metric, on_pairs) if store else None
    return reliability_figure(summary, metric, counts)


def _on_pairs(summary: RunSummary, store: Store | None) -> dict[str, list[ModelOnPair]]:
    """Each RM's scores of the run's pairs, read only when a figure needs them."""
    needed = any(key == RELIABILITY_DIAGRAM for _, key in summary.curve_keys()) or any(
        c.key.startswith("rm_bench_") for c in summary.columns
    )
    if store is None or not summary.pairs or not needed:
        return {}
    return {rm_key: model_on_pairs(store, summary, rm_key) for _, rm_key in summary.reward_models}


def band_drawn(summary: RunSummary, keys: set[tuple[str, str]]) -> str:
    """What a figure's title may promise: ``±1 stderr`` where some plotted curve has one,
    else that no interval is drawn (an ECE or AUROC curve stored without a ±)."""
    for (_, metric, key), curve in summary.curves.items():
        if (metric, key) in keys and np.isfinite(curve.stderr).any():
            return "±1 stderr"
    return "no interval drawn (none stored)"
