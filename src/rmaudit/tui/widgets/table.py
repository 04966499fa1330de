"""A DataTable with the keys a terminal user expects (j/k, g/G) besides the arrows."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import DataTable


class NavTable(DataTable):
    """DataTable plus vi-style movement; zebra stripes so long rows stay readable."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Open", show=False),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("h", "cursor_left", "Left", show=False),
        Binding("l", "cursor_right", "Right", show=False),
        Binding("g", "scroll_top", "First row", show=False),
        Binding("G", "scroll_bottom", "Last row", show=False),
    ]

    def __init__(self, *, cursor_type: str = "row", id: str | None = None) -> None:
        super().__init__(cursor_type=cursor_type, zebra_stripes=True, id=id)

    def row_values(self) -> list[list[str]]:
        """Every row as shown, as plain strings (what the tests and the search look at)."""
        return [[str(cell) for cell in self.get_row_at(i)] for i in range(self.row_count)]


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 1] + "…"
