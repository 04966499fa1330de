"""Factories of the built-in panels (``rmaudit.default_plugins.panels`` names them by path):
each builds its tab of the Curves screen, ``factory(context, curve_key)``."""

from __future__ import annotations

from rmaudit.results.panels import PanelContext

from .widgets.pairs import ShiftView, reliability_view
from .widgets.plots import BestOfNView, generic_curve_view, reta_curve_view
from .widgets.regret import RegretView


def reta_curve(context: PanelContext, curve_key: str | None):
    return reta_curve_view(context)


def best_of_n(context: PanelContext, curve_key: str | None):
    return BestOfNView(context)


def any_curve(context: PanelContext, curve_key: str | None):
    return generic_curve_view(context, curve_key)


def shift_sweep(context: PanelContext, curve_key: str | None):
    return ShiftView(context)


def reliability_diagram(context: PanelContext, curve_key: str | None):
    return reliability_view(context)


def regret(context: PanelContext, curve_key: str | None):
    return RegretView(context)
