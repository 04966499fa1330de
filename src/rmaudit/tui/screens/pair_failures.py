"""The preference pairs an RM gets wrong, worst margin first, filterable by subset and text;
in a shift sweep, ``v`` shows the pairs whose verdict flips as the perturbation grows.

The margin is the RM's score of the chosen response minus its score of the rejected one
(negative: the RM prefers the rejected response).  Loading reads every pair and both of its
scores, so it runs in a worker thread while the screen stays responsive.
"""

from __future__ import annotations

import math

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from rmaudit.display.literal import assemble
from rmaudit.results.pair_failures import ModelOnPair, ShiftFlip, shift_sweep

from ..widgets.search import SearchBox
from ..widgets.table import NavTable, shorten
from ._base import AuditScreen, following
from ._search import TableSearch
from .pair import PairScreen, credit_text

#: what the table shows: the pairs the RM gets wrong, every pair, the verdicts that flip
MODES = ("wrong", "all", "flips")
SUBSET_WIDTH, NARROW_SUBSET_WIDTH = 22, 12
#: the least the prompt gets before the table makes room for it (at 80 columns, RM-Bench's
#: styles and long subset names left it none)
PROMPT_MIN = 20
#: the columns dropped first for that room: the margin is their difference
SCORE_COLUMNS = ("chosen", "rejected")


def _number(value: float) -> Text:
    return Text(f"{value:+.3f}", justify="right")


def _credit(credit: float | None) -> Text:
    return Text(credit_text(math.nan if credit is None else credit), justify="right")


def _p_chosen(logit: float) -> Text:
    """A judge's P(chosen preferred), both orders averaged, from the logit it is stored as."""
    return Text(f"{1 / (1 + math.exp(-logit)):.3f}", justify="right")


#: what a judge's columns mean (its pairs have a credit, not a margin of two scores)
JUDGE_EXPLAINED = "\ncredit: both orders averaged (1 chosen, ½ tie, 0 rejected); P: its P(chosen)"


class PairFailuresScreen(TableSearch, AuditScreen):
    BINDINGS = [
        Binding("slash", "search", "Search", key_display="/"),
        Binding("t", "subset", "Subset"),
        Binding("a", "all_pairs", "Wrong / all"),
        Binding("v", "flips", "Flips under shift"),
        Binding("r", "next_rm", "Next RM"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, run_id: str, rm_key: str) -> None:
        super().__init__()
        self.run_id, self.rm_key = run_id, rm_key
        self.has_shift = shift_sweep(self.app.summary(run_id)) is not None
        self.mode = MODES[0]
        self.subset: str | None = None
        self.query_text = ""
        self.on_pairs: list[ModelOnPair] | None = None
        self.flips: list[ShiftFlip] | None = None
        #: the rows shown: the pairs, or in flips mode the (pair, shift) flips
        self.shown: list[ModelOnPair] | list[ShiftFlip] = []
        self.constant: list[str] = []  # "subset X": what every shown row has in common

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="pairs-title", classes="title")
        yield SearchBox(
            "search prompts and responses (enter: open the first, escape: clear)", id="pairs-search"
        )
        yield NavTable(id="pairs-table")
        yield Footer()

    @property
    def table(self) -> NavTable:
        return self.query_one("#pairs-table", NavTable)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        return self.has_shift if action == "flips" else True

    def on_mount(self) -> None:
        self.table.focus()
        self.load()

    # -- loading ------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        return self.on_pairs is not None and (self.mode != "flips" or self.flips is not None)

    def load(self) -> None:
        self.table.loading = True
        self.update_title()
        self._load(self.rm_key, self.mode == "flips")

    @work(thread=True, exclusive=True)
    def _load(self, rm_key: str, flips: bool) -> None:
        on_pairs = self.app.load_model_on_pairs(self.run_id, rm_key)
        shifted = self.app.load_shift_flips(self.run_id, rm_key) if flips else None
        self.app.call_from_thread(self._loaded, rm_key, on_pairs, shifted)

    def _loaded(
        self, rm_key: str, on_pairs: list[ModelOnPair], flips: list[ShiftFlip] | None
    ) -> None:
        if rm_key != self.rm_key:  # the user moved on to another RM meanwhile
            return
        self.on_pairs = on_pairs
        if flips is not None:
            self.flips = flips
        self.show_loaded()

    # -- the table ----------------------------------------------------------------------
    def _matches(self, pair: ModelOnPair) -> bool:
        needle = self.query_text.lower()
        return (self.subset is None or pair.subset == self.subset) and (
            not needle
            or any(needle in text.lower() for text in (pair.prompt, pair.chosen, pair.rejected))
        )

    @property
    def judged(self) -> bool:
        """Whether the model is a pairwise judge (its pairs have a credit, not two scores)."""
        return any(p.credit is not None for p in self.on_pairs or [])

    def visible_flips(self) -> list[ShiftFlip]:
        return [f for f in self.flips or [] if self._matches(f.pair)]

    def visible_pairs(self) -> list[ModelOnPair]:
        rows = [
            p
            for p in self.on_pairs or []
            if self._matches(p) and (self.mode == "all" or not p.correct)
        ]
        return sorted(rows, key=lambda p: p.worst_first)  # worst margin first

    def fill(self) -> None:
        if not self.loaded:
            return
        table = self.table
        table.clear(columns=True)
        flips = self.visible_flips() if self.mode == "flips" else []
        pairs = [f.pair for f in flips] if self.mode == "flips" else self.visible_pairs()
        self.shown = flips if self.mode == "flips" else pairs
        columns: list[tuple[str, list]] = [("#", [str(i) for i in range(1, len(pairs) + 1)])]
        if self.mode == "flips":
            columns += [
                ("shifted", [f.target for f in flips]),
                ("flips at", [f"p={f.levels[f.first_flip or 0]:g}" for f in flips]),
                ("✓/✗ by p", [f.marks for f in flips]),
                ("margin p=0", [_number(f.margins[0]) for f in flips]),
            ]
        elif self.judged:
            columns += [
                ("credit", [_credit(p.credit) for p in pairs]),
                ("P", [_p_chosen(p.margin) for p in pairs]),
            ]
        else:
            columns += [
                ("margin", [_number(p.margin) for p in pairs]),
                ("chosen", [_number(p.chosen_score) for p in pairs]),
                ("rejected", [_number(p.rejected_score) for p in pairs]),
            ]
        columns += [
            ("subset", [shorten(p.subset, SUBSET_WIDTH) for p in pairs]),
            ("styles c/r", [Text(p.styles) for p in pairs]),
        ]  # RM-Bench: style bias?
        # a column that says the same on every row (one subset, one target) only takes room:
        # the title says it once instead
        kept = [
            (header, cells)
            for header, cells in columns
            if header in ("#", "margin", "credit", "margin p=0", "✓/✗ by p")
            or len(pairs) < 2
            or len({str(c) for c in cells}) > 1
        ]
        self.constant = [
            f"{header} {cells[0]}"
            for header, cells in columns
            if (header, cells) not in kept and str(cells[0])
        ]
        columns = self._narrowed(kept, pairs)
        headers = [header for header, _ in columns]
        rows = [list(cells) for cells in zip(*(cells for _, cells in columns), strict=True)]
        preview = table.text_width(headers, rows)  # the prompt takes the rest of the width
        table.add_columns(*(Text(h) for h in headers), "prompt")
        for index, (cells, pair) in enumerate(zip(rows, pairs, strict=True)):
            table.add_row(*cells, shorten(pair.prompt, preview), key=str(index))
        self.update_title()

    def _narrowed(
        self, columns: list[tuple[str, list]], pairs: list[ModelOnPair]
    ) -> list[tuple[str, list]]:
        """``columns`` with room for :data:`PROMPT_MIN` of the prompt: the RM's two scores
        dropped first, then the subset shortened as much as that needs."""

        def room(cols: list[tuple[str, list]]) -> int:
            headers = [header for header, _ in cols]
            rows = [list(cells) for cells in zip(*(cells for _, cells in cols), strict=True)]
            return self.table.text_width(headers, rows)

        if room(columns) < PROMPT_MIN:
            columns = [(h, cells) for h, cells in columns if h not in SCORE_COLUMNS]
        short = room(columns) - PROMPT_MIN
        if short < 0 and "subset" in dict(columns):
            widest = max(len(str(cell)) for cell in dict(columns)["subset"])
            width = max(NARROW_SUBSET_WIDTH, widest + short)  # as much as the prompt needs
            columns = [
                (h, [shorten(p.subset, width) for p in pairs] if h == "subset" else c)
                for h, c in columns
            ]
        return columns

    def on_resize(self) -> None:
        self.fill()

    def update_title(self) -> None:
        label = self.app.rm_label(self.run_id, self.rm_key)
        if not self.loaded:
            status = (
                "finding the pairs whose verdict flips…"
                if self.mode == "flips"
                else "loading the RM's scores of every pair…"
            )
            explain = ""
        elif self.mode == "flips":
            status = (
                f"{len(self.shown):,} of {len(self.flips or []):,} (pair, shift) flips · "
                "earliest flip first"
            )
            explain = "\n✓ right, ✗ wrong at each shift level p; margin = chosen − rejected score"
        else:
            wrong = sum(not p.correct for p in self.on_pairs or [])
            shown = f"{len(self.shown):,} {'wrong ' if self.mode == 'wrong' else ''}pairs shown"
            order = "wrong in both orders first" if self.judged else "worst margin first"
            status = f"{shown} · {wrong:,} of {len(self.on_pairs or []):,} wrong · {order}"
            explain = (
                JUDGE_EXPLAINED
                if self.judged
                else "\nmargin = RM score of chosen − of rejected (< 0: it prefers the rejected)"
            )
        filters = [] if self.subset is not None else list(self.constant)
        filters += [f"subset = {self.subset}"] if self.subset is not None else []
        filters += [f"search = {self.query_text!r}"] if self.query_text else []
        what = "Flips under shift" if self.mode == "flips" else "Pair failures"
        self.query_one("#pairs-title", Static).update(
            assemble(
                (f"{what} of ", "bold"),
                (label, "bold"),
                f" · {status}" + (" · " + ", ".join(filters) if filters else "") + explain,
            )
        )

    # -- actions ------------------------------------------------------------------------
    def action_subset(self) -> None:
        subsets = sorted({p.subset for p in self.on_pairs or []})
        self.subset = following([None, *subsets], self.subset)
        self.fill()

    def action_all_pairs(self) -> None:
        self.mode = "all" if self.mode == "wrong" else "wrong"
        self.fill()

    def action_flips(self) -> None:
        if not self.has_shift:
            return
        self.mode = "wrong" if self.mode == "flips" else "flips"
        if self.loaded:
            self.fill()
        else:
            self.load()

    def action_next_rm(self) -> None:
        self.rm_key = self.next_rm()
        self.on_pairs = self.flips = None
        self.load()

    def on_data_table_row_selected(self, event: NavTable.RowSelected) -> None:
        row = self.shown[int(str(event.row_key.value))]
        if isinstance(row, ShiftFlip):
            self.app.push_screen(PairScreen(self.run_id, self.rm_key, row.pair, row))
        else:
            self.app.push_screen(PairScreen(self.run_id, self.rm_key, row))
