"""The step metrics of a run of process reward models (``scope = "steps"``): each PRM's
stored step scores of the solution set, handed to every step metric, and their results as
the store's rows — per-question values stored as per-prompt ones, keyed by the problem's
prompt id (docs/prm.md)."""

from __future__ import annotations

import numpy as np

from rmaudit.components import Metric, StepInputs
from rmaudit.store.metric_results import MetricResults

from .context import RunContext, slot_class
from .metrics import STAGE, Ledger
from .solutions import SolutionSet


def compute(ctx: RunContext, solution_set: SolutionSet) -> list[MetricResults]:
    """Every step metric of every PRM, reused where the store has results computed from the
    same inputs, code and options."""
    recipe = ctx.recipe
    specs = [m for m in recipe.metrics if slot_class(m, Metric).scope == "steps"]
    models = [(spec, ctx.component(spec)) for spec in recipe.process_reward_models]
    ctx.progress.start(STAGE, len(models) * len(specs), 0)
    ledger = Ledger(ctx, tuple(dict.fromkeys(solution_set.problem_ids)))
    for spec, model in models:
        found = ctx.db.solutions.step_scores(model.key, solution_set.ids)
        inputs = StepInputs(
            solution_set.solutions,
            tuple(np.array(found[sid], dtype=float) for sid in solution_set.ids),
            solution_set.problem_ids,
        )
        for metric_spec in specs:
            ledger.measure(model.key, metric_spec, inputs, None, f"{spec.label}'s steps")
    ctx.progress.finish(STAGE)
    return ledger.results
