"""Rich rendering shared by commands: progress bars, plans and cost tables (the console:
console.py; the run's results: summary.py)."""

from __future__ import annotations

import re
from collections import Counter
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


#: stages of one kind ("verdicts: MODEL") past this many share one progress bar and one
#: entry of the work line; notes alike past this many models are said once (brief)
GROUPED_AFTER = 3


def _kind(stage: str) -> str | None:
    """ "verdicts" of "verdicts: GPT-4/CoT"; None for a stage of no model ("pairs")."""
    kind, sep, _ = stage.partition(": ")
    return kind if sep else None


class RichProgress:
    """One bar per stage, with counts and ETA; items already stored count as done. Past
    :data:`GROUPED_AFTER` stages of one kind, that kind's stages share one bar."""

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
        self.totals: dict[str, int] = {}
        self.left: dict[str, int] = {}  # each stage's items not done yet
        self.kinds: dict[str, list[str]] = {}  # each kind's stages so far

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
        self.totals[stage], self.left[stage] = total, total - done
        kind = _kind(stage)
        members = self.kinds.setdefault(kind, []) if kind else []
        members.append(stage)
        if kind is None or len(members) <= GROUPED_AFTER:
            self.tasks[stage] = self.bars.add_task(
                one_line(stage, LABEL_MAX), total=total, completed=done
            )
            return
        if len(members) == GROUPED_AFTER + 1:  # the kind's own bars give way to one
            for earlier in members[:-1]:
                self.bars.remove_task(self.tasks[earlier])
            group = self.bars.add_task(kind)
            for earlier in members[:-1]:
                self.tasks[earlier] = group
        self.tasks[stage] = group = self.tasks[members[0]]
        self.bars.update(
            group,
            description=f"{kind} ({len(members)} models)",
            total=sum(self.totals[m] for m in members),
            completed=sum(self.totals[m] - self.left[m] for m in members),
        )

    def advance(self, stage: str, amount: int) -> None:
        self.left[stage] -= amount
        self.bars.advance(self.tasks[stage], amount)

    def finish(self, stage: str) -> None:
        self.bars.advance(self.tasks[stage], self.left[stage])
        self.left[stage] = 0


def run_attached(runner: Runner, store: Store, err: Console, brief: bool = False) -> RunResult:
    """Run a planned runner on ``store`` (opened for writing), its progress on ``err``, then
    say what it made and its notes (``brief``: a note that many models share once,
    :func:`brief_notes`)."""
    runner.attach(store)
    with RichProgress(err) as progress:
        runner.ctx.progress = progress
        result = runner.run()
    err.print(literal(work_line(result.counts)))
    labels = [spec.label for spec in runner.recipe.reward_models]
    for note in brief_notes(result.notes, labels) if brief else result.notes:
        err.print(literal(note))
    return result


def brief_notes(notes: list[str], labels: list[str]) -> list[str]:
    """``notes`` with those that say the same of more than :data:`GROUPED_AFTER` models
    ("MODEL: 3 of 419 pairs have ...", its numbers aside) said once, for the first model,
    with how many more are alike."""
    by_label = sorted(labels, key=len, reverse=True)  # "GPT-4/Rating_Metrics" before its prefix

    def shape(note: str) -> str | None:
        label = next((x for x in by_label if note.startswith(f"{x}: ")), None)
        return None if label is None else re.sub(r"[\d,.]+", "#", note[len(label) + 2 :])

    shapes = [shape(note) for note in notes]
    alike = Counter(s for s in shapes if s is not None)
    kept, said = [], set()
    for note, found in zip(notes, shapes, strict=True):
        if found is None or alike[found] <= GROUPED_AFTER:
            kept.append(note)
        elif found not in said:
            said.add(found)
            more = alike[found] - 1
            kept.append(f"{note}; {more} more models alike (each one's line: --details)")
    return kept


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
    are ('step scores: PRM (3,400 solutions)'); past :data:`GROUPED_AFTER` stages of one
    kind, the kind once ('54,470 verdicts (65 models)')."""
    pending = [c for c in counts if c.pending]
    kinds = Counter(_kind(c.stage) for c in pending if c.unit is None)
    done, grouped = [], set()
    for c in pending:
        kind = _kind(c.stage)
        if c.unit is None and kind is not None and kinds[kind] > GROUPED_AFTER:
            if kind not in grouped:  # "54,470 verdicts (65 models)", where the first was
                grouped.add(kind)
                alike = [d for d in pending if d.unit is None and _kind(d.stage) == kind]
                stored, failed = sum(d.made for d in alike), sum(d.failed for d in alike)
                done.append(f"{stored:,} {kind} ({len(alike)} models)" + _failed(failed))
            continue
        name = one_line(c.stage, LABEL_MAX)
        entry = f"{c.made:,} {name}" if c.unit is None else f"{name} ({c.made:,} {c.unit})"
        done.append(entry + _failed(c.failed))
    return (
        "new work: " + ", ".join(done) if done else "new work: none (everything was already stored)"
    )


def _failed(count: int) -> str:
    return f" ({count:,} failed, not stored: a rerun retries them)" if count else ""


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
