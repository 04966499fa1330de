"""The regret panel (registered by ``rmaudit.default_plugins.regret`` through ``register_panels``):
Rethinking RM Evaluation's Table 1 / Table 4 with bootstrap CIs for each regret-correlation study of
the run, the Goodhart overlay (observed accuracy and NDR of each proxy against the closed-form curve
of the Regressional Goodhart normal model, Rethinking RM Evaluation, arXiv 2410.05584, Fig. 8), and
each proxy's NDR against n or KL."""

from __future__ import annotations

import numpy as np
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot

from rmaudit.components.vocabulary import NDR_CURVE_PREFIX
from rmaudit.display.formatting import NEUTRAL_COLOUR, rm_colour, visible
from rmaudit.display.literal import literal
from rmaudit.metrics import bon_kl
from rmaudit.results.panels import PanelContext
from rmaudit.results.regret import (
    GoodhartPoint,
    goodhart_curve,
    goodhart_points,
    load_studies,
    study_table,
)

from .plots import CurvePlot, Series


class StudyTableView(DataTable):
    """One study's Table 1 / Table 4; not focusable, so the Curves screen keeps its keys."""

    can_focus = False

    def __init__(self, headers: list[str], rows: list[list[str]], *, id: str | None = None) -> None:
        super().__init__(cursor_type="none", zebra_stripes=True, show_cursor=False, id=id)
        self._headers, self._table_rows = headers, rows

    def on_mount(self) -> None:
        self.add_columns(*(literal(header) for header in self._headers))
        self.add_rows([[literal(cell) for cell in row] for row in self._table_rows])

    def row_values(self) -> list[list[str]]:
        return [[str(cell) for cell in self.get_row_at(i)] for i in range(self.row_count)]


class GoodhartPlot(PlotextPlot):
    """Observed (accuracy, NDR) of each (gold, proxy) pair, one colour per study, on the curve
    the Regressional Goodhart normal model predicts (Rethinking RM Evaluation, Fig. 8)."""

    def __init__(self, points: dict[str, list[GoodhartPoint]]) -> None:
        super().__init__(classes="regret-plot")
        self.points = points

    def on_mount(self) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.title("observed vs Regressional Goodhart (Rethinking RM Evaluation, Fig. 8)")
        plt.xlabel("pairwise accuracy")
        plt.ylabel("best-of-n NDR")
        accuracy, ndr = goodhart_curve()
        plt.plot(accuracy.tolist(), ndr.tolist(), label="normal model", marker="braille")
        for label, points in self.points.items():
            plt.scatter([p.accuracy for p in points], [p.ndr for p in points], label=visible(label))


def ndr_curves(summary, studies: dict[str, list[dict]]) -> dict:
    """Proxy label → NDR curve of one study: the one whose gold is the oracle if the run has
    it (every RM a proxy), else the first study that stored curves."""
    by_study: dict[str, dict] = {}
    for (_, metric, key), curve in summary.curves.items():
        if key.startswith(NDR_CURVE_PREFIX):
            by_study.setdefault(metric, {})[key.removeprefix(NDR_CURVE_PREFIX)] = curve
    oracle = [
        label
        for label, rows in studies.items()
        if label in by_study and study_table(label, rows).gold == "oracle"
    ]
    chosen = oracle[0] if oracle else next(iter(by_study), None)
    return {} if chosen is None else by_study.get(chosen, {})


class RegretView(VerticalScroll):
    """Every regret-correlation study of the run: tables, the Goodhart overlay, NDR curves."""

    DEFAULT_CSS = """
    RegretView StudyTableView { height: auto; margin-bottom: 1; }
    RegretView .regret-plots { height: 22; }
    RegretView .study-title { text-style: bold; }
    """

    def __init__(self, context: PanelContext) -> None:
        super().__init__(id="regret-view")
        self.context = context
        self.against_kl = False
        self.studies = load_studies(context.store, context.summary.run.id)
        self.points = {label: goodhart_points(rows) for label, rows in self.studies.items()}
        self.curves = ndr_curves(context.summary, self.studies)
        self.ndr_plot = CurvePlot(*self._plot_args()) if self.curves else None

    def compose(self):
        if not self.studies:
            yield Static("no regret-correlation results stored for this run", classes="note")
        for index, (label, rows) in enumerate(self.studies.items()):
            table = study_table(label, rows)
            yield Static(
                literal(
                    f"{label}: error metric vs policy regret (best-of-{table.n} NDR)"
                    f" — {table.caption}"
                ),
                classes="study-title",
            )
            yield StudyTableView(table.headers, table.rows, id=f"regret-table-{index}")
        with Horizontal(classes="regret-plots"):
            if any(self.points.values()):
                yield GoodhartPlot({k: v for k, v in self.points.items() if v})
            if self.ndr_plot is not None:
                yield self.ndr_plot

    def _plot_args(self) -> tuple:
        """(title, x label, y label, series, x ticks) of the NDR curves for the current axis."""
        first = next(iter(self.curves.values()))
        colours = {
            label: rm_colour(i) for i, (label, _) in enumerate(self.context.summary.reward_models)
        }
        if self.against_kl:
            series = [
                Series(
                    proxy,
                    np.asarray(bon_kl(np.rint(c.x).astype(int)), float),
                    c.value,
                    c.stderr,
                    colours.get(proxy, NEUTRAL_COLOUR),
                )
                for proxy, c in self.curves.items()
            ]
            return (f"{first.label} vs KL", "KL (nats)", "NDR", series, None)
        series = [
            Series(proxy, np.log2(c.x), c.value, c.stderr, colours.get(proxy, NEUTRAL_COLOUR))
            for proxy, c in self.curves.items()
        ]
        return (
            f"{first.label} vs n",
            "n (log2 axis)",
            "NDR",
            series,
            (series[0].x.tolist(), [f"{round(2**x)}" for x in series[0].x]),
        )

    def toggle_x_axis(self) -> None:
        """Switch the NDR curves between n and KL on the x axis (the Curves screen's x key)."""
        if self.ndr_plot is None:
            return
        self.against_kl = not self.against_kl
        title, x_label, _, series, ticks = self._plot_args()
        self.ndr_plot.show(title, x_label, series, ticks)
