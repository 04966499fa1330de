"""Making a stage's pending items batch by batch: the component calls run on the recipe's
executor, each batch's outputs are written as one atomic unit as it comes back, and the
batches share transactions by rows and time (``Store.grouped_writes``), not one per batch.

A batch holds the items the component asks for per call
(:meth:`~rmaudit.components.Component.preferred_batch_items`), else the recipe's
``batch_size``.  The local executor computes the next batch while this thread writes the
last one, so storing is off the model's critical path; a batch is written only once its
call has returned, which keeps storage exactly-once and a killed run resumable."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any, TypeVar

from rmaudit.components import Component
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec

from .context import RunContext, StageCount, Work

T = TypeVar("T")


def batched(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass(frozen=True)
class BatchCall:
    """What a stage asks of a component for each batch of items: ``component.<method>(
    inputs(batch))``.  The recipe's executor runs it (in-process or on Ray workers, which
    rebuild the component from its class and options), so it names the method rather than
    holding a bound one."""

    spec: ComponentSpec
    component: Component
    method: str  # "generate", "label", "score" or "score_steps"
    inputs: Callable[[Sequence[Any]], list[Any]]


#: per batch method: what the component is, what it returns and what it is given
_OUTPUTS = {
    "generate": ("policy", "responses", "requests"),
    "label": ("oracle", "labels", "responses"),
    "score": ("reward model", "scores", "responses"),
    "score_steps": ("process reward model", "step score lists", "solutions"),
}


def map_calls(
    ctx: RunContext, work: Work[T], call: BatchCall, write: Callable[[Sequence[T], list[Any]], None]
) -> None:
    """Have the executor run ``call`` on the pending items in batches; ``write`` each batch
    with its outputs as it comes back (in completion order: every item is keyed by content)."""
    stage = work.count.stage
    ctx.progress.start(stage, work.count.total, work.count.stored)
    size = call.component.preferred_batch_items() or ctx.recipe.model.batch_size
    tagged = ((batch, call.inputs(batch)) for batch in batched(work.pending, size))
    with (
        ctx.db.grouped_writes(),
        closing(ctx.executor.map(call.component, call.method, tagged)) as results,
    ):
        while True:
            try:  # only the component's own errors are located at its recipe entry
                batch, outputs = next(results)
            except StopIteration:
                break
            except BadInput as error:
                raise ctx.located(error, call.spec) from None
            if len(outputs) != len(batch):  # one output per item, or nothing of it is stored
                kind, returned, given = _OUTPUTS[call.method]
                raise RuntimeError(
                    f"{kind} {call.spec.label!r} returned {len(outputs)} {returned} "
                    f"for {len(batch)} {given}"
                )
            with ctx.db.transaction():
                write(batch, outputs)
            ctx.progress.advance(stage, len(batch))
    ctx.progress.finish(stage)


def map_here(ctx: RunContext, work: Work[T], write: Callable[[Sequence[T]], None]) -> None:
    """Make and write the pending items batch by batch in this process: for the shift sweep,
    whose batches mix one perturber per level and share perturbed texts across batches."""
    stage = work.count.stage
    ctx.progress.start(stage, work.count.total, work.count.stored)
    with ctx.db.grouped_writes():
        for batch in batched(work.pending, ctx.recipe.model.batch_size):
            with ctx.db.transaction():
                write(batch)
            ctx.progress.advance(stage, len(batch))
    ctx.progress.finish(stage)


def write_whole(
    ctx: RunContext, stage: str, total: int, stored: bool, execute: bool, write: Callable[[], None]
) -> None:
    """Count a stage whose ``total`` items are stored all at once or not at all (a pair set,
    a solution set), and ``write`` them when executing and not ``stored`` yet."""
    ctx.counts.append(StageCount(stage, total, total if stored else 0))
    if execute:
        ctx.progress.start(stage, total, total if stored else 0)
        if not stored:
            write()
            ctx.progress.advance(stage, total)
        ctx.progress.finish(stage)
