"""The search of a screen whose table a :class:`~rmaudit.tui.widgets.search.SearchBox` filters
(failures, pair failures, a prompt's responses)."""

from __future__ import annotations

from textual.widgets import Input

from ..widgets.search import SearchBox
from ..widgets.table import NavTable
from ._base import AuditScreen, following


class TableSearch(AuditScreen):
    """``/`` opens the search, each keystroke refills the table (the screen's ``fill``), enter
    goes to the matches (:meth:`open_match`), and escape closes the search before it leaves
    the screen.  The base of a screen with a ``table``, a ``fill`` and a ``query_text``."""

    query_text: str
    run_id: str
    rm_key: str

    @property
    def table(self) -> NavTable:
        raise NotImplementedError  # each screen names its table

    def fill(self) -> None:
        raise NotImplementedError  # each screen fills its table with the query's matches

    def show_loaded(self) -> None:
        """The rows arrived: the table filled, and focused again unless the search is open
        (the loading overlay took the table's focus)."""
        self.table.loading = False
        self.fill()
        if not self.query_one(SearchBox).is_open:
            self.table.focus()

    def next_rm(self) -> str:
        """The run's RM after this screen's (after the last: the first), for its ``r`` key."""
        keys = [key for _, key in self.app.summary(self.run_id).reward_models]
        return following(keys, self.rm_key)

    def action_search(self) -> None:
        self.query_one(SearchBox).open()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value.strip()
        self.fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.table.focus()
        if self.table.row_count:
            self.open_match()

    def open_match(self) -> None:
        """enter in the search: open the highlighted (first) match."""
        self.table.action_select_cursor()

    def action_back(self) -> None:
        search = self.query_one(SearchBox)
        if search.is_open:  # escape first closes the search
            search.close()
            self.table.focus()
        else:
            self.app.pop_screen()
