"""``?``: every key binding active on the screen beneath, including the table's own keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ..widgets.table import NavTable


class HelpScreen(ModalScreen):
    BINDINGS = [
        Binding("escape", "dismiss", "Close help"),
        Binding("question_mark", "dismiss", "Close help", key_display="?"),
        Binding("q", "dismiss", "Close help"),
    ]

    def __init__(self, beneath: Screen) -> None:
        super().__init__()
        self.beneath_title = type(beneath).__name__.removesuffix("Screen")
        seen: set[tuple[str, str]] = set()
        self.rows = []
        for active in beneath.active_bindings.values():
            description = active.binding.description or active.binding.action.replace("_", " ")
            display = self.app.get_key_display(active.binding)
            if (display, description) not in seen:
                seen.add((display, description))
                self.rows.append((display, description))

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Static(f"Keys on the {self.beneath_title} screen (escape or ? closes; "
                         "the mouse clicks rows, tabs and the footer too)", id="help-title")
            yield NavTable(id="help-table")

    def on_mount(self) -> None:
        table = self.query_one(NavTable)
        table.add_columns("key", "what it does")
        for row in self.rows:
            table.add_row(*row)
        table.focus()
