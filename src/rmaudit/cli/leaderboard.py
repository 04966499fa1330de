"""The leaderboard (:mod:`rmaudit.results.leaderboard`) as the console shows it: a row per
model — the headline with its ± and 95% interval, letters, rank interval and the run's other
numbers — and the headline per subset as its own table.  Each comes in layouts from the
widest to the narrowest (values on one line, then on two; labels folded; the other numbers
split off, in chunks), and the first that fits the console is printed (:mod:`.table_fit`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rmaudit.components import MetricValue
from rmaudit.components.vocabulary import in_oracle_units
from rmaudit.display.formatting import format_number, short_label
from rmaudit.display.literal import literal
from rmaudit.metrics.letters import letter_runs
from rmaudit.results.leaderboard import BoardRow, Leaderboard
from rmaudit.results.summary import Column

from .table_fit import LABEL_WIDTH, Layout, chunks, fitting, width

#: the most rows a brief leaderboard shows before its baselines (the rest: --details)
BRIEF_ROWS = 10


def print_leaderboard(
    out: Console, board: Leaderboard, curves: dict[str, str] | None = None, brief: bool = False
) -> list[Column]:
    """The board, its caption, and the headline per subset (where stored per subset);
    ``curves``: each model's RETA curve as a sparkline, a last column where it fits.
    ``brief`` (rmaudit audit without --details): the board of :func:`brief_board`, a row a
    line (its other numbers left out where they do not fit), and no subset table. Returns the
    other numbers shown."""
    shown = board.columns
    layouts: list[Layout]
    if brief:
        shown = _one_line_columns(out, board, curves or {})
        layouts = [
            partial(_one, board, shown, False, None, curves),
            partial(_one, board, shown, True, None),
            partial(_one, board, shown, True, LABEL_WIDTH),
        ]
    else:
        layouts = _board_layouts(board, curves or {})
    for table in fitting(out, layouts):
        out.print(table)
    out.print(literal(board.caption))
    signed = [c for c in shown if c.signed]
    for column in signed:
        out.print(literal(f"{column.header}: signed, no better direction ({column.signed})"))
    if board.subsets and not brief:
        out.print(Text(f"{board.name} by subset (± standard error)", style="bold"))
        for table in fitting(out, _subset_layouts(board)):
            out.print(table)
    return list(shown)


def brief_board(board: Leaderboard) -> Leaderboard:
    """The board's first :data:`BRIEF_ROWS` rows (the best, where compared) and every baseline
    below them, in the board's order; the whole board where that is all of it."""
    kept = [row for index, row in enumerate(board.rows) if index < BRIEF_ROWS or row.baseline]
    return replace(board, rows=kept)


def _one_line_columns(out: Console, board: Leaderboard, curves: dict[str, str]) -> list[Column]:
    """The other numbers a brief board shows: all of them where a row then fits one line of
    the console, else none."""
    whole = _one(board, board.columns, False, None, curves)
    return list(board.columns) if width(out, whole[0]) <= out.width else []


def value_text(cell: MetricValue | None, two_lines: bool) -> Text:
    """ "0.7649 ± 0.0194" (or on two lines); the value alone without a finite stderr."""
    if cell is None or not math.isfinite(cell.value):
        return Text("—")
    text = Text(format_number(cell.value))
    if math.isfinite(cell.stderr):
        text.append(
            ("\n" if two_lines else " ")
            + f"± {format_number(cell.stderr)}"
            + ("≈" if cell.approximate else ""),
            style="dim",
        )
    return text


def interval_text(cell: MetricValue | None, two_lines: bool) -> str:
    """``[0.727, 0.802]`` (or on two lines); "—" without one."""
    if cell is None or not (math.isfinite(cell.ci_low) and math.isfinite(cell.ci_high)):
        return "—"
    low, high = format_number(cell.ci_low, 3), format_number(cell.ci_high, 3)
    return f"[{low},\n {high}]" if two_lines else f"[{low}, {high}]"


def header(column: Column, two_lines: bool, scale: str | None = None) -> Text:
    """A number's label and its arrow ("(signed)": no better direction), on two lines in the
    narrow layouts; a best-of-n number's oracle ``scale`` under it."""
    text = literal(f"{column.header}{chr(10) if two_lines else ' '}{column.arrow}")
    if scale is not None and in_oracle_units(column.key):
        text.append(f"\n[{scale}]", style="dim")
    return text


def _board_layouts(board: Leaderboard, curves: dict[str, str]) -> list[Layout]:
    layouts: list[Layout] = [
        partial(_one, board, board.columns, two_lines, None, curves)
        for two_lines in (False, True)
        if curves
    ]
    layouts += [
        partial(_one, board, board.columns, False, None),
        partial(_one, board, board.columns, True, None),
        partial(_one, board, board.columns, True, LABEL_WIDTH),
    ]
    n = len(board.columns)
    # the other numbers split off: j beside the headline, the rest c to a table; fewest tables
    # first, then the most beside the headline
    splits = sorted(
        ((j, c) for j in range(n - 1, -1, -1) for c in range(n - j, 0, -1)),
        key=lambda jc: (-(-(n - jc[0]) // jc[1]), -jc[0]),
    )
    layouts += [partial(_split, board, j, c) for j, c in splits]
    return layouts


def _one(
    board: Leaderboard,
    columns: Sequence[Column],
    two_lines: bool,
    cap: int | None,
    curves: dict[str, str] | None = None,
) -> list[Table]:
    return [_board(board, columns, two_lines, cap, headline=True, curves=curves)]


def _split(board: Leaderboard, joined: int, size: int) -> list[Table]:
    """The first ``joined`` other numbers beside the headline, the rest ``size`` to a table."""
    rest = list(board.columns[joined:])
    return [
        _board(board, board.columns[:joined], True, LABEL_WIDTH, headline=True),
        *(_board(board, chunk, True, LABEL_WIDTH, headline=False) for chunk in chunks(rest, size)),
    ]


def _board(
    board: Leaderboard,
    columns: Sequence[Column],
    two_lines: bool,
    cap: int | None,
    *,
    headline: bool,
    curves: dict[str, str] | None = None,
) -> Table:
    table = Table()
    table.add_column("model", style="bold", overflow="fold", max_width=cap)
    cells: list[Callable[[BoardRow], Text | str]] = []
    if headline:
        table.add_column(_headline_header(board, two_lines), justify="right")
        table.add_column("95% CI", justify="right", no_wrap=not two_lines)
        cells += [
            lambda r: value_text(r.cell, two_lines),
            lambda r: interval_text(r.cell, two_lines),
        ]
        if board.comparison is not None and board.comparison.comparison is not None:
            table.add_column("group", no_wrap=True)
            table.add_column("rank", justify="right", no_wrap=True)
            cells += [
                lambda r: Text(letter_runs(r.letters)),
                lambda r: Text(f"#{r.ranks}" if r.ranks else ""),
            ]
    for column in columns:
        table.add_column(header(column, two_lines, board.scale), justify="right")
        cells.append(partial(_number, board, column, two_lines))
    if curves:
        start = board.summary.reta_start()
        table.add_column(f"RETA curve{chr(10) if two_lines else ' '}η: {start}→small", no_wrap=True)
        cells.append(lambda r: curves.get(r.rm_key, ""))
    for row in board.rows:
        table.add_row(literal(short_label(row.label)), *(cell(row) for cell in cells))
    return table


def _headline_header(board: Leaderboard, two_lines: bool) -> Text:
    arrow = "↑" if board.higher_is_better else "↓"
    text = literal(f"{board.name}{chr(10) if two_lines else ' '}{arrow}")
    if board.scale is not None and board.first is not None and in_oracle_units(board.first.key):
        text.append(f"\n[{board.scale}]", style="dim")
    return text


def _number(board: Leaderboard, column: Column, two_lines: bool, row: BoardRow) -> Text:
    return value_text(board.cell(row, column), two_lines)


def _subset_layouts(board: Leaderboard) -> list[Layout]:
    subsets = board.subsets
    layouts: list[Layout] = [
        partial(_subset_tables, board, [subsets], two_lines) for two_lines in (False, True)
    ]
    for size in range(len(subsets) - 1, 0, -1):
        layouts.append(partial(_subset_tables, board, chunks(subsets, size), True))
    return layouts


def _subset_tables(board: Leaderboard, parts: list[list[str]], two_lines: bool) -> list[Table]:
    tables = []
    for chunk in parts:
        table = Table()
        table.add_column("model", style="bold", overflow="fold", max_width=LABEL_WIDTH)
        for subset in chunk:
            table.add_column(literal(subset), justify="right", overflow="fold")
        for row in board.rows:
            table.add_row(
                literal(short_label(row.label)),
                *(value_text(board.subset_cell(row, s), two_lines) for s in chunk),
            )
        tables.append(table)
    return tables
