"""Moved to :mod:`rmaudit.results.panels` (rmaudit 0.3); this import path keeps working for
plugins written against 0.2 (docs/architecture.md, "Moved modules")."""

from rmaudit.results.panels import Panel, PanelContext, PanelView, panel_views, registered_panels

__all__ = ["Panel", "PanelContext", "PanelView", "panel_views", "registered_panels"]
