"""A run's RMs × every stored scalar metric (value ± stderr), sortable by any column."""

from __future__ import annotations

import math

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from rmaudit.browse import ACROSS_RMS
from rmaudit.formatting import format_value, sparkline
from rmaudit.vocabulary import RETA_CURVE

from ..widgets.table import NavTable
from .curves import CurvesScreen
from .failures import FailuresScreen

MARK = "✓"
FIXED_COLUMNS = ("", "reward model")  # the mark, the RM label


class LeaderboardScreen(Screen):
    """Enter on a row opens that RM's failures; s sorts by the column under the cursor."""

    BINDINGS = [
        Binding("s", "sort", "Sort"),
        Binding("space", "mark", "Mark"),
        Binding("c", "curves", "Curves"),
        Binding("f", "failures", "Failures"),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.sort_column: int | None = None  # index into the table's columns
        self.sort_best_first = True

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="leaderboard-title", classes="title")
        yield NavTable(cursor_type="cell", id="leaderboard-table")
        yield NavTable(id="run-level-table")  # metrics across RMs, when the run has any
        yield Static("", id="leaderboard-note", classes="note")
        yield Footer()

    @property
    def table(self) -> NavTable:
        return self.query_one(NavTable)

    def on_mount(self) -> None:
        summary = self.app.summary(self.run_id)
        bench, run = summary.benchmark, summary.run
        tag = "  [b reverse yellow] SIMULATED [/]" if summary.simulated else ""
        self.query_one("#leaderboard-title", Static).update(
            f"[b]{run['title']}[/]{tag}\nrun {run['id'][:10]} · {run['status']} · "
            f"{bench['per_prompt']} responses per prompt · {len(summary.reward_models)} RMs")
        self.query_one("#leaderboard-note", Static).update(
            "↑ higher is better, ↓ lower · s sorts best-first by the cursor's column (again: "
            "reverse) · space marks RMs for the curves · enter: the RM's failures")
        #: (metric, key) of the RETA curve drawn as a sparkline in the last column, if stored
        self.reta_curve = next(((m, k) for m, k in summary.curve_keys() if k == RETA_CURVE), None)
        headers = [*FIXED_COLUMNS, *(f"{c.label} {'↑' if c.higher_is_better else '↓'}"
                                     for c in summary.columns)]
        self.table.add_columns(*headers, *(["RETA curve ½→small η"] if self.reta_curve else []))
        self.fill()
        self.fill_run_level()
        self.table.move_cursor(row=0, column=len(FIXED_COLUMNS))  # s sorts by the first metric
        self.table.focus()

    def rows(self) -> list[tuple[str, list]]:
        """(rm_key, cells) in display order; cells hold raw values for sorting."""
        summary = self.app.summary(self.run_id)
        marked = self.app.marked.get(self.run_id, [])
        rows = []
        for label, rm_key in summary.reward_models:
            cells = [MARK if rm_key in marked else "", label]
            cells += [summary.cells.get((rm_key, c.metric, c.key)) for c in summary.columns]
            if self.reta_curve:
                curve = summary.curves.get((rm_key, *self.reta_curve))
                cells.append(sparkline(curve.value) if curve is not None else "")
            rows.append((rm_key, cells))
        if self.sort_column is not None:
            rows.sort(key=self._sort_key, reverse=self._reverse())
        return rows

    def _metric_column(self, index: int):
        summary = self.app.summary(self.run_id)
        offset = index - len(FIXED_COLUMNS)
        return summary.columns[offset] if 0 <= offset < len(summary.columns) else None

    def _sort_key(self, row: tuple[str, list]):
        cell = row[1][self.sort_column]
        if self._metric_column(self.sort_column) is None:
            return str(cell)
        value = getattr(cell, "value", math.nan)
        # missing values sort last whichever way the column is ordered
        return (math.isfinite(value) == self._reverse(), value if math.isfinite(value) else 0.0)

    def _reverse(self) -> bool:
        column = self._metric_column(self.sort_column)
        higher_first = column.higher_is_better if column is not None else False
        return higher_first == self.sort_best_first

    def fill(self) -> None:
        table = self.table
        cursor = table.cursor_coordinate
        current = self.current_rm() if table.row_count else None
        table.clear()
        for rm_key, cells in self.rows():
            shown = [c if isinstance(c, str) else format_value(c.value, c.stderr, "±") if c else "—"
                     for c in cells]
            shown[1] = Text(shown[1], style="bold")
            table.add_row(*shown, key=rm_key)
        if current is not None:
            table.move_cursor(row=table.get_row_index(current), column=cursor.column)

    def fill_run_level(self) -> None:
        table = self.query_one("#run-level-table", NavTable)
        run_level = self.app.summary(self.run_id).run_level
        table.display = bool(run_level)
        table.add_columns(ACROSS_RMS, "result", "value ± stderr", "95% CI")
        for column, cell in run_level:
            ci = (f"[{cell.ci_low:.3f}, {cell.ci_high:.3f}]"
                  if math.isfinite(cell.ci_low) and math.isfinite(cell.ci_high) else "—")
            table.add_row(column.metric, column.label, format_value(cell.value, cell.stderr, "±"), ci)

    def current_rm(self) -> str:
        return self.table.coordinate_to_cell_key(self.table.cursor_coordinate).row_key.value

    def action_sort(self) -> None:
        column = self.table.cursor_column
        self.sort_best_first = not self.sort_best_first if column == self.sort_column else True
        self.sort_column = column
        self.fill()

    def action_mark(self) -> None:
        marked = self.app.marked.setdefault(self.run_id, [])
        rm_key = self.current_rm()
        if rm_key in marked:
            marked.remove(rm_key)
        else:
            marked.append(rm_key)
        self.fill()

    def selected_rms(self) -> tuple[str, ...]:
        order = [k for _, k in self.app.summary(self.run_id).reward_models]
        marked = self.app.marked.get(self.run_id) or order
        return tuple(k for k in order if k in marked)

    def action_curves(self) -> None:
        self.app.push_screen(CurvesScreen(self.run_id, self.selected_rms()))

    def action_failures(self) -> None:
        self.app.push_screen(FailuresScreen(self.run_id, self.current_rm()))

    def on_data_table_cell_selected(self, event: NavTable.CellSelected) -> None:
        self.action_failures()
