"""Terminal views of the preference-pair curves: the shift sweep and the reliability diagram.

Built only by the factories of the built-in panels (``rmaudit.tui.panel_views``), so nothing
imports Textual unless the TUI shows one of them.
"""

from __future__ import annotations

import numpy as np
from textual.containers import Horizontal, Vertical

from rmaudit.panels import PanelContext
from rmaudit.tui.widgets.plots import CurvePlot, Series
from rmaudit.vocabulary import RELIABILITY_DIAGRAM, SHIFT_QUANTITIES, SHIFT_TARGETS, shift_curve_key


def _rm_curves(context: PanelContext, curve_key: str) -> list[tuple[str, object]]:
    """(RM label, stored curve) of each selected RM that stored ``curve_key``."""
    labels = {key: label for label, key in context.summary.reward_models}
    return [(labels[rm], curve) for rm in context.rm_keys
            for (stored_rm, _, key), curve in context.summary.curves.items()
            if stored_rm == rm and key == curve_key]


class ShiftView(Vertical):
    """Seed 004 Fig. 1-2: one plot per quantity against p, one line per RM and shift target."""

    ROWS = (("accuracy", "confidence", "ece"), ("auroc", "fpr95"))

    def __init__(self, context: PanelContext) -> None:
        super().__init__()
        self.plots = [[CurvePlot(*self._plot_args(context, quantity)) for quantity in row]
                      for row in self.ROWS]

    @staticmethod
    def _plot_args(context: PanelContext, quantity: str) -> tuple:
        title, higher_is_better = SHIFT_QUANTITIES[quantity]
        series = [Series(f"{label} · {target}", curve.x, curve.value, curve.stderr)
                  for target in SHIFT_TARGETS
                  for label, curve in _rm_curves(context, shift_curve_key(quantity, target))]
        return f"{title} {'↑' if higher_is_better else '↓'}", "shift level p", title, series

    def compose(self):
        for row in self.plots:
            yield Horizontal(*row, classes="panel-row")


def reliability_view(context: PanelContext) -> CurvePlot:
    """Accuracy against mean confidence per bin, with the diagonal of perfect calibration."""
    series = [Series(label, curve.x, curve.value, curve.stderr)
              for label, curve in _rm_curves(context, RELIABILITY_DIAGRAM)]
    diagonal = np.array([0.5, 1.0])  # a pair's confidence is at least 1/2
    series.append(Series("perfectly calibrated", diagonal, diagonal, np.zeros(2)))
    return CurvePlot("Reliability diagram (± binomial stderr per bin)", "mean confidence",
                     "accuracy", series)
