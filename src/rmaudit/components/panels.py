"""The panel contract (the ``register_panels`` hook): a view of stored results in the TUI.

A metric plugin that stores curves or scalars can show them in ``rmaudit tui`` by registering
a :class:`Panel`: which stored curve keys and scalar metric keys it shows, and a ``factory``
that builds its widget.  Only the factory touches Textual, and the TUI calls it only when the
panel is displayed, so the core and headless runs never import a UI toolkit.  The built-in
panels (``rmaudit.default_plugins.panels``) register with no factory: their views are the
TUI's own (``rmaudit.tui.panel_views``), looked up by the panel's name, so no layer names a
module above it.  Which tabs a run gets, and what a factory is given, is read back with the
run's results (:mod:`rmaudit.results.panels`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

#: ``factory(context, curve_key)``: the widget of a panel's tab (``context``: a
#: :class:`rmaudit.results.panels.PanelContext`)
PanelFactory = Callable[[Any, "str | None"], Any]


class StoredKeys(Protocol):
    """What a panel needs to know of a run to say whether it applies: the keys it stored."""

    def curve_keys(self) -> list[str]: ...

    def metric_keys(self) -> list[str]: ...


@dataclass(frozen=True)
class Panel:
    """A view of some stored results in the TUI's Curves screen.

    ``curve_keys`` and ``metric_keys`` name what it shows, and ``curve_prefixes`` claims every curve
    whose key starts with one of them (a family of curves, e.g. one per proxy RM); it is offered for
    a run when at least one of them was stored.  A panel with ``catch_all=True`` is instead offered
    once per stored curve that no other panel claims (the generic curve view), and its factory finds
    that curve's key in ``curve_key``.  ``factory(context, curve_key)`` returns a Textual widget and
    is where the panel imports Textual; it may be given as a callable or as its path,
    ``"package.module:function"``, imported when the panel is first shown.  ``None`` is for the
    built-in panels only: the TUI supplies their views.
    """

    name: str
    title: str
    factory: PanelFactory | str | None
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

    def applies(self, stored: StoredKeys) -> bool:
        """Whether a run that stored these keys gets this panel's tab."""
        return bool(
            any(self.claims(key) for key in stored.curve_keys())
            or set(self.metric_keys) & set(stored.metric_keys())
        )

    def build(self, context: Any, curve_key: str | None) -> Any:
        factory = self.factory
        if factory is None:
            raise LookupError(f"panel {self.name!r} is built in: the TUI supplies its view")
        if isinstance(factory, str):
            module, _, name = factory.partition(":")
            factory = getattr(importlib.import_module(module), name)
        return factory(context, curve_key)
