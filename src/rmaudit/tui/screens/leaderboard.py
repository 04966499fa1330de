"""A run's leaderboard (:mod:`rmaudit.results.leaderboard`, the one the CLI and the reports
show): its models × their headline (value ± stderr) with its 95% interval, letters and rank
interval beside it, then the run's other numbers of the whole data, in the recipe's order
and sortable by any column (``s`` on the rank: best first); the headline per subset below."""

from __future__ import annotations

import math
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from rmaudit.components import MetricValue
from rmaudit.display.formatting import format_value, short_label, sparkline
from rmaudit.display.literal import assemble, literal
from rmaudit.metrics.letters import letter_runs
from rmaudit.metrics.paired import rank_range
from rmaudit.results.browse import ACROSS_RMS
from rmaudit.results.labelling import Labelling
from rmaudit.results.leaderboard import BoardRow, Leaderboard, interval_text, leaderboard
from rmaudit.results.summary import Column

from ..widgets.scoring_checks import show_scoring_checks
from ..widgets.table import NavTable
from ._base import AuditScreen
from .comparison import ComparisonScreen
from .curves import CurvesScreen
from .failures import FailuresScreen
from .pair_failures import PairFailuresScreen
from .solutions import SolutionsScreen

MARK = "✓"
FIXED_COLUMNS = ("", "reward model")  # the mark, the RM label: frozen when the table scrolls
#: the headline's interval, letters and rank interval, right after it (in view at 120 columns)
STANDING_COLUMNS = ("95% CI", "group", "rank")
#: how often a screen showing a running run reads it again (seconds)
REFRESH_SECONDS = 1.0


def labelled_tag(labelling: Labelling | None) -> str:
    """ " · 25% labelled (rm-guided design, cheap judge RM honest)" on a budgeted benchmark."""
    if labelling is None:
        return ""
    cheap = f", cheap judge {labelling.cheap_judge}" if labelling.cheap_judge else ""
    share = f"{labelling.fraction:.0%}" if labelling.fraction is not None else "none"
    return f" · {share} labelled ({labelling.design} design{cheap})"


class LeaderboardScreen(AuditScreen):
    """Enter on a row opens that RM's failures (its pair failures in a run of pairs only, its
    solutions worst first in a run of process reward models); s sorts by the column under
    the cursor."""

    BINDINGS = [
        Binding("s", "sort", "Sort"),
        Binding("space", "mark", "Mark"),
        Binding("c", "curves", "Curves"),
        Binding("f", "failures", "Failures"),
        Binding("p", "pair_failures", "Pairs"),
        Binding("d", "comparisons", "Compare"),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.sort_column: int | None = None  # index into the table's columns
        self.sort_best_first = True
        self.board: Leaderboard | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="leaderboard-title", classes="title")
        yield NavTable(cursor_type="cell", fixed_columns=len(FIXED_COLUMNS), id="leaderboard-table")
        yield NavTable(id="subsets-table")  # the headline per subset, when stored per subset
        yield NavTable(id="run-level-table")  # metrics across RMs, when the run has any
        yield Static("", id="leaderboard-note", classes="note")
        yield Footer()

    @property
    def table(self) -> NavTable:
        return self.query_one(NavTable)

    @property
    def has_prompts(self) -> bool:
        """Whether the run has a benchmark (prompt failures), not only preference pairs."""
        return bool(self.app.summary(self.run_id).run.benchmark_id)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "pair_failures":  # the key shows only where there are pairs
            return bool(self.app.summary(self.run_id).pairs)
        return True

    def on_mount(self) -> None:
        self.show()
        if self.app.summary(self.run_id).run.status == "running":
            self.refresher = self.set_interval(REFRESH_SECONDS, self.refresh_running)
        self.table.move_cursor(row=0, column=len(FIXED_COLUMNS))  # s sorts by the first metric
        self.table.focus()

    def refresh_running(self) -> None:
        """Read the running run again (its comparison once it has ended); stop once it has
        ended."""
        cursor = self.table.cursor_coordinate
        self.app.forget(self.run_id)
        self.board = None
        self.show()
        self.table.move_cursor(row=cursor.row, column=cursor.column)
        if self.app.summary(self.run_id).run.status != "running":
            self.refresher.stop()

    def show(self) -> None:
        summary = self.app.summary(self.run_id)
        bench, run = summary.benchmark, summary.run
        tag = Text("  SIMULATED ", style="b reverse yellow") if summary.simulated else ""
        if summary.solutions:
            size = f"{summary.solutions:,} solutions of {summary.questions:,} questions"
        elif self.has_prompts:
            size = f"{bench.per_prompt} responses per prompt"
        elif summary.pairs:
            size = f"{summary.pairs:,} preference pairs"
        else:  # a run in its prompts stage has neither yet
            size = "no benchmark or pairs stored yet"
        self.query_one("#leaderboard-title", Static).update(
            assemble(
                (run.title, "bold"),
                tag,
                f"\nrun {run.id[:10]} · {run.status} · {size} · {len(summary.reward_models)} RMs",
                labelled_tag(summary.labelling),
            )
        )
        opens = (
            "its solutions, worst first"
            if summary.solutions
            else "its failures" + (" (p: its pair failures)" if summary.pairs else "")
            if self.has_prompts
            else "its pair failures"
        )
        self.query_one("#leaderboard-note", Static).update(
            "↑ higher is better, ↓ lower · s sorts best-first by the cursor's column (again: "
            f"reverse) · space marks RMs for the curves · enter: {opens}"
            + (
                " · each sparkline has its own scale; s sorts it by RETA at the smallest η"
                if summary.reta_curve
                else ""
            )
        )
        #: (metric, key) of the RETA curve drawn as a sparkline after the numbers, if stored
        self.reta_curve = summary.reta_curve
        board = self.leaderboard()
        headers: list[str | Text] = [
            *FIXED_COLUMNS,
            *(
                literal(f"{label} {arrow}")
                for label, arrow in [
                    (board.name, "↑" if board.higher_is_better else "↓"),
                    *((c.header, c.arrow) for c in board.columns),
                ]
            ),
        ]
        self.table.clear(columns=True)
        standing = STANDING_COLUMNS if self.compared else ()
        self.table.add_columns(
            *headers[: len(FIXED_COLUMNS) + 1],
            *standing,
            *headers[len(FIXED_COLUMNS) + 1 :],
            *([f"RETA curve {summary.reta_start()}→small η"] if self.reta_curve else []),
        )
        self.fill()
        self.fill_subsets()
        self.fill_run_level()
        show_scoring_checks(self, self.app.store, self.run_id)

    def leaderboard(self) -> Leaderboard:
        """The run's board, its comparison made once the run has ended."""
        if self.board is None:
            summary = self.app.summary(self.run_id)
            self.board = leaderboard(
                self.app.store, summary, compare=summary.run.status != "running"
            )
        assert self.board is not None
        return self.board

    @property
    def compared(self) -> bool:
        board = self.leaderboard()
        return board.comparison is not None and board.comparison.comparison is not None

    def rows(self) -> list[tuple[str, list]]:
        """(rm_key, cells) in display order; cells hold raw values for sorting (the RETA
        curve's cell is the curve; the interval's, the headline's cell)."""
        board = self.leaderboard()
        marked = self.app.marked.get(self.run_id, [])
        rows = []
        for row in self.in_recipe_order():
            cells: list[Any] = [MARK if row.rm_key in marked else "", row.label, row.cell]
            if self.compared:
                cells += [row.cell, letter_runs(row.letters), (row.rank_low, row.rank_high)]
            cells += [board.cell(row, c) for c in board.columns]
            if self.reta_curve:
                cells.append(
                    self.app.summary(self.run_id).curves.get((row.rm_key, *self.reta_curve))
                )
            rows.append((row.rm_key, cells))
        if self.sort_column is not None:
            rows.sort(key=self._sort_key, reverse=self._reverse())
        return rows

    def in_recipe_order(self) -> list[BoardRow]:
        """The board's rows in the recipe's order (as every screen lists the RMs) until the
        table is sorted (s)."""
        order = [rm_key for _, rm_key in self.app.summary(self.run_id).reward_models]
        return sorted(self.leaderboard().rows, key=lambda r: order.index(r.rm_key))

    @property
    def column_kinds(self) -> list[tuple[str, Column | None]]:
        """Each column after the fixed ones: its kind ("number", "interval", "group", "rank",
        "curve") and, for a number, its column (None: the headline, a model's own)."""
        standing = [(kind, None) for kind in ("interval", "group", "rank")]
        return [
            ("number", None),
            *(standing if self.compared else []),
            *(("number", column) for column in self.leaderboard().columns),
            *([("curve", None)] if self.reta_curve else []),
        ]

    def _kind(self, index: int | None) -> str:
        """What column ``index`` holds: "label", or a kind of :attr:`column_kinds`."""
        if index is None or index < len(FIXED_COLUMNS):
            return "label"
        return self.column_kinds[index - len(FIXED_COLUMNS)][0]

    def _sort_key(self, row: tuple[str, list]) -> tuple[bool, float] | str | tuple[int, int]:
        assert self.sort_column is not None  # rows are sorted only by a chosen column
        cell = row[1][self.sort_column]
        kind = self._kind(self.sort_column)
        if kind == "curve":
            # the curve's value at the smallest η, not the glyphs
            value = (
                float(cell.from_largest_x()[-1]) if cell is not None and len(cell.x) else math.nan
            )
        elif kind in ("label", "group"):
            return str(cell)
        elif kind == "rank":
            return cell
        elif kind == "interval":
            value = cell.ci_low if isinstance(cell, MetricValue) else math.nan
        else:
            value = getattr(cell, "value", math.nan)
        # missing values sort last whichever way the column is ordered
        return (math.isfinite(value) == self._reverse(), value if math.isfinite(value) else 0.0)

    def _reverse(self) -> bool:
        kind = self._kind(self.sort_column)
        if kind == "number":
            assert self.sort_column is not None
            column = self.column_kinds[self.sort_column - len(FIXED_COLUMNS)][1]
            higher_first = (
                self.leaderboard().higher_is_better if column is None else (column.higher_is_better)
            )
        else:  # a curve and an interval: higher first; a group's letters, a rank: a first
            higher_first = kind in ("curve", "interval")
        return higher_first == self.sort_best_first

    def fill(self) -> None:
        table = self.table
        cursor = table.cursor_coordinate
        current = self.current_rm() if table.row_count else None
        table.clear()
        for rm_key, cells in self.rows():
            shown: list[Any] = [cells[0], literal(short_label(cells[1]), "bold")]
            for index, cell in enumerate(cells[2:], start=len(FIXED_COLUMNS)):
                kind = self._kind(index)
                if kind == "curve":
                    shown.append(sparkline(cell.from_largest_x()) if cell is not None else "")
                elif kind == "interval":
                    shown.append(interval_text(cell))
                elif kind == "group":
                    shown.append(Text(cell))
                elif kind == "rank":
                    low, high = cell
                    shown.append(Text(f"#{rank_range(low, high)}" if low else ""))
                else:
                    shown.append(format_value(cell.value, cell.stderr, "±") if cell else "—")
            table.add_row(*shown, key=rm_key)
        if current is not None:
            table.move_cursor(row=table.get_row_index(current), column=cursor.column)

    def fill_subsets(self) -> None:
        """The headline per subset (a judge's judge accuracy there, an RM's accuracy)."""
        table = self.query_one("#subsets-table", NavTable)
        board = self.leaderboard()
        table.display = bool(board.subsets)
        table.clear(columns=True)
        table.add_columns(f"{board.name} by subset", *(literal(s) for s in board.subsets))
        for row in self.in_recipe_order():
            table.add_row(
                literal(short_label(row.label), "bold"),
                *(
                    format_value(cell.value, cell.stderr, "±") if cell else "—"
                    for cell in (board.subset_cell(row, s) for s in board.subsets)
                ),
            )

    def fill_run_level(self) -> None:
        table = self.query_one("#run-level-table", NavTable)
        run_level = self.app.summary(self.run_id).run_level
        table.display = bool(run_level)
        table.clear(columns=True)
        table.add_columns(ACROSS_RMS, "result", "value ± stderr", "95% CI")
        for column, cell in run_level:
            table.add_row(
                literal(column.metric),
                literal(column.header),
                format_value(cell.value, cell.stderr, "±"),
                Text(interval_text(cell)),
            )

    def current_rm(self) -> str:
        return str(self.table.coordinate_to_cell_key(self.table.cursor_coordinate).row_key.value)

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

    def action_comparisons(self) -> None:
        self.app.push_screen(ComparisonScreen(self.run_id))

    def action_failures(self) -> None:
        if self.app.summary(self.run_id).solutions:  # a run of process reward models
            self.app.push_screen(SolutionsScreen(self.run_id, self.current_rm()))
        elif self.has_prompts:
            self.app.push_screen(FailuresScreen(self.run_id, self.current_rm()))
        else:
            self.action_pair_failures()

    def action_pair_failures(self) -> None:
        if self.app.summary(self.run_id).pairs:
            self.app.push_screen(PairFailuresScreen(self.run_id, self.current_rm()))
        else:
            self.notify("this run has no preference pairs", timeout=2)

    def on_data_table_cell_selected(self, event: NavTable.CellSelected) -> None:
        self.action_failures()
