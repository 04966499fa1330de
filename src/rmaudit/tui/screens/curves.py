"""The curves of the selected RMs, one tab per panel (plugins add panels via
``register_panels``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from rmaudit.display.formatting import visible
from rmaudit.display.literal import literal
from rmaudit.results.panels import PanelContext, panel_views
from rmaudit.tui.panel_views import build_view

from ._base import AuditScreen

#: the most models the title names (more: their count)
NAMED_MOST = 6


class CurvesScreen(AuditScreen):
    BINDINGS = [
        Binding("x", "toggle_axis", "x axis: n / KL"),
        Binding("v", "next_view", "Next view"),
        Binding("right,l", "next_tab", "Next tab"),
        Binding("left,h", "previous_tab", "Previous tab"),
    ]

    def __init__(self, run_id: str, rm_keys: tuple[str, ...]) -> None:
        super().__init__()
        self.run_id = run_id
        self.context = PanelContext(self.app.store, self.app.summary(run_id), rm_keys)
        self.views = panel_views(self.context)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(literal(self.title_text()), id="curves-title", classes="title")
        if not self.views:
            yield Footer()
            return
        with TabbedContent(id="curves-tabs"):
            for index, view in enumerate(self.views):
                # a Content is never markup (a tab title is neither str nor Text here)
                with TabPane(Content(visible(view.title)), id=f"panel-{index}"):
                    yield build_view(view, self.context)
        yield Footer()

    def title_text(self) -> str:
        """Whose curves these are (the models by name while they are few), or that the run
        stored none."""
        if not self.views:
            return "no curves stored for this run"
        keys = self.context.rm_keys
        labels = (
            ", ".join(self.app.rm_label(self.run_id, k) for k in keys)
            if len(keys) <= NAMED_MOST
            else f"{len(keys)} models"
        )
        return f"curves of {labels} (mark RMs with space on the leaderboard)"

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one(TabbedContent)

    def active_panel(self):
        """The widget the active tab's panel built (None: no panel)."""
        if not self.views:
            return None
        pane = self.tabs.active_pane
        return pane.children[0] if pane is not None and pane.children else None

    def action_toggle_axis(self) -> None:
        # a panel opts in to the x-axis key by having a toggle_x_axis method
        toggle = getattr(self.active_panel(), "toggle_x_axis", None)
        if toggle is not None:
            toggle()
        else:
            self.notify("this panel has a single x axis", timeout=2)

    def action_next_view(self) -> None:
        # a panel with several views (the shift sweep's quantities) has a next_view method
        step = getattr(self.active_panel(), "next_view", None)
        if step is not None:
            step()
        else:
            self.notify("this panel has a single view", timeout=2)

    def _step_tab(self, step: int) -> None:
        ids = [f"panel-{i}" for i in range(len(self.views))]
        if ids:
            self.tabs.active = ids[(ids.index(self.tabs.active) + step) % len(ids)]

    def action_next_tab(self) -> None:
        self._step_tab(1)

    def action_previous_tab(self) -> None:
        self._step_tab(-1)
