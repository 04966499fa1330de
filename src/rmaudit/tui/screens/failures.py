"""One RM's prompts ranked by how badly its top picks do, with search and filters.

Per prompt: a per-prompt metric stored by the run (RETA(η) first) and the oracle gap —
the oracle's best score minus the oracle score of the RM's favourite.  The gap needs every
score of the RM, so the table loads in a worker thread while the screen stays responsive.
"""

from __future__ import annotations

import math

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from rmaudit.display.literal import assemble, literal
from rmaudit.results.browse import PromptFailure, per_prompt_columns

from ..widgets.search import SearchBox
from ..widgets.table import NavTable, shorten
from ._base import AuditScreen, following
from ._search import TableSearch
from .prompt import PromptScreen

SORTS = ("metric", "gap", "benchmark order")
TOPIC_WIDTH = 18


class FailuresScreen(TableSearch, AuditScreen):
    BINDINGS = [
        Binding("slash", "search", "Search", key_display="/"),
        Binding("s", "sort", "Sort"),
        Binding("m", "metric", "Metric"),
        Binding("t", "topic", "Topic"),
        Binding("r", "next_rm", "Next RM"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, run_id: str, rm_key: str) -> None:
        super().__init__()
        self.run_id, self.rm_key = run_id, rm_key
        summary = self.app.summary(run_id)
        self.metrics = per_prompt_columns(self.app.store, summary)
        self.budgeted = summary.benchmark.design is not None
        self.metric_index = 0
        self.sort = SORTS[0] if self.metrics else "gap"
        self.topic: str | None = None
        self.query_text = ""
        self.all_rows: list[PromptFailure] | None = None
        self.shown: list[PromptFailure] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="failures-title", classes="title")
        yield SearchBox("search prompts (enter: to the table, escape: clear)", id="failures-search")
        yield NavTable(id="failures-table")
        yield Footer()

    @property
    def table(self) -> NavTable:
        return self.query_one("#failures-table", NavTable)

    @property
    def metric(self):
        return self.metrics[self.metric_index] if self.metrics else None

    def on_mount(self) -> None:
        self.table.focus()
        self.load()

    def load(self) -> None:
        self.all_rows = None
        self.table.loading = True
        self.update_title()
        self._load(self.rm_key)

    @work(thread=True, exclusive=True)
    def _load(self, rm_key: str) -> None:
        rows = self.app.load_failures(self.run_id, rm_key)
        self.app.call_from_thread(self._loaded, rm_key, rows)

    def _loaded(self, rm_key: str, rows: list[PromptFailure]) -> None:
        if rm_key != self.rm_key:  # the user moved on to another RM meanwhile
            return
        self.all_rows = rows
        self.show_loaded()

    def _metric_value(self, row: PromptFailure) -> float:
        return row.metrics.get(self.metric.key, math.nan) if self.metric else math.nan

    def visible_rows(self) -> list[PromptFailure]:
        needle = self.query_text.lower()
        rows = [
            r
            for r in self.all_rows or []
            if (self.topic is None or r.topic == self.topic)
            and (not needle or needle in r.text.lower() or needle in r.topic.lower())
        ]
        if self.sort == "metric":
            worst_low = self.metric.higher_is_better
            rows.sort(
                key=lambda r: (
                    self._metric_value(r) if worst_low else -self._metric_value(r),
                    r.position,
                )
            )
        elif self.sort == "gap":
            rows.sort(key=PromptFailure.largest_gap_first)
        else:
            rows.sort(key=lambda r: r.position)
        return rows

    def fill(self) -> None:
        if self.all_rows is None:  # still loading: the table fills when it arrives
            self.update_title()
            return
        table = self.table
        table.clear(columns=True)
        metric = self.metric.header if self.metric else "—"
        headers = ["#", metric, "gap", "RM pick", "best", "topic"]
        self.shown = self.visible_rows()
        rows = []
        for rank, row in enumerate(self.shown, 1):
            value = self._metric_value(row)
            numbers = [
                "—" if math.isnan(value) else f"{value:.3f}",
                *(
                    "—" if math.isnan(x) else f"{x:.2f}"
                    for x in (row.gap, row.pick_oracle, row.best_oracle)
                ),
            ]
            rows.append(
                [
                    str(rank),
                    *(Text(n, justify="right") for n in numbers),
                    shorten(row.topic, TOPIC_WIDTH),
                ]
            )
        preview = table.text_width(headers, rows)  # the prompt takes the rest of the width
        table.add_columns(*(literal(h) for h in headers), "prompt")
        for row, cells in zip(self.shown, rows, strict=True):
            table.add_row(*cells, shorten(row.text, preview), key=row.prompt_id)
        self.update_title()

    def on_resize(self) -> None:
        self.fill()

    def update_title(self) -> None:
        label = self.app.rm_label(self.run_id, self.rm_key)
        if self.all_rows is None:
            status = "loading every score of this RM…"
        else:
            ranked = {
                "metric": f"{self.metric.header if self.metric else ''} (worst first)",
                "gap": "oracle gap (largest first)",
                "benchmark order": "benchmark order",
            }
            filters = [f"topic = {self.topic}"] if self.topic else []
            filters += [f"search = {self.query_text!r}"] if self.query_text else []
            status = (
                f"{len(self.shown)} of {len(self.all_rows)} prompts · by {ranked[self.sort]}"
                + (" · " + ", ".join(filters) if filters else "")
            )
        self.query_one("#failures-title", Static).update(
            assemble(
                ("Failures of ", "bold"),
                (label, "bold"),
                f" · {status}\n"
                "gap = oracle's best − oracle score of the RM's pick (0: it picked the best)"
                + (
                    "\nfrom the labels the design drew only (—: it drew none of the RM's"
                    " favourites)"
                    if self.budgeted
                    else ""
                ),
            )
        )

    # -- actions ----------------------------------------------------------------------
    def action_sort(self) -> None:
        choices = SORTS if self.metrics else SORTS[1:]
        self.sort = following(choices, self.sort)
        self.fill()

    def action_metric(self) -> None:
        if self.metrics:
            self.metric_index = (self.metric_index + 1) % len(self.metrics)
            self.fill()

    def action_topic(self) -> None:
        topics = sorted({r.topic for r in self.all_rows or [] if r.topic})
        self.topic = following([None, *topics], self.topic)
        self.fill()

    def action_next_rm(self) -> None:
        self.rm_key = self.next_rm()
        self.load()

    def on_data_table_row_selected(self, event: NavTable.RowSelected) -> None:
        self.app.push_screen(PromptScreen(self.run_id, self.rm_key, str(event.row_key.value)))
