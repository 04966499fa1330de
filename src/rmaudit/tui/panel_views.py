"""The views of the built-in panels (``rmaudit.default_plugins.panels`` registers them with no
factory), by panel name: each builds its tab of the Curves screen."""

from __future__ import annotations

from typing import Any

from rmaudit.results.panels import PanelContext, PanelFactory, PanelView

from .widgets.pairs import ShiftView, reliability_view
from .widgets.plots import BestOfNView, generic_curve_view, reta_curve_view
from .widgets.regret import RegretView

#: panel name → ``factory(context, curve_key)`` of its view
BUILT_IN_VIEWS: dict[str, PanelFactory] = {
    "reta-curve": lambda context, curve_key: reta_curve_view(context),
    "best-of-n": lambda context, curve_key: BestOfNView(context),
    "curve": lambda context, curve_key: _one_curve(context, curve_key),
    "shift": lambda context, curve_key: ShiftView(context),
    "reliability-diagram": lambda context, curve_key: reliability_view(context),
    "regret": lambda context, curve_key: RegretView(context),
}


def _one_curve(context: PanelContext, curve_key: str | None) -> Any:
    if curve_key is None:  # the catch-all panel is offered once per unclaimed curve
        raise ValueError("the generic curve view shows one curve: give its key")
    return generic_curve_view(context, curve_key)


def build_view(view: PanelView, context: PanelContext) -> Any:
    """A tab's widget: its panel's factory, or the TUI's view when the panel is built in."""
    if view.panel.factory is None:
        return BUILT_IN_VIEWS[view.panel.name](context, view.curve_key)
    return view.build(context)
