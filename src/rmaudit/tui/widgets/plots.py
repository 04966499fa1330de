"""Terminal curve plots (textual-plotext) behind the built-in panels.

Each plot draws one line per reward model and the standard error across prompts as error
bars around it (plotext has no filled band).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from textual.containers import Horizontal
from textual_plotext import PlotextPlot

from rmaudit.browse import ACROSS_RMS
from rmaudit.components import RUN_LEVEL
from rmaudit.metrics import bon_kl
from rmaudit.panels import PanelContext
from rmaudit.vocabulary import RETA_CURVE, best_of_n_curve_key



@dataclass(frozen=True)
class Series:
    label: str
    x: np.ndarray
    y: np.ndarray
    stderr: np.ndarray


class CurvePlot(PlotextPlot):
    """Lines with error bars, axis labels and a legend."""

    def __init__(self, title: str, x_label: str, y_label: str, series: list[Series],
                 x_ticks: tuple[list[float], list[str]] | None = None) -> None:
        super().__init__()
        self.title, self.x_label, self.y_label = title, x_label, y_label
        self.series, self.x_ticks = series, x_ticks

    def on_mount(self) -> None:
        self.draw()

    def show(self, title: str, x_label: str, series: list[Series],
             x_ticks: tuple[list[float], list[str]] | None) -> None:
        self.title, self.x_label, self.series, self.x_ticks = title, x_label, series, x_ticks
        self.draw()
        self.refresh()

    def draw(self) -> None:
        plt = self.plt
        plt.clear_figure()  # also drops the previous x ticks; the theme is applied at render
        plt.title(self.title)
        plt.xlabel(self.x_label)
        plt.ylabel(self.y_label)
        for series in self.series:
            plt.plot(series.x.tolist(), series.y.tolist(), label=series.label, marker="braille")
            plt.error(series.x.tolist(), series.y.tolist(), yerr=np.nan_to_num(series.stderr).tolist())
        if self.x_ticks is not None:
            plt.xticks(*self.x_ticks)


def _series(context: PanelContext, curve_key: str, transform=lambda x: x) -> list[Series]:
    """One series per selected RM that stored ``curve_key``, in leaderboard order, then the
    run-level curve (a metric across all RMs) if there is one."""
    labels = dict((key, label) for label, key in context.summary.reward_models)
    labels[RUN_LEVEL] = ACROSS_RMS
    found = []
    for rm_key in (*context.rm_keys, RUN_LEVEL):
        curve = next((c for (rm, _, key), c in context.summary.curves.items()
                      if rm == rm_key and key == curve_key), None)
        if curve is not None:
            found.append(Series(labels[rm_key], transform(curve.x), curve.value, curve.stderr))
    return found


def reta_curve_view(context: PanelContext) -> CurvePlot:
    """RETA(η) against −log2 η, as in the RETA paper's Fig. 3: smaller η to the right."""
    return CurvePlot("RETA curve (± stderr across prompts)", "-log2 eta", "RETA(eta)",
                     _series(context, RETA_CURVE, lambda eta: -np.log2(eta)))


class BestOfNView(Horizontal):
    """Best-of-n and 2nd-best-of-n side by side, against n (log2 axis) or the KL of best-of-n."""

    CURVES = ((best_of_n_curve_key(1), "best-of-n"), (best_of_n_curve_key(2), "2nd-best-of-n"))

    def __init__(self, context: PanelContext) -> None:
        super().__init__(classes="panel-row")
        self.context = context
        self.against_kl = False
        self.shown = [(key, title) for key, title in self.CURVES if key in context.curve_keys()]
        self.plots = [CurvePlot(*self._plot_args(key, title)) for key, title in self.shown]

    def compose(self):
        yield from self.plots

    def _plot_args(self, key: str, title: str) -> tuple:
        """(title, x label, y label, series, x ticks) for the current x axis."""
        if self.against_kl:
            return (f"{title} vs KL", "KL (nats)", "oracle score",
                    _series(self.context, key, lambda n: bon_kl(np.rint(n).astype(int))), None)
        series = _series(self.context, key, np.log2)
        ns = series[0].x if series else np.array([])
        return (f"{title} vs n", "n (log2 axis)", "oracle score", series,
                (ns.tolist(), [f"{round(2 ** x)}" for x in ns]))

    def toggle_x_axis(self) -> None:
        """Switch both plots between n and KL on the x axis."""
        self.against_kl = not self.against_kl
        for plot, (key, title) in zip(self.plots, self.shown):
            title, x_label, _, series, ticks = self._plot_args(key, title)
            plot.show(title, x_label, series, ticks)


def generic_curve_view(context: PanelContext, curve_key: str) -> CurvePlot:
    """Any stored curve (a reliability diagram, a shift curve, ...) as value against x."""
    first = next(c for (_, _, k), c in context.summary.curves.items() if k == curve_key)
    return CurvePlot(f"{first.label} (± stderr)", first.x_label, "value", _series(context, curve_key))
