"""Stage "step scores: <PRM>": one process reward model's score of every step of every
solution the run audits, keyed by (solution, PRM, step); a solution two positions share is
scored once, and a solution's scores are written together or not at all.  A model-backed
PRM's scoring checks run before any PRM scores (:mod:`.scoring_checks`), and the step scores
of their sample are kept as the run's own."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.components import ProcessRewardModel, Solution
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec

from .batches import BatchCall, map_calls
from .context import RunContext, StageCount, Work
from .scoring_checks import Checked, Sampled, ScoresToCheck, keep, report
from .solutions import SolutionSet


def _pending(ctx: RunContext, model: ProcessRewardModel, solution_set: SolutionSet) -> list[str]:
    """The set's distinct solutions not scored yet, in the set's order."""
    ids = list(dict.fromkeys(solution_set.ids))
    stored = ctx.step_scored(model.key, ids)
    return [sid for sid in ids if sid not in stored]


def target(
    ctx: RunContext, spec: ComponentSpec, model: ProcessRewardModel, solution_set: SolutionSet
) -> ScoresToCheck:
    """The stage's solutions as its scoring checks see them (every one known: they come
    from files)."""
    by_id = dict(zip(solution_set.ids, solution_set.solutions, strict=True))

    def read(ids: Sequence[str]) -> list[Sampled]:
        return [Sampled(sid, by_id[sid].solution.size, by_id[sid].solution) for sid in ids]

    def accept(ids: Sequence[str], scores: list[list[float]]) -> list[list[float]]:
        return list(_checked(ctx, spec, by_id, ids, scores).values())

    ids = list(by_id)
    pending = _pending(ctx, model, solution_set)
    return ScoresToCheck(spec, model, ids, pending, ids, read, accept, unit="solutions")


def stage(
    ctx: RunContext,
    spec: ComponentSpec,
    model: ProcessRewardModel,
    solution_set: SolutionSet,
    execute: bool,
    checked: Checked | None = None,
) -> None:
    """``checked``: the model's scoring checks, made before any PRM scored (the step scores
    of their sample it keeps)."""
    name = f"step scores: {spec.label}"
    with ctx.timed(name):
        by_id = dict(zip(solution_set.ids, solution_set.solutions, strict=True))
        pending = _pending(ctx, model, solution_set)
        count = StageCount(name, len(by_id), len(by_id) - len(pending), unit="solutions")
        work = Work(count, pending)
        ctx.counts.append(work.count)
        ctx.check_ready(spec, work.count)
        if ctx.strict and pending:  # a step-scores file without their rows, say
            try:
                model.check_solutions([by_id[sid].solution for sid in pending])
            except BadInput as error:
                raise ctx.located(error, spec) from None
        if not execute:
            return
        ctx.add_components(model)

        def solutions(batch: Sequence[str]) -> list[Solution]:
            return [by_id[sid].solution for sid in batch]

        def write(batch: Sequence[str], scores: list[list[float]]) -> None:
            ctx.db.solutions.add_step_scores(model.key, _checked(ctx, spec, by_id, batch, scores))

        todo = keep(checked, work, write)
        map_calls(ctx, todo, BatchCall(spec, model, "score_steps", solutions), write)
        report(ctx, spec, model, checked)


def _checked(
    ctx: RunContext, spec: ComponentSpec, by_id: dict, batch: Sequence[str], scores: list
) -> dict[str, list[float]]:
    """Each solution's step scores by its id, as the store keeps them: one finite score per
    step, or BadInput naming the PRM and solution."""
    checked: dict[str, list[float]] = {}
    for sid, found in zip(batch, scores, strict=True):
        steps = len(by_id[sid].steps)
        values = np.asarray(found, dtype=float).ravel()
        bad = np.flatnonzero(~np.isfinite(values))
        problem, value = (
            (f"returned {values.size} step scores for a solution of {steps} steps", ...)
            if values.size != steps
            else (f"returned a non-finite score for step {bad[0] + 1}", float(values[bad[0]]))
            if bad.size
            else (None, ...)
        )
        if problem:
            raise BadInput(
                f"process reward model {spec.label!r} {problem} (solution {by_id[sid].ref})",
                file=ctx.recipe.path,
                field=spec.field,
                value=value,
            )
        checked[sid] = values.tolist()
    return checked
