"""The curve tables ``rmaudit run`` prints (:mod:`.summary`): a curve's points per model on its
axis (RETA's η, a PRM's step threshold), and the shift sweep, one quantity per table; each in
layouts from the widest to the narrowest (:mod:`.table_fit`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from rich.table import Table
from rich.text import Text

from rmaudit.components.vocabulary import shift_curve_key, shift_curve_target
from rmaudit.display.formatting import eta_label, format_number, short_label, sparkline, spread
from rmaudit.display.literal import literal
from rmaudit.results.summary import Curve, RunSummary

from .table_fit import Layout, broken_label, chunks, one_table

#: a curve's x axis as its tables show it: its name and how a point is written
Axis = tuple[str, Callable[[float], str]]
ETA: Axis = ("η", eta_label)
THRESHOLD: Axis = ("t", "{:.2f}".format)


def models_header(summary: RunSummary) -> str:
    """What the run's models are, as a table's column names them."""
    return "process reward model" if summary.solutions else "reward model"


def curve_layouts(summary: RunSummary, ident: tuple[str, str], axis: Axis = ETA) -> list[Layout]:
    """A curve's points per RM, on its ``axis``."""
    stored = [
        (label, summary.curves.get((rm_key, *ident))) for label, rm_key in summary.reward_models
    ]
    curves = [(label, curve) for label, curve in stored if curve is not None]
    first = curves[0][1]

    def picks(count: int) -> list[int]:  # η from the largest, as the sparklines read
        return first.spread_from_largest_x(count) if axis == ETA else spread(len(first.x), count)

    layouts: list[Layout] = [
        partial(one_table, _curve_by_rm, curves, picks(count), axis, models_header(summary))
        for count in (8, 6, 5, 4, 3)
    ]
    for size in range(len(curves), 0, -1):
        layouts.append(partial(_curves_by_x, chunks(curves, size), picks(8), axis))
    return layouts


def _curves_by_x(
    chunks: list[list[tuple[str, Curve]]], picks: list[int], axis: Axis
) -> list[Table]:
    return [_curve_by_x(chunk, picks, axis) for chunk in chunks]


def _curve_cell(curve: Curve, i: int) -> str:
    return f"{format_number(curve.value[i], 3)}±{format_number(curve.stderr[i], 3)}"


def _curve_by_rm(
    curves: list[tuple[str, Curve]], picks: list[int], axis: Axis, models: str
) -> Table:
    name, point = axis
    table = Table()
    table.add_column(models, style="bold", overflow="fold")
    for i in picks:
        table.add_column(f"{name}={point(float(curves[0][1].x[i]))}", justify="right", no_wrap=True)
    for label, curve in curves:
        table.add_row(literal(short_label(label)), *(_curve_cell(curve, i) for i in picks))
    return table


def _curve_by_x(curves: list[tuple[str, Curve]], picks: list[int], axis: Axis) -> Table:
    name, point = axis
    table = Table()
    table.add_column(name, no_wrap=True)
    for label, _ in curves:
        table.add_column(broken_label(short_label(label), 11), justify="right", no_wrap=True)
    for i in picks:
        table.add_row(point(float(curves[0][1].x[i])), *(_curve_cell(c, i) for _, c in curves))
    return table


# -- the shift sweep (RMs Under Distribution Shift, Fig. 1-2), one quantity per table --------


def shift_layouts(summary: RunSummary, quantity: str) -> list[Layout]:
    curves: dict[tuple[str, str], Curve] = {}
    for (rm_key, _, key), curve in summary.curves.items():
        target = shift_curve_target(key)
        if target is not None and key == shift_curve_key(quantity, target):
            curves[(rm_key, target)] = curve
    if not curves:
        return []
    x = next(iter(curves.values())).x
    targets = list(dict.fromkeys(target for _, target in curves))
    rows = [
        (label, target, curves[(rm_key, target)])
        for label, rm_key in summary.reward_models
        for target in targets
        if (rm_key, target) in curves
    ]
    return [
        partial(one_table, _shift, rows, spread(len(x), count), spark)
        for spark in (True, False)
        for count in (6, 5, 4, 3, 2)
    ]


def _shift(rows: list[tuple[str, str, Curve]], picks: list[int], spark: bool) -> Table:
    table = Table()
    table.add_column("reward model", style="bold", overflow="fold")
    table.add_column("shifted", no_wrap=True)
    if spark:
        table.add_column("p: 0→max", no_wrap=True)
    first = rows[0][2]
    for i in picks:
        table.add_column(f"p={first.x[i]:g}", justify="right", no_wrap=True)
    previous = None
    for label, target, curve in rows:
        cells: list[Text | str] = [literal(short_label(label)) if label != previous else "", target]
        if spark:
            cells.append(sparkline(curve.value))
        table.add_row(*cells, *(format_number(curve.value[i], 2) for i in picks))
        previous = label
    return table
