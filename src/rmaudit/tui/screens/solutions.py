"""A process reward model's solutions, worst first (its first flagged step furthest from the
first erroneous one: :mod:`rmaudit.results.solutions`); enter opens one, each of its steps
with the PRM's score, the data's erroneous marks and the PRM's first flagged step.  Every
text from data is shown literally."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from rmaudit.display.literal import assemble, literal
from rmaudit.results.solutions import SolutionView, run_threshold, solution_badge, step_caption

from ..widgets.table import NavTable, shorten
from ._base import AuditScreen

#: the data's id names the error class or split too
HEADERS = ("#", "id", "first error", "first flagged", "off by", "question")


def _step(step: int) -> Text:
    return Text(str(step + 1) if step >= 0 else "none", justify="right")


class SolutionsScreen(AuditScreen):
    BINDINGS = [Binding("escape", "back", "Back")]

    def __init__(self, run_id: str, rm_key: str) -> None:
        super().__init__()
        self.run_id, self.rm_key = run_id, rm_key
        self.views: list[SolutionView] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="solutions-title", classes="title")
        yield NavTable(id="solutions-table")
        yield Footer()

    @property
    def table(self) -> NavTable:
        return self.query_one("#solutions-table", NavTable)

    def on_mount(self) -> None:
        label = self.app.rm_label(self.run_id, self.rm_key)
        threshold = run_threshold(self.app.store, self.run_id)
        self.query_one("#solutions-title", Static).update(
            assemble(
                (label, "bold"),
                f": solutions worst first — its first flagged step (the first scored below "
                f"{threshold:g}) furthest from the first erroneous one; enter opens one",
            )
        )
        self.table.loading = True
        self.table.focus()
        self._load()

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        views = self.app.load_solutions(self.run_id, self.rm_key)
        self.app.call_from_thread(self._loaded, views)

    def _loaded(self, views: list[SolutionView]) -> None:
        self.views = views
        table = self.table
        table.loading = False
        table.clear(columns=True)
        table.add_columns(*HEADERS)
        rows: list[list[object]] = [
            [
                Text(str(rank), justify="right"),
                literal(view.ref),
                _step(view.first_error),
                _step(view.first_flagged),
                Text(str(view.miss), justify="right"),
            ]
            for rank, view in enumerate(views, start=1)
        ]
        width = table.text_width(list(HEADERS[:-1]), rows)
        for index, (row, view) in enumerate(zip(rows, views, strict=True)):
            table.add_row(*row, shorten(view.question, width), key=str(index))
        table.focus()

    def on_data_table_row_selected(self, event: NavTable.RowSelected) -> None:
        if self.views:
            view = self.views[int(str(event.row_key.value))]
            self.app.push_screen(SolutionScreen(self.run_id, self.rm_key, view))

    def action_back(self) -> None:
        self.app.pop_screen()


class SolutionScreen(AuditScreen):
    """One solution: its question, then each step with its score and marks."""

    BINDINGS = [Binding("escape", "back", "Back")]

    DEFAULT_CSS = """
    SolutionScreen #solution-steps { height: 1fr; padding: 0 1; }
    SolutionScreen .step-caption { margin-top: 1; text-style: bold; }
    """

    def __init__(self, run_id: str, rm_key: str, view: SolutionView) -> None:
        super().__init__()
        self.run_id, self.rm_key, self.view = run_id, rm_key, view

    def compose(self) -> ComposeResult:
        view = self.view
        yield Header()
        yield Static(
            assemble(
                (self.app.rm_label(self.run_id, self.rm_key), "bold"),
                " · ",
                literal(view.subset),
                " ",
                literal(view.ref),
                f" · {solution_badge(view)}",
            ),
            classes="title",
        )
        with VerticalScroll(id="solution-steps"):
            yield Static(literal(view.question), classes="question")
            for index, step in enumerate(view.steps):
                marked = step.erroneous or index == view.first_flagged
                yield Static(
                    Text(step_caption(view, index), style="red" if marked else ""),
                    classes="step-caption",
                )
                yield Static(literal(step.text))
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#solution-steps").focus()

    def action_back(self) -> None:
        self.app.pop_screen()
