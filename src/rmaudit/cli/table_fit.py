"""Tables that fit the console: each comes in layouts from the widest to the narrowest, and the
first whose tables fit the console's width unwrapped is printed (Rich only: ``rmaudit runs``
lists runs with nothing more)."""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from rmaudit.display.literal import literal

#: a layout: the tables it prints (several when the RMs are split), built on demand
Layout = Callable[[], list[Table]]
#: the widest a label column gets in the narrow layouts before its text wraps
LABEL_WIDTH = 24


def fitting(out: Console, layouts: list[Layout]) -> list[Table]:
    """The tables of the first layout whose every table fits ``out`` unwrapped (the last, the
    narrowest, when none does)."""
    tables: list[Table] = []
    measured: dict[tuple, int] = {}  # the layouts share most of their columns
    for layout in layouts:
        tables = layout()
        if all(width(out, table, measured) <= out.width for table in tables):
            break
    return tables


def width(out: Console, table: Table, measured: dict[tuple, int] | None = None) -> int:
    """The columns ``table`` takes when nothing in it wraps (but labels capped by a column's
    ``max_width``): Rich's measure of a table at an unbounded width — each column's widest
    cell, clamped, plus the borders — with each column measured once, and a column whose
    texts ``measured`` holds (from another layout's table) not again."""
    options = out.options.update_width(10**6)
    if table.width is not None or table.min_width is not None:
        return Measurement.get(out, options, table).maximum
    if not table.pad_edge or table.collapse_padding:  # a column's padding follows its place
        return Measurement.get(out, options, table).maximum
    measured = {} if measured is None else measured
    total = table._extra_width
    for column in table.columns:
        key = _content(table, column)
        found = measured.get(key) if key is not None else None
        if found is None:
            found = table._measure_column(out, options, column).maximum
            if key is not None:
                measured[key] = found
        total += found
    return total


def _content(table: Table, column: Column) -> tuple | None:
    """What a column's measure depends on: its texts (a ``Text`` by its plain text, a string
    as written, read as markup), its widths and the table's padding; None where a cell is
    another kind of renderable."""
    cells = [
        *([column.header] if table.show_header else []),
        *column.cells,
        *([column.footer] if table.show_footer else []),
    ]
    texts: list[tuple[str, str]] = []
    for cell in cells:
        if isinstance(cell, Text):
            texts.append(("text", cell.plain))
        elif isinstance(cell, str):
            texts.append(("markup", cell))
        else:
            return None
    return (tuple(texts), column.width, column.min_width, column.max_width, table.padding)


def chunks(items: list, size: int) -> list[list]:
    """``items`` in as few chunks of at most ``size`` as there can be, of even sizes (5 RMs
    by 4: 3 and 2, not 4 and 1)."""
    count = -(-len(items) // size)
    bounds = [round(i * len(items) / count) for i in range(count + 1)]
    return [items[a:b] for a, b in pairwise(bounds)]


def one_table(render: Callable[..., Table], *args: Any) -> list[Table]:
    """A layout of one table, rendered when the layout is tried."""
    return [render(*args)]


def broken_label(label: str, size: int = 9) -> Text:
    """A model's label as a narrow column header: lines of about ``size`` characters, broken
    after '-', '_' or a space (Rich itself breaks headers at spaces only)."""
    lines, line = [], ""
    for piece in re.findall(r"[^-_ ]*[-_ ]?", label):
        if line and len(line) + len(piece) > size:
            lines.append(line)
            line = ""
        line += piece
    return literal("\n".join(part.strip() for part in [*lines, line] if part.strip()))
