"""One prompt: its responses sorted by the RM's score, with the oracle's view beside each.

★ marks the RM's top-η set (the responses RETA(η) averages); ``c`` adds a second RM's rank
and top set beside the first, to compare two RMs on the same prompt.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from rmaudit.display.formatting import eta_label
from rmaudit.display.literal import assemble, literal
from rmaudit.results.browse import ResponseRow, prompt_detail, top_eta

from ..widgets.search import SearchBox
from ..widgets.table import NavTable, shorten
from ._base import AuditScreen, following
from ._search import TableSearch

STAR = "★"
SORTS = ("RM rank", "oracle rank", "sample")


class PromptScreen(TableSearch, AuditScreen):
    BINDINGS = [
        Binding("c", "compare", "Compare RM"),
        Binding("s", "sort", "Sort"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("tab", "switch_focus", "Table / text", show=False),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, run_id: str, rm_key: str, prompt_id: str) -> None:
        super().__init__()
        self.run_id, self.rm_key = run_id, rm_key
        summary = self.app.summary(run_id)
        self.rm_keys = [k for _, k in summary.reward_models]
        self.detail = prompt_detail(self.app.store, summary.benchmark, prompt_id, self.rm_keys)
        self.eta = top_eta(self.app.store, run_id)
        self.compare_key: str | None = None
        self.sort = SORTS[0]
        self.query_text = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="prompt-text"):
            yield Static(literal(self.detail.text))
        yield Static("", id="prompt-info", classes="title")
        yield SearchBox("search responses (enter: to the table, escape: clear)", id="prompt-search")
        yield NavTable(id="responses-table")
        with VerticalScroll(id="response-text"):
            yield Static("", id="response-body")
        yield Footer()

    @property
    def table(self) -> NavTable:
        return self.query_one("#responses-table", NavTable)

    def on_mount(self) -> None:
        self.fill()
        self.table.focus()

    def label(self, rm_key: str) -> str:
        return self.app.rm_label(self.run_id, rm_key)

    def visible_rows(self) -> list[ResponseRow]:
        needle = self.query_text.lower()
        rows = [r for r in self.detail.responses if not needle or needle in r.text.lower()]
        order = {
            "RM rank": lambda r: (r.ranks[self.rm_key], r.sample_index),
            "oracle rank": lambda r: (r.oracle_rank, r.sample_index),
            "sample": lambda r: r.sample_index,
        }[self.sort]
        return sorted(rows, key=order)

    def fill(self) -> None:
        table = self.table
        table.clear(columns=True)
        top = self.detail.top_set(self.rm_key, self.eta)
        columns = ["rank", "top", "RM score", "oracle", "o.rank", "words"]
        other_top: set[str] = set()
        if self.compare_key:
            other_top = self.detail.top_set(self.compare_key, self.eta)
            columns += [f"{self.label(self.compare_key)} rank", "top"]
        shown = self.visible_rows()
        rows: list[list[object]] = []
        for row in shown:
            cells = [
                str(row.ranks[self.rm_key]),
                STAR if row.id in top else "",
                f"{row.scores[self.rm_key]:.3f}",
                f"{row.oracle:.2f}",
                str(row.oracle_rank),
                str(row.words),
            ]
            if self.compare_key:
                cells += [str(row.ranks[self.compare_key]), STAR if row.id in other_top else ""]
            rows.append(
                [Text(c, justify="right") if c and c[-1].isdigit() else Text(c) for c in cells]
            )
        preview = table.text_width(columns, rows)  # the response takes the rest of the width
        table.add_columns(*(literal(c) for c in columns), "response")
        for row, row_cells in zip(shown, rows, strict=True):
            table.add_row(*row_cells, shorten(row.text, preview), key=row.id)
        self.show_info(top, other_top)
        self.show_response()

    def show_info(self, top: set[str], other_top: set[str]) -> None:
        responses = self.detail.responses
        oracle_of = {r.id: r.oracle for r in responses}
        best = max(oracle_of.values())

        def mean_top(ids: set[str]) -> float:
            return sum(oracle_of[i] for i in ids) / len(ids)

        topic = self.detail.meta.get("topic")
        line = assemble(
            f"sorted by {self.sort} · {(str(topic) + ' · ') if topic else ''}",
            (self.label(self.rm_key), "bold"),
            f": {STAR} = its top-η set (η = {eta_label(self.eta)}: {len(top)} of "
            f"{len(responses)}), mean oracle {mean_top(top):.2f} vs "
            f"{sum(oracle_of.values()) / len(responses):.2f} overall, best {best:.2f}",
        )
        if self.compare_key:
            line = assemble(
                line,
                "\ncompared with ",
                (self.label(self.compare_key), "bold"),
                f": its top set's mean oracle {mean_top(other_top):.2f}, "
                f"{len(top & other_top)} responses in both",
            )
        self.query_one("#prompt-info", Static).update(line)

    def show_response(self) -> None:
        body = self.query_one("#response-body", Static)
        if not self.table.row_count:
            body.update("no response matches the search")
            return
        row_key = self.table.coordinate_to_cell_key(self.table.cursor_coordinate).row_key.value
        row = next(r for r in self.detail.responses if r.id == row_key)
        scores = " · ".join(
            f"{self.label(k)} {row.scores[k]:.3f} (#{row.ranks[k]})"
            for k in self.rm_keys
            if k in row.scores
        )
        body.update(
            assemble(
                (f"response {row.sample_index}", "bold"),
                f" · oracle {row.oracle:.2f} (#{row.oracle_rank}) · {row.words} "
                f"words\n{scores}\n\n{row.text}",
            )
        )

    def on_data_table_row_highlighted(self, event: NavTable.RowHighlighted) -> None:
        self.show_response()

    def on_data_table_row_selected(self, event: NavTable.RowSelected) -> None:
        self.query_one("#response-text").focus()  # enter: read the full text with the arrows

    # -- actions ----------------------------------------------------------------------
    def action_compare(self) -> None:
        others = [None, *(k for k in self.rm_keys if k != self.rm_key)]
        self.compare_key = following(others, self.compare_key)
        self.fill()

    def action_sort(self) -> None:
        self.sort = following(SORTS, self.sort)
        self.fill()

    def open_match(self) -> None:
        """enter in the search opens the highlighted match: its full text."""
        self.query_one("#response-text").focus()

    def on_resize(self) -> None:
        self.fill()

    def action_switch_focus(self) -> None:
        text = self.query_one("#response-text")
        (self.table if text.has_focus else text).focus()

    def action_back(self) -> None:
        if self.query_one("#response-text").has_focus:  # escape leaves the text first
            self.table.focus()
        else:  # then closes the search, then leaves
            super().action_back()
