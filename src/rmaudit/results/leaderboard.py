"""The leaderboard every view shows — the CLI summary, the TUI, report.md and report.html, and
``rmaudit runs RUN --json`` — as one record: a row per model (judge or RM) with its headline
number, its ± and 95% interval, its significance letters and simultaneous rank interval from
the paired comparison of the headlines (:func:`~rmaudit.results.comparison.
headline_comparison`), and the run's other numbers of the whole data (a judge's position
bias, consistency, tie and parse-failure rates; an RM's ECE, ...); the headline per subset as
a table of its own.  What is left out — details a metric marks so (a judge's accuracy in
each order, reward-bench's one random order), per-subset values of the other numbers, and
the number a headline replaces (a judge's pair accuracy from its logits) — is shown on
request (``--details``).

A model's headline is its own where its metric declares one (a pairwise judge's accuracy,
both orders, a tie ½), else the run's first number (an RM's pair accuracy, a tie a loss;
:meth:`~rmaudit.results.summary.RunSummary.headline`); the board says which convention each
uses when they differ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rmaudit.components import MetricValue
from rmaudit.components.vocabulary import ResultKey, in_oracle_units
from rmaudit.display.formatting import format_number, format_value
from rmaudit.metrics.letters import letter_runs, runs_note
from rmaudit.metrics.paired import rank_range
from rmaudit.store import Store

from .comparison import MetricComparison, headline_comparison
from .comparison_text import comparison_json
from .summary import Column, RunSummary, oracle_scale


@dataclass(frozen=True)
class BoardRow:
    """One model on the board: its headline number and standing (letters "" and ranks 0 where
    not compared)."""

    label: str
    rm_key: str
    baseline: bool
    headline: Column | None
    cell: MetricValue | None
    letters: str = ""
    rank_low: int = 0
    rank_high: int = 0

    @property
    def ranks(self) -> str:
        """``1``, ``1–3``, or "" where not ranked."""
        return rank_range(self.rank_low, self.rank_high)


@dataclass(frozen=True)
class Leaderboard:
    """A run's leaderboard (module docstring): ``rows`` best first where compared (else in the
    recipe's order), ``columns`` the other numbers beside the headline, ``subsets`` the parts
    the headline is also stored for."""

    summary: RunSummary
    name: str
    rows: list[BoardRow]
    columns: list[Column]
    subsets: list[str]
    comparison: MetricComparison | None
    #: what each model's headline is where they differ ("judges: judge accuracy: …")
    conventions: tuple[str, ...] = ()
    higher_is_better: bool = True
    #: every number not on the board (shown with --details)
    details: list[Column] = field(default_factory=list)
    #: the oracle's scale ("1–10"), shown with a best-of-n number (None: no oracle)
    scale: str | None = None
    #: the run's first number, the headline of every model that declares none of its own
    first: Column | None = None

    def cell(self, row: BoardRow, column: Column) -> MetricValue | None:
        return self.summary.cells.get((row.rm_key, column.metric, column.key))

    def subset_cell(self, row: BoardRow, subset: str) -> MetricValue | None:
        """``row``'s headline on one subset (a judge's judge accuracy there, an RM's accuracy)."""
        if row.headline is None:
            return None
        key = str(ResultKey(row.headline.result_key.name, subset))
        return self.summary.cells.get((row.rm_key, row.headline.metric, key))

    @property
    def caption(self) -> str:
        """What the headline is, and what the letters and ranks mean."""
        conventions = f" ({'; '.join(self.conventions)})" if self.conventions else ""
        if self.comparison is None or self.comparison.comparison is None:
            why = f": {self.comparison.note}" if self.comparison is not None else ""
            return f"{self.name}{conventions}; not compared{why}"
        c = self.comparison
        level = f"{1 - c.comparison.alpha:.0%}" if c.comparison else "95%"
        over = f"{c.units:,} {c.unit_name}"
        return (
            f"{self.name}{conventions} ± standard error, its 95% interval; group: models "
            f"sharing a letter are not separable (paired over {over}, Holm-adjusted at "
            f"{level}{runs_note(r.letters for r in self.rows)}); rank: simultaneous "
            f"{level} interval"
        )


def leaderboard(store: Store, summary: RunSummary, *, compare: bool = True) -> Leaderboard:
    """The run's leaderboard (module docstring); ``compare=False`` leaves the comparison out
    (a running run, read again every second)."""
    first = summary.first_column
    heads = {rm_key: summary.headline(rm_key) for _, rm_key in summary.reward_models}
    comparison = headline_comparison(store, summary.run.id) if compare else None
    standings = (
        {s.model: s for s in comparison.comparison.standings}
        if comparison is not None and comparison.comparison is not None
        else {}
    )
    rows = []
    for label, rm_key in summary.reward_models:
        head = heads[rm_key]
        cell = summary.cells.get((rm_key, head.metric, head.key)) if head else None
        s = standings.get(label)
        rows.append(
            BoardRow(
                label,
                rm_key,
                rm_key in summary.baselines,
                head,
                cell,
                *((s.letters, s.rank_low, s.rank_high) if s else ()),
            )
        )
    if standings:
        order = list(standings)
        rows.sort(key=lambda r: order.index(r.label) if r.label in order else len(order))
    shown_heads = {(h.metric, h.key) for h in heads.values() if h is not None}
    declared = any(h is not None and h.headline for h in heads.values())
    columns = [
        c
        for c in summary.columns
        if c.result_key.part is None
        and not c.detail
        and not c.headline
        and (c.metric, c.key) != ((first.metric, first.key) if first else None)
    ]
    subsets = _subsets(summary, [h for h in heads.values() if h is not None])
    on_board = {(c.metric, c.key) for c in columns} | shown_heads
    on_board |= {
        (h.metric, str(ResultKey(h.result_key.name, s)))
        for h in heads.values()
        if h is not None
        for s in subsets
    }
    conventions: tuple[str, ...] = ()
    if declared and first is not None:
        judged = sorted({h.headline for h in heads.values() if h is not None and h.headline})
        plain = any(h is not None and not h.headline for h in heads.values())
        conventions = tuple(f"judges: {c}" for c in judged) + (
            (f"RMs: {first.header}",) if plain else ()
        )
    return Leaderboard(
        summary,
        first.header if first is not None else "",
        rows,
        columns,
        subsets,
        comparison,
        conventions,
        first.higher_is_better if first is not None else True,
        [c for c in summary.columns if (c.metric, c.key) not in on_board],
        scale.short if (scale := oracle_scale(store, summary.benchmark)) is not None else None,
        first,
    )


def _subsets(summary: RunSummary, heads: list[Column]) -> list[str]:
    """The parts (subsets) any model's headline is stored for, in stored order."""
    names = {(h.metric, h.result_key.name) for h in heads}
    return list(
        dict.fromkeys(
            part
            for c in summary.columns
            if (part := c.result_key.part) is not None and (c.metric, c.result_key.name) in names
        )
    )


@dataclass(frozen=True)
class PlainTable:
    """A table as plain text cells, for the reports (which escape them); each header's
    ``units`` (the oracle's scale of a best-of-n number, or ""), ours, follow it unescaped."""

    headers: list[str]
    rows: list[list[str]]
    units: list[str] = field(default_factory=list)


def board_table(board: Leaderboard) -> PlainTable:
    """The board as text: model, headline ± stderr, its interval, group, rank, the other
    numbers (a best-of-n number with the oracle's scale)."""
    compared = board.comparison is not None and board.comparison.comparison is not None

    def unit(column: Column | None) -> str:
        known = board.scale and column is not None and in_oracle_units(column.key)
        return f" [{board.scale}]" if known else ""

    headers = ["model", f"{board.name} {'↑' if board.higher_is_better else '↓'}", "95% CI"]
    units = ["", unit(board.first), ""]
    headers += ["group", "rank"] if compared else []
    units += ["", ""] if compared else []
    for c in board.columns:
        headers.append(f"{c.header} {c.arrow}")
        units.append(unit(c))
    rows = []
    for r in board.rows:
        cells = [r.label, value_text(r.cell), interval_text(r.cell)]
        cells += [letter_runs(r.letters), f"#{r.ranks}" if r.ranks else ""] if compared else []
        cells += [value_text(board.cell(r, c)) for c in board.columns]
        rows.append(cells)
    return PlainTable(headers, rows, units)


def subsets_table(board: Leaderboard) -> PlainTable:
    """The headline per subset as text (value ± stderr)."""
    return PlainTable(
        ["model", *board.subsets],
        [
            [r.label, *(value_text(board.subset_cell(r, s)) for s in board.subsets)]
            for r in board.rows
        ],
    )


def details_table(board: Leaderboard) -> PlainTable:
    """Every other number as text: a row per reward model (its label whole, so models whose
    labels shorten alike stay apart), a column per number."""
    cells = board.summary.cells
    return PlainTable(
        ["reward model", *(f"{c.header} {c.arrow}" for c in board.details)],
        [
            [label, *(value_text(cells.get((rm_key, c.metric, c.key))) for c in board.details)]
            for label, rm_key in board.summary.reward_models
        ],
    )


def signed_lines(board: Leaderboard) -> list[str]:
    """What the sign of each number without a better direction means."""
    return [
        f"{c.header}: signed, no better direction ({c.signed})" for c in board.columns if c.signed
    ]


def run_level_table(run_level: list[tuple[Column, MetricValue]]) -> PlainTable:
    """The numbers computed across the reward models, as text: metric, result, value, CI."""
    return PlainTable(
        ["metric", "result", "value ± stderr", "95% CI"],
        [[c.metric, c.header, value_text(cell), interval_text(cell)] for c, cell in run_level],
    )


def value_text(cell: MetricValue | None) -> str:
    """A cell's value ± stderr ("—" for none)."""
    return format_value(cell.value, cell.stderr) if cell is not None else "—"


def interval_text(cell: MetricValue | None) -> str:
    """A cell's 95% interval to three decimals ("—" for none, or an open end)."""
    if cell is None or not (math.isfinite(cell.ci_low) and math.isfinite(cell.ci_high)):
        return "—"
    return f"[{format_number(cell.ci_low, 3)}, {format_number(cell.ci_high, 3)}]"


def leaderboard_json(board: Leaderboard) -> dict[str, Any]:
    """The board as JSON-ready data (NaN as null)."""

    def cell(found: MetricValue | None) -> dict[str, Any] | None:
        if found is None:
            return None
        return {
            name: (value if math.isfinite(value) else None)
            for name, value in (
                ("value", found.value),
                ("stderr", found.stderr),
                ("ci_low", found.ci_low),
                ("ci_high", found.ci_high),
            )
        }

    return {
        "headline": board.name,
        "conventions": list(board.conventions),
        "caption": board.caption,
        "columns": [
            {
                "metric": c.metric,
                "key": c.key,
                "label": c.header,
                "higher_is_better": None if c.signed else c.higher_is_better,
                "signed": c.signed or None,
            }
            for c in board.columns
        ],
        "subsets": board.subsets,
        "rows": [
            {
                "model": r.label,
                "baseline": r.baseline,
                "headline": None
                if r.headline is None
                else {
                    "metric": r.headline.metric,
                    "key": r.headline.key,
                    "convention": r.headline.headline or None,
                    **(cell(r.cell) or {}),
                },
                "letters": r.letters or None,
                "rank_low": r.rank_low or None,
                "rank_high": r.rank_high or None,
                "numbers": {c.key: cell(board.cell(r, c)) for c in board.columns},
                "subsets": {s: cell(board.subset_cell(r, s)) for s in board.subsets},
            }
            for r in board.rows
        ],
        "comparison": None if board.comparison is None else comparison_json(board.comparison),
    }
