"""The run's paired comparisons (rmaudit.results.comparison), one compared number at a time:
each model's significance letters and simultaneous rank interval, then every pair's
difference with its ±, 95% interval and Holm-adjusted p (docs/metrics.md)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from rmaudit.display.formatting import format_number, short_label
from rmaudit.display.literal import assemble, literal
from rmaudit.metrics.letters import letter_runs
from rmaudit.results.comparison import MetricComparison, compare_stored
from rmaudit.results.comparison_text import caption, p_text, signed

from ..widgets.table import NavTable, shorten
from ._base import AuditScreen

#: the least a pair's "A − B" gets; it takes what its difference, p and verdict leave of the
#: screen's width (so they fit at 80 columns; the interval, last, scrolls in from the right)
PAIR_WIDTH, BESIDE_PAIR = 36, 44


class Standings(NavTable):
    """The models' letters and ranks; down past the last row goes on to the pairs below, so
    the arrows alone scroll the screen."""

    def action_cursor_down(self) -> None:
        if self.cursor_row >= self.row_count - 1:
            self.screen.query_one("#comparison-pairs", NavTable).focus()
        else:
            super().action_cursor_down()


class Pairs(NavTable):
    """Every pair's difference; up past the first row goes back to the standings."""

    def action_cursor_up(self) -> None:
        if self.cursor_row <= 0:
            self.screen.query_one("#comparison-standings", NavTable).focus()
        else:
            super().action_cursor_up()


class ComparisonScreen(AuditScreen):
    """``m`` shows the next compared number (RETA, best-of-n, pairwise accuracy, ...)."""

    BINDINGS = [Binding("m", "next_metric", "Next metric")]
    DEFAULT_CSS = """
    #comparison-standings { height: auto; max-height: 12; }
    """

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.results: list[MetricComparison] = []
        self.index = 0

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="comparison-title", classes="title")
        yield Static("", id="comparison-caption", classes="note")
        yield Standings(id="comparison-standings")
        yield Pairs(id="comparison-pairs")
        yield Static("", id="comparison-note", classes="note")
        yield Footer()

    def on_mount(self) -> None:
        if len(self.app.summary(self.run_id).reward_models) >= 2:
            self.results = compare_stored(self.app.store, [self.run_id])
        self.show()
        self.query_one("#comparison-standings", NavTable).focus()

    def show(self) -> None:
        title = self.query_one("#comparison-title", Static)
        standings = self.query_one("#comparison-standings", NavTable)
        pairs = self.query_one("#comparison-pairs", NavTable)
        standings.clear(columns=True)
        pairs.clear(columns=True)
        run = self.app.summary(self.run_id).run
        if not self.results:
            title.update(assemble((run.title, "bold"), "\nnothing to compare: fewer than two RMs"))
            return
        result = self.results[self.index]
        title.update(
            assemble(
                (run.title, "bold"),
                f"\npaired comparisons, {self.index + 1} of {len(self.results)} (m: the next)",
            )
        )
        self.query_one("#comparison-caption", Static).update(literal(caption(result)))
        self.query_one("#comparison-note", Static).update(
            literal(f"note: {result.note}") if result.note else ""
        )
        comparison = result.comparison
        if comparison is None:
            return
        standings.add_columns("group", "reward model", "value", "rank (95%)")
        for standing in comparison.standings:
            standings.add_row(
                Text(letter_runs(standing.letters)),
                literal(short_label(standing.model), "bold"),
                format_number(standing.value),
                Text(f"#{standing.ranks}"),
            )
        pairs.add_columns("pair", "diff. ± stderr", "p (Holm)", "separable", "95% interval")
        width = max(PAIR_WIDTH, self.size.width - BESIDE_PAIR)
        for pair in comparison.head_to_heads:
            difference = pair.difference
            pairs.add_row(
                shorten(f"{short_label(pair.first)} − {short_label(pair.second)}", width),
                Text(f"{signed(difference.value)} ± {format_number(difference.stderr)}"),
                Text(p_text(pair.adjusted_p)),
                Text("yes" if pair.separable else "no"),
                Text(f"[{signed(difference.ci_low)}, {signed(difference.ci_high)}]"),
            )

    def action_next_metric(self) -> None:
        if self.results:
            self.index = (self.index + 1) % len(self.results)
            self.show()
