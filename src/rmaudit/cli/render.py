"""Rich rendering shared by commands: progress bars, plans and cost tables (the console:
console.py; the run's results: summary.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.live_render import LiveRender
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from rmaudit.display.formatting import LABEL_MAX, one_line
from rmaudit.display.literal import literal

if TYPE_CHECKING:  # the runner is not needed to draw a table
    from rmaudit.run import Runner, RunResult, StageCount
    from rmaudit.run.costs import CostLine
    from rmaudit.store import Store


class RichProgress:
    """One bar per stage, with counts and ETA; items already stored count as done."""

    def __init__(self, console: Console) -> None:
        # markup=False: a stage names an RM by its label, text from the recipe
        self.bars = Progress(
            TextColumn("{task.description:<28}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
        )
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> RichProgress:
        if self.bars.console.is_interactive:
            self.bars.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.bars.console.is_interactive:
            self.bars.stop()
        else:  # shown once, as a stopped display shows it: not drawn again for each new bar
            console = self.bars.console
            console.print(LiveRender(self.bars.get_renderable(), vertical_overflow="visible"))
            console.line()

    def start(self, stage: str, total: int, done: int) -> None:
        self.tasks[stage] = self.bars.add_task(
            one_line(stage, LABEL_MAX), total=total, completed=done
        )

    def advance(self, stage: str, amount: int) -> None:
        self.bars.advance(self.tasks[stage], amount)

    def finish(self, stage: str) -> None:
        task = self.tasks[stage]
        self.bars.update(task, completed=self.bars.tasks[task].total)


def run_attached(runner: Runner, store: Store, err: Console) -> RunResult:
    """Run a planned runner on ``store`` (opened for writing), its progress on ``err``, then
    say what it made and its notes."""
    runner.attach(store)
    with RichProgress(err) as progress:
        runner.ctx.progress = progress
        result = runner.run()
    err.print(literal(work_line(result.counts)))
    for note in result.notes:
        err.print(literal(note))
    return result


def plan_table(counts: list[StageCount], title: str) -> Table:
    table = Table(title=literal(title), title_justify="left")
    for header in ("stage", "items", "stored", "to do", "calls"):
        table.add_column(header, justify="left" if header == "stage" else "right")
    for c in counts:  # a stage names an RM by its label: text from the recipe
        # counted before the work it depends on is done: a bound, or an expectation
        bound = "≤ " if c.at_most else ("≈ " if c.approximate else "")
        table.add_row(
            literal(c.stage),
            f"{bound}{c.total:,}",
            f"{c.stored:,}",
            f"{bound}{c.pending:,}",
            f"{bound}{c.pending * c.calls_per_item:,}",
        )
    return table


def work_line(counts: list[StageCount]) -> str:
    """'new work: 25,600 responses, ...' (what a run stored, and what it could not), or that
    nothing new was needed; a stage whose items are not what its name counts says what they
    are ('step scores: PRM (3,400 solutions)')."""
    done = [
        (
            f"{c.made:,} {one_line(c.stage, LABEL_MAX)}"
            if c.unit is None
            else f"{one_line(c.stage, LABEL_MAX)} ({c.made:,} {c.unit})"
        )
        + (f" ({c.failed:,} failed, not stored: a rerun retries them)" if c.failed else "")
        for c in counts
        if c.pending
    ]
    return (
        "new work: " + ", ".join(done) if done else "new work: none (everything was already stored)"
    )


def cost_table(lines: list[CostLine]) -> Table:
    table = Table(
        title="estimated API cost of the work to do (≈ 4 characters per token)",
        title_justify="left",
    )
    counted = any(line.tokens is not None for line in lines)
    headers = ("stage", "component", "items", *(("tokens",) if counted else ()), "USD")
    for header in headers:
        table.add_column(header, justify="left" if header in ("stage", "component") else "right")
    for line in lines:
        usd = "no price in the recipe" if line.usd is None else f"{line.usd:,.2f}"
        tokens = () if not counted else ("" if line.tokens is None else f"{line.tokens:,.0f}",)
        table.add_row(literal(line.stage), literal(line.component), f"{line.items:,}", *tokens, usd)
    known = [line.usd for line in lines if line.usd is not None]
    if known:
        table.add_row("total", "", "", *(("",) if counted else ()), f"{sum(known):,.2f}")
    return table
