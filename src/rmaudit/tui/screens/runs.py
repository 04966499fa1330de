"""Every audit stored in the DB; enter opens its leaderboard."""

from __future__ import annotations

import os

from textual.app import ComposeResult
from textual.widgets import Footer, Header, Static

from rmaudit.display.literal import literal
from rmaudit.results.run_index import list_runs

from ..widgets.table import NavTable, shorten
from ._base import AuditScreen
from .leaderboard import REFRESH_SECONDS, LeaderboardScreen

TITLE_WIDTH = 30  # the run and its title stay in view when the table scrolls sideways


def distinct_titles(titles: list[str]) -> list[str]:
    """``titles`` with the words they all begin with left out ("rmaudit audit --suite llmbar:
    …" and "… --suite llmbar-processed: …" → "…llmbar: …", "…llmbar-processed: …"), so
    that titles cut to :data:`TITLE_WIDTH` still tell the runs apart."""
    if len(titles) < 2:
        return titles
    shared = os.path.commonprefix(titles)
    cut = shared.rfind(" ") + 1  # whole words only
    if cut == 0:
        return titles
    return ["…" + title[cut:] for title in titles]


class RunsScreen(AuditScreen):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="runs-title", classes="title")
        yield NavTable(fixed_columns=2, id="runs-table")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(NavTable)
        table.add_columns("run", "title", "world", "status", "size", "RMs", "created", "recipe")
        self.refresher = self.set_interval(REFRESH_SECONDS, self.fill, pause=True)
        self.fill()
        table.focus()

    def fill(self) -> None:
        """List the runs; while one is running (or none is stored yet), again every
        :data:`REFRESH_SECONDS`."""
        runs = list_runs(self.app.store)
        self.query_one("#runs-title", Static).update(
            literal(
                f"{len(runs)} run{'s' * (len(runs) != 1)} in {self.app.sub_title}"
                + ("" if runs else " — run a recipe first: rmaudit run RECIPE")
            )
        )
        table = self.query_one(NavTable)
        current = table.cursor_row
        table.clear()
        titles = distinct_titles([run.title for run in runs])
        for run, title in zip(runs, titles, strict=True):
            table.add_row(
                run.id[:10],
                shorten(title, TITLE_WIDTH),
                "SIMULATED" if run.simulated else "real",
                literal(run.status),
                run.size,
                str(run.reward_models),
                run.created_at.replace("T", " ")[:16],
                shorten(run.recipe_path, 40),
                key=run.id,
            )
        table.move_cursor(row=current)
        if not runs or any(run.status == "running" for run in runs):  # a run may start
            self.refresher.resume()
        else:
            self.refresher.pause()

    def on_data_table_row_selected(self, event: NavTable.RowSelected) -> None:
        self.app.push_screen(LeaderboardScreen(str(event.row_key.value)))
