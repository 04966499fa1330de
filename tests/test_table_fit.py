"""The width a table takes unwrapped (``rmaudit.cli.table_fit.width``), which picks the layout
every summary prints: measured a column at a time, and a column already measured for another
layout not again, it equals Rich's own measure of the whole table."""

from __future__ import annotations

import random

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from rmaudit.cli.table_fit import fitting, width

WORDS = ["0.7649", "± 0.0194", "[0.727,\n 0.802]", "GPT-4/Swap_CoT", "a b c", "", "—", "#1–3"]


def _table(rng: random.Random, columns: int, rows: int) -> Table:
    table = Table(show_edge=rng.random() < 0.8, padding=(0, rng.randint(0, 2)))
    for i in range(columns):
        cap = rng.choice([None, 6, 24])
        header = rng.choice([f"col {i}", Text(f"column\n{i} ↑")])
        table.add_column(header, max_width=cap, justify=rng.choice(["left", "right"]))
    for _ in range(rows):
        cells = [rng.choice(WORDS) * rng.randint(1, 3) for _ in range(columns)]
        table.add_row(*(Text(c) if rng.random() < 0.5 else c for c in cells))
    return table


def test_a_tables_width_is_riches_measure_of_it():
    rng = random.Random(11)
    out = Console(width=100, file=None, force_terminal=False)
    unbounded = out.options.update_width(10**6)
    measured: dict[tuple, int] = {}
    for _ in range(200):
        table = _table(rng, rng.randint(1, 6), rng.randint(0, 8))
        expected = Measurement.get(out, unbounded, table).maximum
        assert width(out, table) == expected
        assert width(out, table, measured) == expected  # columns met before, not measured again


def test_the_first_layout_that_fits_is_printed():
    out = Console(width=40, file=None, force_terminal=False)

    def wide() -> list[Table]:
        table = Table()
        table.add_column("x" * 50)
        return [table]

    def narrow() -> list[Table]:
        table = Table()
        table.add_column("model")
        table.add_row(Text("GPT-4/Vanilla"))
        return [table]

    chosen = fitting(out, [wide, narrow])
    assert [c.header for c in chosen[0].columns] == ["model"]
    last = fitting(out, [narrow, wide, wide])  # the first that fits, before wider ones
    assert [c.header for c in last[0].columns] == ["model"]
    none = fitting(out, [wide, wide])  # none fits: the last, the narrowest
    assert [c.header for c in none[0].columns] == ["x" * 50]
