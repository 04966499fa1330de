"""``?``: every key binding active on the screen beneath: the screen's own keys first, then the
keys that work everywhere, then those of the focused widget (a table's movement keys)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ..widgets.table import NavTable

#: the sections of the help, in order, by where a binding is defined
SECTIONS = ("this screen", "everywhere", "the focused table or text")


class HelpScreen(ModalScreen):
    BINDINGS = [
        Binding("escape", "dismiss", "Close help"),
        Binding("question_mark", "dismiss", "Close help", key_display="?"),
        Binding("q", "dismiss", "Close help"),
    ]

    def __init__(self, beneath: Screen) -> None:
        super().__init__()
        self.beneath_title = type(beneath).__name__.removesuffix("Screen")
        sections: dict[str, list[tuple[str, str]]] = {name: [] for name in SECTIONS}
        # what the screen's class declares (not Textual's keys of every screen: tab, copy)
        own = {binding.action for binding in vars(type(beneath)).get("BINDINGS", [])}
        seen: set[tuple[str, str]] = set()
        for active in beneath.active_bindings.values():
            description = active.binding.description or active.binding.action.replace("_", " ")
            display = self.app.get_key_display(active.binding)
            if (display, description) in seen:
                continue
            seen.add((display, description))
            if active.node is beneath and active.binding.action in own:
                section = SECTIONS[0]
            elif active.node in (beneath, self.app):  # Textual's own screen keys: tab, copy
                section = SECTIONS[1]
            else:
                section = SECTIONS[2]
            sections[section].append((display, description))
        #: (key, what it does, section) in the order shown
        self.rows = [(key, what, name) for name in SECTIONS for key, what in sections[name]]

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Static(
                f"Keys on the {self.beneath_title} screen (escape or ? closes; "
                "the mouse clicks rows, tabs and the footer too)",
                id="help-title",
            )
            yield NavTable(id="help-table")

    def on_mount(self) -> None:
        table = self.query_one(NavTable)
        table.add_columns("key", "what it does", "where")
        previous = None
        for key, what, section in self.rows:
            table.add_row(Text(key), Text(what), Text(section if section != previous else ""))
            previous = section
        table.focus()
