"""Built-in TUI panels, registered through the same ``register_panels`` hook a plugin uses.

The factories import the Textual widgets when called, so registering these panels (which
every ``load_plugins()`` does) never imports Textual.
"""

from __future__ import annotations

from rmaudit import hookimpl
from rmaudit.panels import Panel, PanelContext


def _reta_curve(context: PanelContext, curve_key: str | None):
    from rmaudit.tui.widgets.plots import reta_curve_view

    return reta_curve_view(context)


def _best_of_n(context: PanelContext, curve_key: str | None):
    from rmaudit.tui.widgets.plots import BestOfNView

    return BestOfNView(context)


def _any_curve(context: PanelContext, curve_key: str | None):
    from rmaudit.tui.widgets.plots import generic_curve_view

    return generic_curve_view(context, curve_key)


@hookimpl
def register_panels(register):
    register(Panel("reta-curve", "RETA curve", _reta_curve, curve_keys=("reta_curve",),
                   doc="RETA(η) against −log2 η with stderr bars, one line per RM"))
    register(Panel("best-of-n", "Best-of-n", _best_of_n, curve_keys=("bon_curve", "bon2_curve"),
                   doc="best-of-n and 2nd-best-of-n against n or KL; x toggles the axis"))
    register(Panel("curve", "Curve", _any_curve, catch_all=True,
                   doc="any other stored curve, value against its x"))
