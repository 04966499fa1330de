"""Terminal curve plots (textual-plotext) behind the built-in panels.

Each plot draws one line per reward model, in the RM's colour (the same as in the report's
figures), inside its band: the line's ± (the standard error across prompts, or the interval a
series gives) drawn as two fine lines in a faded shade of the colour (plotext fills no area
between two curves, and a vertical bar per point lands as stray ticks in a terminal cell).
The legend is a line of text under the plot, never drawn over the data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.text import Text
from textual.containers import Horizontal, Vertical
from textual.widgets import Static
from textual_plotext import PlotextPlot

from rmaudit.components import RUN_LEVEL
from rmaudit.components.vocabulary import RETA_CURVE, best_of_n_curve_key
from rmaudit.display.formatting import NEUTRAL_COLOUR, rm_colour, short_label, visible
from rmaudit.display.literal import assemble
from rmaudit.metrics import rank_of_n_kl
from rmaudit.results.browse import ACROSS_RMS
from rmaudit.results.panels import PanelContext

#: plotext line styles: a series' marker ("braille" draws a fine line)
LINE, DOTS, CROSSES = "braille", "•", "x"
#: the share of an RM's colour in its band's edges (the rest a mid grey, which reads as
#: fainter on a dark and on a light background)
BAND_SHADE = 0.45


@dataclass(frozen=True)
class Series:
    label: str
    x: np.ndarray
    y: np.ndarray
    stderr: np.ndarray
    colour: str = NEUTRAL_COLOUR  # "#rrggbb"
    marker: str = LINE
    #: (low, high) of each point's bar when it is not y ± stderr (a Wilson interval)
    interval: tuple[np.ndarray, np.ndarray] | None = None

    def bars(self) -> tuple[np.ndarray, np.ndarray]:
        """Each point's ±, low to high (y ± stderr unless ``interval`` is given)."""
        if self.interval is not None:
            return self.interval
        stderr = np.nan_to_num(self.stderr)
        return self.y - stderr, self.y + stderr


def rgb(colour: str) -> tuple[int, int, int]:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return red, green, blue


def band_colour(colour: str) -> tuple[int, int, int]:
    """The faded shade of ``colour`` its band is drawn in."""
    red, green, blue = (round(BAND_SHADE * c + (1 - BAND_SHADE) * 128) for c in rgb(colour))
    return red, green, blue


def band_edges(series: Series) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(x, low, high) of the series' band over its points with a finite ±; None when no point
    has a ± wider than nothing."""
    low, high = series.bars()
    finite = np.isfinite(series.x) & np.isfinite(low) & np.isfinite(high)
    if not np.any(high[finite] > low[finite]):
        return None
    return series.x[finite], low[finite], high[finite]


def series_legend(series: list[Series]) -> Text:
    """One entry per series: a swatch in its colour and style, then its label."""
    parts: list = []
    for s in series:
        swatch = "━━" if s.marker == LINE else s.marker * 2
        parts += [(swatch, f"bold {s.colour}"), " ", s.label, "   "]
    return assemble(*parts)


class CurvePlot(Vertical):
    """Lines (each in its ± band unless ``bands`` is off), axis labels, and the legend under
    the plot (``legend`` replaces the default one entry per series)."""

    DEFAULT_CSS = """
    CurvePlot PlotextPlot { height: 1fr; }
    CurvePlot .plot-legend { height: auto; max-height: 3; padding: 0 1; }
    """

    def __init__(
        self,
        title: str,
        x_label: str,
        y_label: str,
        series: list[Series],
        x_ticks: tuple[list[float], list[str]] | None = None,
        *,
        legend: Text | None = None,
        bands: bool = True,
    ) -> None:
        super().__init__()
        self.title, self.x_label, self.y_label = title, x_label, y_label
        self.series, self.x_ticks = series, x_ticks
        self.legend, self.bands = legend, bands
        self.canvas = PlotextPlot()

    def compose(self):
        yield self.canvas
        yield Static(self._legend(), classes="plot-legend")

    def _legend(self) -> Text:
        return self.legend if self.legend is not None else series_legend(self.series)

    def on_mount(self) -> None:
        self.draw()

    def show(
        self,
        title: str,
        x_label: str,
        series: list[Series],
        x_ticks: tuple[list[float], list[str]] | None,
        *,
        y_label: str | None = None,
        legend: Text | None = None,
    ) -> None:
        self.title, self.x_label, self.series, self.x_ticks = title, x_label, series, x_ticks
        self.y_label = y_label or self.y_label
        self.legend = legend
        self.draw()
        self.query_one(".plot-legend", Static).update(self._legend())
        self.canvas.refresh()

    def draw(self) -> None:
        plt = self.canvas.plt
        plt.clear_figure()  # also drops the previous x ticks; the theme is applied at render
        plt.title(visible(self.title))  # plotext passes control characters to the terminal
        plt.xlabel(visible(self.x_label))
        plt.ylabel(visible(self.y_label))
        # every band first, then every line: plotext draws in order, and a band drawn later
        # would cover the lines it crosses
        for series in self.series if self.bands else []:
            edges = band_edges(series)
            if edges is not None:
                x, low, high = (values.tolist() for values in edges)
                for edge in (low, high):
                    plt.plot(x, edge, marker=LINE, color=band_colour(series.colour))
        for series in self.series:
            # no label: plotext would draw its legend over the data (ours is under the plot)
            plt.plot(
                series.x.tolist(), series.y.tolist(), marker=series.marker, color=rgb(series.colour)
            )
        if self.x_ticks is not None:
            plt.xticks(*self.x_ticks)


def rm_colours(context: PanelContext) -> dict[str, str]:
    """Each RM's colour by its place in the run (not among the selected RMs), so an RM keeps
    its colour whichever RMs are marked; results across RMs are neutral."""
    colours = {rm_key: rm_colour(i) for i, (_, rm_key) in enumerate(context.summary.reward_models)}
    colours[RUN_LEVEL] = NEUTRAL_COLOUR
    return colours


def _series(context: PanelContext, curve_key: str, transform=lambda x: x) -> list[Series]:
    """One series per selected RM that stored ``curve_key``, in leaderboard order, then the
    run-level curve (a metric across all RMs) if there is one."""
    labels = dict((key, short_label(label)) for label, key in context.summary.reward_models)
    labels[RUN_LEVEL] = ACROSS_RMS
    colours = rm_colours(context)
    found = []
    for rm_key in (*context.rm_keys, RUN_LEVEL):
        curve = next(
            (
                c
                for (rm, _, key), c in context.summary.curves.items()
                if rm == rm_key and key == curve_key
            ),
            None,
        )
        if curve is not None:
            found.append(
                Series(
                    labels[rm_key], transform(curve.x), curve.value, curve.stderr, colours[rm_key]
                )
            )
    return found


def reta_curve_view(context: PanelContext) -> CurvePlot:
    """RETA(η) against −log2 η, as in the RETA paper's Fig. 3: smaller η to the right."""
    return CurvePlot(
        "RETA curve (band: ± stderr across prompts; 1 = a random RM)",
        "-log2 eta",
        "RETA(eta)",
        _series(context, RETA_CURVE, lambda eta: -np.log2(eta)),
    )


class BestOfNView(Horizontal):
    """Best-of-n and 2nd-best-of-n side by side, against n (log2 axis) or the KL divergence of
    each selection policy from the base policy (:func:`rmaudit.metrics.rank_of_n_kl`)."""

    CURVES = ((1, "best-of-n"), (2, "2nd-best-of-n"))

    def __init__(self, context: PanelContext) -> None:
        super().__init__(classes="panel-row")
        self.context = context
        self.against_kl = False
        self.shown = [
            (rank, title)
            for rank, title in self.CURVES
            if best_of_n_curve_key(rank) in context.curve_keys()
        ]
        self.plots = [CurvePlot(*self._plot_args(rank, title)) for rank, title in self.shown]

    def compose(self):
        yield from self.plots

    def _plot_args(self, rank: int, title: str) -> tuple:
        """(title, x label, y label, series, x ticks) for the current x axis."""
        key = best_of_n_curve_key(rank)
        y_label = "oracle score"
        if self.against_kl:
            return (
                f"{title} vs KL (band: ± stderr)",
                "KL from the base policy (nats)",
                y_label,
                _series(self.context, key, lambda n: rank_of_n_kl(np.rint(n).astype(int), rank)),
                None,
            )
        series = _series(self.context, key, np.log2)
        ns = series[0].x if series else np.array([])
        return (
            f"{title} vs n (band: ± stderr)",
            "n (log2 axis)",
            y_label,
            series,
            (ns.tolist(), [f"{round(2**x)}" for x in ns]),
        )

    def toggle_x_axis(self) -> None:
        """Switch both plots between n and KL on the x axis."""
        self.against_kl = not self.against_kl
        for plot, (rank, title) in zip(self.plots, self.shown, strict=True):
            title, x_label, _, series, ticks = self._plot_args(rank, title)
            plot.show(title, x_label, series, ticks)


def generic_curve_view(context: PanelContext, curve_key: str) -> CurvePlot:
    """Any stored curve (a reliability diagram, a shift curve, ...) as value against x."""
    first = next(c for (_, _, k), c in context.summary.curves.items() if k == curve_key)
    return CurvePlot(
        f"{first.label} (band: ± stderr)", first.x_label, "value", _series(context, curve_key)
    )
