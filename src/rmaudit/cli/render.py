"""Rich rendering shared by commands: progress bars, plans and result tables."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.table import Table

from rmaudit.formatting import eta_label
from rmaudit.results import RunSummary
from rmaudit.simulated import SIMULATED_NOTICE

if TYPE_CHECKING:  # the runner is not needed to draw a table
    from rmaudit.run import StageCount

SPARK = "▁▂▃▄▅▆▇█"


class RichProgress:
    """One bar per stage, with counts and ETA; items already stored count as done."""

    def __init__(self, console: Console) -> None:
        self.bars = Progress(TextColumn("{task.description:<28}"), BarColumn(),
                             MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
                             TimeRemainingColumn(), console=console)
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> "RichProgress":
        self.bars.start()
        return self

    def __exit__(self, *exc) -> None:
        self.bars.stop()

    def start(self, stage: str, total: int, done: int) -> None:
        self.tasks[stage] = self.bars.add_task(stage, total=total, completed=done)

    def advance(self, stage: str, amount: int) -> None:
        self.bars.advance(self.tasks[stage], amount)

    def finish(self, stage: str) -> None:
        task = self.tasks[stage]
        self.bars.update(task, completed=self.bars.tasks[task].total)


def plan_table(counts: list[StageCount], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for header in ("stage", "items", "stored", "to do", "calls"):
        table.add_column(header, justify="left" if header == "stage" else "right")
    for c in counts:
        bound = "≤ " if c.at_most else ""  # counted before the work it depends on is done
        table.add_row(c.stage, f"{bound}{c.total:,}", f"{c.stored:,}", f"{bound}{c.pending:,}",
                      f"{bound}{c.pending * c.calls_per_item:,}")
    return table


def work_line(counts: list[StageCount]) -> str:
    """'new: 25,600 responses, ...' or that nothing new was needed."""
    done = [f"{c.pending:,} {c.stage}" for c in counts if c.pending]
    return "new work: " + ", ".join(done) if done else "new work: none (everything was already stored)"


def _fmt(value: float, digits: int = 4) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def sparkline(values: np.ndarray) -> str:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return ""
    low, high = finite.min(), finite.max()
    span = high - low or 1.0
    return "".join(SPARK[int(round((v - low) / span * (len(SPARK) - 1)))] for v in finite)


def summary_tables(summary: RunSummary) -> list[Table]:
    """The leaderboard (every scalar metric, value ± stderr) and the RETA curve by η."""
    tag = "  [bold yellow]SIMULATED[/]" if summary.simulated else ""
    board = Table(title=f"{summary.run['title']}{tag}", title_justify="left",
                  caption=_caption(summary), caption_justify="left")
    board.add_column("reward model", style="bold")
    for column in summary.columns:
        arrow = "↑" if column.higher_is_better else "↓"
        board.add_column(f"{column.label} {arrow}", justify="right")
    curve_keys = summary.curve_keys()
    reta_curve = next(((m, k) for m, k in curve_keys if k == "reta_curve"), None)
    if reta_curve:
        board.add_column("RETA curve η: ½→small", justify="left")
    for label, rm_key in summary.reward_models:
        row = [label]
        for column in summary.columns:
            cell = summary.cells.get((rm_key, column.metric, column.key))
            if cell is None:
                row.append("—")
            elif math.isfinite(cell.stderr):
                row.append(f"{_fmt(cell.value)}\n[dim]± {_fmt(cell.stderr, 4)}[/]")
            else:
                row.append(_fmt(cell.value))
        if reta_curve:
            curve = summary.curves.get((rm_key, *reta_curve))
            row.append(sparkline(curve.value) if curve else "")
        board.add_row(*row)
    tables = [board]
    if reta_curve:
        tables.append(_curve_table(summary, reta_curve))
    if summary.run_level:
        tables.append(_run_level_table(summary))
    shift = _shift_table(summary)
    if shift is not None:
        tables.append(shift)
    return tables


SHIFT_COLUMNS = (("accuracy", "acc"), ("ece", "ECE"), ("auroc", "AUROC"))


def _shift_table(summary: RunSummary) -> Table | None:
    """The shift sweep (seed 004 Fig. 1-2) at a few levels: accuracy, ECE and AUROC per RM and target."""
    curves = {(rm, key): c for (rm, _, key), c in summary.curves.items() if key.startswith("shift_")}
    if not curves:
        return None
    targets = list(dict.fromkeys(key.rsplit("_", 1)[1] for _, key in curves))
    first = next(iter(curves.values()))
    picks = np.unique(np.linspace(0, len(first.x) - 1, min(4, len(first.x))).round().astype(int))
    table = Table(title="under shift: accuracy / ECE / AUROC by shift level p", title_justify="left")
    table.add_column("reward model", style="bold")
    table.add_column("shifted")
    table.add_column("accuracy, p: 0→max")
    for i in picks:
        table.add_column(f"p={first.x[i]:g}", justify="right")
    for label, rm_key in summary.reward_models:
        for target in targets:
            found = [curves.get((rm_key, f"shift_{quantity}_{target}")) for quantity, _ in SHIFT_COLUMNS]
            if found[0] is None:
                continue
            table.add_row(label, target, sparkline(found[0].value),
                          *(" / ".join(_fmt(c.value[i], 2) if c is not None else "—" for c in found)
                            for i in picks))
    return table


def _run_level_table(summary: RunSummary) -> Table:
    table = Table(title="across reward models", title_justify="left")
    for header in ("metric", "result", "value", "± stderr", "95% CI"):
        table.add_column(header, justify="left" if header in ("metric", "result") else "right")
    for column, cell in summary.run_level:
        table.add_row(column.metric, column.label, _fmt(cell.value), _fmt(cell.stderr),
                      f"[{_fmt(cell.ci_low, 3)}, {_fmt(cell.ci_high, 3)}]")
    return table


def _curve_table(summary: RunSummary, ident: tuple[str, str]) -> Table:
    first = next(c for (rm, m, k), c in summary.curves.items() if (m, k) == ident)
    picks = np.unique(np.linspace(0, len(first.x) - 1, min(8, len(first.x))).round().astype(int))
    table = Table(title="RETA curve (value ± stderr across prompts)", title_justify="left")
    table.add_column("reward model", style="bold")
    for i in picks:
        table.add_column(f"η={eta_label(float(first.x[i]))}", justify="right")
    for label, rm_key in summary.reward_models:
        curve = summary.curves.get((rm_key, *ident))
        if curve is not None:
            table.add_row(label, *(f"{_fmt(curve.value[i], 3)}±{_fmt(curve.stderr[i], 3)}"
                                   for i in picks))
    return table


def _caption(summary: RunSummary) -> str:
    bench = summary.benchmark
    if summary.run["benchmark_id"]:
        line = (f"benchmark {bench['id'][:10]}: {bench['per_prompt']} responses per prompt, "
                f"{bench['origin']}")
        if summary.pairs:
            line += f"; {summary.pairs:,} preference pairs"
    else:
        line = f"{summary.pairs:,} preference pairs (set {bench['id'][:10]})"
    line += f"; run {summary.run['id'][:10]}"
    return line + (f"\n{SIMULATED_NOTICE}" if summary.simulated else "")


def console(stderr: bool = False) -> Console:
    """A console; when output goes to a file or pipe, tables are not squeezed to 80 columns."""
    probe = Console(stderr=stderr)
    width = None if probe.is_terminal else 200
    return Console(stderr=stderr, highlight=False, width=width)
