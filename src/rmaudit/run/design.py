"""Stage "label design": which of a benchmark's responses the oracle labels under a label
budget, and each response's inclusion probability (docs/budget.md).

Every response draws a permanent random number u from a hash of the design's seed and its id,
so the draw is the same in every run and on every machine, and raising the budget labels a
superset (:mod:`rmaudit.metrics.budget.design`).  An rm-guided design first scores the
benchmark's responses with its guide RMs (the scores the run stores anyway); the scores stage
later finds them stored.  The draw's metric-time counterpart, reading the stored design back
into a metric's inputs, is :mod:`.design_inputs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rmaudit.components.keys import content_key
from rmaudit.metrics.budget import (
    guide_importance,
    rm_guided_inclusion,
    select,
)
from rmaudit.recipe import ComponentSpec
from rmaudit.recipe.budget import LabelBudget
from rmaudit.store.item_records import Inclusion
from rmaudit.store.records import LabelDesignRecord

from . import scores
from .context import Keys, RunContext

STAGE = "label design"
#: hex digits of the hash that make a response's permanent random number
_PRN_DIGITS = 13


@dataclass
class Drawn:
    """The responses to label, and every response's inclusion probability (None in a plan that
    cannot draw yet: the guides' scores are still to be made)."""

    labelled: Keys
    #: response id → its inclusion probability and whether it was drawn
    inclusion: dict[str, Inclusion] | None


def permanent_random_number(seed: int, response_id: str) -> float:
    """u in (0, 1), fixed by (seed, response id): the response's ticket in every draw."""
    ticket = int(content_key("label-design", seed, response_id)[:_PRN_DIGITS], 16)
    return (ticket + 0.5) / 16**_PRN_DIGITS


def _budget(ctx: RunContext) -> LabelBudget:
    budget = ctx.recipe.label_budget
    assert budget is not None  # the stage runs only under a label budget
    return budget


def guide_specs(ctx: RunContext) -> list[ComponentSpec]:
    guide = _budget(ctx).guide
    return [spec for spec in ctx.recipe.reward_models if spec.label in guide]


def record(ctx: RunContext) -> LabelDesignRecord:
    """The recipe's label budget as the benchmark stores it: its guides by their RM keys."""
    keys = tuple(ctx.component(spec).key for spec in guide_specs(ctx))
    return _budget(ctx).record(keys)


def draw(ctx: RunContext, response_ids: Keys, per_prompt: int, execute: bool) -> Drawn:
    """The labelled subset of ``response_ids`` (blocks of ``per_prompt`` per prompt, in
    benchmark order) and the inclusion probabilities."""
    budget = _budget(ctx)
    expected = budget.expected_labels(per_prompt)
    prompts = response_ids.total // per_prompt
    if budget.design == "rm-guided":
        for spec in guide_specs(ctx):
            model = ctx.component(spec)
            scores.stage(ctx, spec, model, response_ids, execute)
            ctx.prescored[model.key] = response_ids
    ids = response_ids.known
    guides = None if response_ids.unlisted else _guide_scores(ctx, ids)
    if guides is None:
        # a plan before the responses (or the guides' scores) exist: the expected count
        return Drawn(Keys(unlisted=round(prompts * expected), approximate=True), None)
    inclusion: dict[str, Inclusion] = {}
    labelled: list[str] = []
    for start in range(0, len(ids), per_prompt):
        block = ids[start : start + per_prompt]
        pi = _inclusion(ctx, block, expected, guides)
        u = np.array([permanent_random_number(budget.design_seed, rid) for rid in block])
        mask = select(budget.design, u, pi)
        inclusion.update(zip(block, map(Inclusion, pi.tolist(), mask.tolist()), strict=True))
        labelled += [rid for rid, chosen in zip(block, mask, strict=True) if chosen]
    return Drawn(Keys(labelled), inclusion)


def _guide_scores(ctx: RunContext, ids: list[str]) -> list[dict[str, float]] | None:
    """Each guide RM's stored scores (none for a uniform design); None while a guide has not
    scored every response (a plan)."""
    if _budget(ctx).design != "rm-guided":
        return []
    if ctx.store is None:
        return None
    found = [ctx.store.items.scores(ctx.component(spec).key) for spec in guide_specs(ctx)]
    return found if all(rid in stored for stored in found for rid in ids) else None


def _inclusion(
    ctx: RunContext, block: list[str], expected: float, guides: list[dict[str, float]]
) -> np.ndarray:
    budget, size = _budget(ctx), len(block)
    if budget.design == "uniform":
        return np.full(size, budget.uniform_labels(size) / size)
    scored = np.array([[stored[rid] for rid in block] for stored in guides])
    return rm_guided_inclusion(guide_importance(scored), min(expected, size))
