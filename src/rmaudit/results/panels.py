"""Which panels a run gets (the ``register_panels`` hook), without importing Textual.

The contract, :class:`Panel`, lives with the other plugin contracts
(:mod:`rmaudit.components.panels`) and is re-exported here, its documented import path.  This
module reads what a run stored and offers the tabs: every registered panel that applies, then
the catch-all panel once per curve no other panel claims.  A new metric adds its view by
registering a panel, not by editing the app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rmaudit.components.panels import Panel, PanelFactory

if TYPE_CHECKING:
    from rmaudit.results.summary import RunSummary
    from rmaudit.store import Store


@dataclass(frozen=True)
class PanelContext:
    """What a panel's factory gets: the open store, the run's results, the RMs to show."""

    store: Store
    summary: RunSummary
    rm_keys: tuple[str, ...]  # the RMs selected on the leaderboard (all when none is)

    def curve_keys(self) -> list[str]:
        """Keys of every curve stored for the run (e.g. ``reta_curve``, ``bon_curve``)."""
        return [key for _, key in self.summary.curve_keys()]

    def metric_keys(self) -> list[str]:
        """Keys of every scalar stored for the run (e.g. ``reta@0.25``), per-RM and across RMs."""
        keys = [column.key for column in self.summary.columns]
        return keys + [column.key for column, _ in self.summary.run_level if column.key not in keys]


@dataclass(frozen=True)
class PanelView:
    """One tab of the Curves screen: a panel, and the curve it shows when it is a catch-all."""

    panel: Panel
    curve_key: str | None = None

    @property
    def title(self) -> str:
        return (
            self.panel.title if self.curve_key is None else f"{self.panel.title}: {self.curve_key}"
        )

    def build(self, context: PanelContext) -> Any:
        return self.panel.build(context, self.curve_key)


def registered_panels() -> list[Panel]:
    """Every panel, built-ins first, in registration order; names must be unique."""
    from rmaudit.plugins import DEFAULT_PLUGINS, load_plugins, pm

    load_plugins()
    panels: list[Panel] = []

    def register(panel: Panel) -> None:
        if not isinstance(panel, Panel):
            raise TypeError(
                f"register_panels expects rmaudit.results.panels.Panel instances, got {panel!r}"
            )
        if any(p.name == panel.name for p in panels):
            raise TypeError(f"panel name {panel.name!r} is registered twice")
        panels.append(panel)

    for impl in pm.hook.register_panels.get_hookimpls():  # registration order: built-ins first
        impl.function(register=_checked(register, built_in=impl.plugin_name in DEFAULT_PLUGINS))
    return panels


def _checked(register: Callable[[Panel], None], built_in: bool) -> Callable[[Panel], None]:
    """``register`` for one plugin: only a built-in panel may leave its view to the TUI."""

    def checked(panel: Panel) -> None:
        if isinstance(panel, Panel) and panel.factory is None and not built_in:
            raise TypeError(f"panel {panel.name!r} has no factory (only built-in panels may)")
        register(panel)

    return checked


def panel_views(context: PanelContext, panels: list[Panel] | None = None) -> list[PanelView]:
    """The tabs to show for a run: every applicable panel, then a catch-all tab per unclaimed
    curve."""
    panels = registered_panels() if panels is None else panels
    views = [PanelView(p) for p in panels if not p.catch_all and p.applies(context)]
    catch_all = next((p for p in panels if p.catch_all), None)
    if catch_all is not None:
        views += [
            PanelView(catch_all, key)
            for key in context.curve_keys()
            if not any(view.panel.claims(key) for view in views)
        ]
    return views


__all__ = [
    "Panel",
    "PanelContext",
    "PanelFactory",
    "PanelView",
    "panel_views",
    "registered_panels",
]
