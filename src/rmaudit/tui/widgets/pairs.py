"""Terminal views of the preference-pair curves: the shift sweep and the reliability diagram.

Built only by the factories of the built-in panels (``rmaudit.tui.panel_views``), so nothing
imports Textual unless the TUI shows one of them.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text

from rmaudit.components.vocabulary import (
    RELIABILITY_DIAGRAM,
    SHIFT_QUANTITIES,
    SHIFT_TARGETS,
    shift_curve_key,
)
from rmaudit.display.formatting import NEUTRAL_COLOUR, short_label
from rmaudit.display.literal import assemble
from rmaudit.results.panels import PanelContext
from rmaudit.results.summary import Curve
from rmaudit.tui.widgets.plots import (
    CROSSES,
    DOTS,
    LINE,
    CurvePlot,
    Series,
    rm_colours,
    series_legend,
)

#: how each shift target is drawn: RMs differ by colour, targets by line style
TARGET_STYLES = dict(zip(SHIFT_TARGETS, (LINE, DOTS, CROSSES), strict=True))


def _rm_curves(context: PanelContext, curve_key: str) -> list[tuple[str, str, Curve]]:
    """(RM key, RM label, stored curve) of each selected RM that stored ``curve_key``."""
    labels = {key: short_label(label) for label, key in context.summary.reward_models}
    return [
        (rm, labels[rm], curve)
        for rm in context.rm_keys
        for (stored_rm, _, key), curve in context.summary.curves.items()
        if stored_rm == rm and key == curve_key
    ]


class ShiftView(CurvePlot):
    """RMs Under Distribution Shift, Fig. 1-2: one quantity at a time against the shift level
    p (``v`` shows the next), one line per RM (by colour) and shift target (by line style)."""

    QUANTITIES = tuple(SHIFT_QUANTITIES)

    def __init__(self, context: PanelContext) -> None:
        self.context = context
        self.quantity = self.QUANTITIES[0]
        super().__init__(*self._plot_args(), legend=self._shift_legend())

    def _plot_args(self) -> tuple:
        title, higher_is_better = SHIFT_QUANTITIES[self.quantity]
        colours = rm_colours(self.context)
        series = [
            Series(
                f"{label} · {target}",
                curve.x,
                curve.value,
                curve.stderr,
                colours[rm_key],
                TARGET_STYLES[target],
            )
            for target in SHIFT_TARGETS
            for rm_key, label, curve in _rm_curves(
                self.context, shift_curve_key(self.quantity, target)
            )
        ]
        others = " · ".join(SHIFT_QUANTITIES[q][0] for q in self.QUANTITIES if q != self.quantity)
        return (
            f"{title} {'↑' if higher_is_better else '↓'} against shift level p (v: {others})",
            "shift level p",
            title,
            series,
        )

    def _shift_legend(self) -> Text:
        """RMs by colour, then the targets by line style."""
        colours = rm_colours(self.context)
        shown = {
            rm_key: label
            for rm_key, label, _ in (
                c
                for t in SHIFT_TARGETS
                for c in _rm_curves(self.context, shift_curve_key(self.quantity, t))
            )
        }
        targets = [
            t for t in SHIFT_TARGETS if _rm_curves(self.context, shift_curve_key(self.quantity, t))
        ]
        rms = series_legend(
            [
                Series(label, np.array([]), np.array([]), np.array([]), colours[rm_key])
                for rm_key, label in shown.items()
            ]
        )
        styles = series_legend(
            [
                Series(
                    f"{target} shifted",
                    np.array([]),
                    np.array([]),
                    np.array([]),
                    NEUTRAL_COLOUR,
                    TARGET_STYLES[target],
                )
                for target in targets
            ]
        )
        return assemble(rms, "\n", styles, ("(band: ± stderr across prompts)", "dim"))

    def next_view(self) -> None:
        """Show the next quantity (the Curves screen's v key)."""
        self.quantity = self.QUANTITIES[
            (self.QUANTITIES.index(self.quantity) + 1) % len(self.QUANTITIES)
        ]
        title, x_label, y_label, series = self._plot_args()
        self.show(title, x_label, series, None, y_label=y_label, legend=self._shift_legend())


def reliability_view(context: PanelContext) -> CurvePlot:
    """Accuracy against mean confidence per bin, with the diagonal of perfect calibration."""
    colours = rm_colours(context)
    series = [
        Series(
            label,
            curve.x,
            curve.value,
            curve.stderr,
            colours[rm_key],
            interval=None
            if curve.ci_low is None or curve.ci_high is None
            else (curve.ci_low, curve.ci_high),
        )
        for rm_key, label, curve in _rm_curves(context, RELIABILITY_DIAGRAM)
    ]
    diagonal = np.array([0.5, 1.0])  # a pair's confidence is at least 1/2
    series.append(
        Series(
            "perfectly calibrated (y = x)", diagonal, diagonal, np.zeros(2), NEUTRAL_COLOUR, DOTS
        )
    )
    return CurvePlot(
        "Reliability diagram (band: Wilson 95% interval per bin)",
        "mean confidence",
        "accuracy",
        series,
    )
