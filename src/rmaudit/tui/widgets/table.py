"""A DataTable with the keys a terminal user expects (j/k, g/G) besides the arrows."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable
from textual.widgets.data_table import CursorType

from rmaudit.display.literal import literal_line

#: what a cell adds to its content: DataTable's padding of one column on each side
CELL_PADDING = 2
#: the vertical scrollbar's width, and the least a text column gets
SCROLLBAR, MIN_TEXT = 2, 16


class NavTable(DataTable):
    """DataTable plus vi-style movement; zebra stripes so long rows stay readable.

    ``fixed_columns`` stay in view when the table scrolls sideways (the RM's name).  Every
    cell that holds text from data must be a ``Text`` (``rmaudit.display.literal``): a ``str``
    cell is parsed as markup by DataTable.
    """

    BINDINGS = [
        Binding("enter", "select_cursor", "Open", show=False),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("h", "cursor_left", "Left", show=False),
        Binding("l", "cursor_right", "Right", show=False),
        Binding("g", "scroll_top", "First row", show=False),
        Binding("G", "scroll_bottom", "Last row", show=False),
    ]

    def __init__(
        self, *, cursor_type: CursorType = "row", fixed_columns: int = 0, id: str | None = None
    ) -> None:
        super().__init__(cursor_type=cursor_type, zebra_stripes=True, id=id)
        self.fixed_columns = fixed_columns

    def row_values(self) -> list[list[str]]:
        """Every row as shown, as plain strings (what the tests and the search look at)."""
        return [[str(cell) for cell in self.get_row_at(i)] for i in range(self.row_count)]

    def text_width(self, headers: list[str], rows: list[list[object]], total: int = 0) -> int:
        """The columns left for one more (last) text column after ``headers``/``rows`` (every
        other column, header and cells), so text fills the table's width and no more."""
        total = total or self.size.width or self.app.size.width
        used = sum(
            max([cell_len(str(h)), *(cell_len(str(r[i])) for r in rows)]) + CELL_PADDING
            for i, h in enumerate(headers)
        )
        return max(MIN_TEXT, total - used - CELL_PADDING - SCROLLBAR)


def shorten(text: str, width: int) -> Text:
    """``text`` from data on one line, at most ``width`` cells, with an ellipsis if cut."""
    return literal_line(text, width)
