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
from rich.table import Table
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
    for layout in layouts:
        tables = layout()
        if all(width(out, table) <= out.width for table in tables):
            break
    return tables


def width(out: Console, table: Table) -> int:
    """The columns ``table`` takes when nothing in it wraps (but labels capped by a column's
    ``max_width``)."""
    return Measurement.get(out, out.options.update_width(10**6), table).maximum


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
