"""Stage "step scores: <PRM>": one process reward model's score of every step of every
solution the run audits, keyed by (solution, PRM, step); a solution two positions share is
scored once, and a solution's scores are written together or not at all."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.components import ProcessRewardModel, Solution
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec
from rmaudit.store import dumps

from .batches import BatchCall, map_calls
from .context import RunContext, StageCount, Work
from .solutions import SolutionSet


def stage(
    ctx: RunContext,
    spec: ComponentSpec,
    model: ProcessRewardModel,
    solution_set: SolutionSet,
    execute: bool,
) -> None:
    name = f"step scores: {spec.label}"
    with ctx.timed(name):
        by_id = dict(zip(solution_set.ids, solution_set.solutions, strict=True))
        ids = list(by_id)
        stored = ctx.stored("step scores", model.key, ids)
        pending = [sid for sid in ids if sid not in stored]
        work = Work(StageCount(name, len(ids), len(ids) - len(pending)), pending)
        ctx.counts.append(work.count)
        ctx.check_ready(spec, work.count)
        if ctx.strict and pending:  # a step-scores file without their rows, say
            try:
                model.check_solutions([by_id[sid].solution for sid in pending])
            except BadInput as error:
                raise ctx.located(error, spec) from None
        if not execute:
            return
        ctx.remember(model)

        def solutions(batch: Sequence[str]) -> list[Solution]:
            return [by_id[sid].solution for sid in batch]

        def write(batch: Sequence[str], scores: list[list[float]]) -> None:
            ctx.db.solutions.add_step_scores(
                model.key, zip(batch, _checked(ctx, spec, by_id, batch, scores), strict=True)
            )

        map_calls(ctx, work, BatchCall(spec, model, "score_steps", solutions), write)
        report = model.report()
        if report:
            ctx.db.runs.set_report(ctx.recipe.run_key, spec.label, dumps(report))
            ctx.notes.append(f"{spec.label}: " + ", ".join(f"{k}: {v}" for k, v in report.items()))


def _checked(
    ctx: RunContext, spec: ComponentSpec, by_id: dict, batch: Sequence[str], scores: list
) -> list[list[float]]:
    """One finite score per step of each solution, or BadInput naming the PRM and solution."""
    checked = []
    for sid, found in zip(batch, scores, strict=True):
        steps = len(by_id[sid].steps)
        values = np.asarray(found, dtype=float).ravel()
        problem = (
            f"returned {values.size} step scores for a solution of {steps} steps"
            if values.size != steps
            else "returned a non-finite step score"
            if not np.all(np.isfinite(values))
            else None
        )
        if problem:
            raise BadInput(
                f"process reward model {spec.label!r} {problem} (solution {by_id[sid].ref})",
                file=ctx.recipe.path,
                field=spec.field,
            )
        checked.append(values.tolist())
    return checked
