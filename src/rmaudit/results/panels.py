"""TUI panels contributed by plugins (the ``register_panels`` hook), without importing Textual.

A metric plugin that stores curves or scalars can show them in ``rmaudit tui`` by
registering a :class:`Panel`: which stored curve keys and scalar metric keys it shows, and a
``factory`` that builds its widget.  Only the factory touches Textual, and the TUI calls it
only when the panel is displayed, so the core and headless runs never import a UI toolkit.
The built-in panels are registered the same way, all of them in
``rmaudit.default_plugins.panels``, with factories named by path in ``rmaudit.tui.panel_views``;
a new metric adds its view by registering a panel, not by editing the app.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
class Panel:
    """A view of some stored results in the TUI's Curves screen.

    ``curve_keys`` and ``metric_keys`` name what it shows, and ``curve_prefixes`` claims every curve
    whose key starts with one of them (a family of curves, e.g. one per proxy RM); it is offered for
    a run when at least one of them was stored.  A panel with ``catch_all=True`` is instead offered
    once per stored curve that no other panel claims (the generic curve view), and its factory finds
    that curve's key in ``curve_key``.  ``factory(context, curve_key)`` returns a Textual widget and
    is where the panel imports Textual; it may be given as a callable or as its path,
    ``"package.module:function"``, imported when the panel is first shown.
    """

    name: str
    title: str
    factory: Callable[[PanelContext, str | None], Any] | str
    curve_keys: tuple[str, ...] = ()
    metric_keys: tuple[str, ...] = ()
    catch_all: bool = False
    doc: str = ""
    curve_prefixes: tuple[str, ...] = ()

    def claims(self, curve_key: str) -> bool:
        """Whether this panel shows the stored curve ``curve_key``."""
        return curve_key in self.curve_keys or any(
            curve_key.startswith(p) for p in self.curve_prefixes
        )

    def applies(self, context: PanelContext) -> bool:
        return bool(
            any(self.claims(key) for key in context.curve_keys())
            or set(self.metric_keys) & set(context.metric_keys())
        )

    def build(self, context: PanelContext, curve_key: str | None) -> Any:
        factory = self.factory
        if isinstance(factory, str):
            module, _, name = factory.partition(":")
            factory = getattr(importlib.import_module(module), name)
        return factory(context, curve_key)


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
    from rmaudit.plugins import load_plugins, pm

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
        impl.function(register=register)
    return panels


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
