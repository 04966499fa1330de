"""Stage "label design": which of a benchmark's responses the oracle labels under a label
budget, and each response's inclusion probability (docs/budget.md).

Every response draws a permanent random number u from a hash of the design's seed and its id,
so the draw is the same in every run and on every machine, and raising the budget labels a
superset (:mod:`rmaudit.metrics.budget.design`).  An rm-guided design first scores the
benchmark's responses with its guide RMs (the scores the run stores anyway); the scores stage
later finds them stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from rmaudit.components import LabelDesign
from rmaudit.components.keys import content_key
from rmaudit.metrics.budget import (
    guide_importance,
    labelled_weight_share,
    rm_guided_inclusion,
    select,
    uniform_sample_size,
)
from rmaudit.recipe import ComponentSpec

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
    #: response id → (inclusion probability, drawn)
    inclusion: dict[str, tuple[float, bool]] | None


def permanent_random_number(seed: int, response_id: str) -> float:
    """u in (0, 1), fixed by (seed, response id): the response's ticket in every draw."""
    ticket = int(content_key("label-design", seed, response_id)[:_PRN_DIGITS], 16)
    return (ticket + 0.5) / 16**_PRN_DIGITS


def guide_specs(ctx: RunContext) -> list[ComponentSpec]:
    budget = ctx.recipe.label_budget
    return [spec for spec in ctx.recipe.reward_models if spec.label in budget.guide]


def identity(ctx: RunContext) -> dict[str, Any]:
    """What the benchmark's key hashes of the design (guides by their RM keys)."""
    keys = tuple(ctx.component(spec).key for spec in guide_specs(ctx))
    return ctx.recipe.label_budget.identity(keys)


def description(ctx: RunContext) -> str:
    """The design as the benchmark stores it (JSON): what the summary and exports show."""
    budget = ctx.recipe.label_budget
    return json.dumps(
        {**identity(ctx), "guide_labels": list(budget.guide), "text": budget.describe()}
    )


def draw(ctx: RunContext, response_ids: Keys, per_prompt: int, execute: bool) -> Drawn:
    """The labelled subset of ``response_ids`` (blocks of ``per_prompt`` per prompt, in
    benchmark order) and the inclusion probabilities."""
    budget = ctx.recipe.label_budget
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
    inclusion: dict[str, tuple[float, bool]] = {}
    labelled: list[str] = []
    for start in range(0, len(ids), per_prompt):
        block = ids[start : start + per_prompt]
        pi = _inclusion(ctx, block, expected, guides)
        u = np.array([permanent_random_number(budget.seed, rid) for rid in block])
        mask = select(budget.design, u, pi)
        inclusion.update(zip(block, zip(pi.tolist(), mask.tolist(), strict=True), strict=True))
        labelled += [rid for rid, chosen in zip(block, mask, strict=True) if chosen]
    return Drawn(Keys(labelled), inclusion)


def _guide_scores(ctx: RunContext, ids: list[str]) -> list[dict[str, float]] | None:
    """Each guide RM's stored scores (none for a uniform design); None while a guide has not
    scored every response (a plan)."""
    if ctx.recipe.label_budget.design != "rm-guided":
        return []
    if ctx.store is None:
        return None
    found = [ctx.store.items.scores(ctx.component(spec).key) for spec in guide_specs(ctx)]
    return found if all(rid in stored for stored in found for rid in ids) else None


def _inclusion(
    ctx: RunContext, block: list[str], expected: float, guides: list[dict[str, float]]
) -> np.ndarray:
    budget, size = ctx.recipe.label_budget, len(block)
    if budget.design == "uniform":
        m = budget.per_prompt or uniform_sample_size(budget.fraction, size)
        return np.full(size, min(m, size) / size)
    scored = np.array([[stored[rid] for rid in block] for stored in guides])
    return rm_guided_inclusion(guide_importance(scored), min(expected, size))


# -- the benchmark as metrics see it -------------------------------------------------------
def budgeted_inputs(ctx: RunContext, benchmark) -> tuple:
    """(prompt ids, prompt → every response id, oracle scores per prompt with NaN where
    unlabelled, the :class:`LabelDesign`) of a budgeted benchmark."""
    store = ctx.store
    rows = store.items.benchmark_responses(
        benchmark.selection_key, benchmark.policy_key, benchmark.per_prompt
    )
    order: dict[str, list[str]] = {}
    for rid, pid, *_ in rows:
        order.setdefault(pid, []).append(rid)
    prompt_ids = tuple(order)
    every = [rid for pid in prompt_ids for rid in order[pid]]
    labels = store.items.label_scores(benchmark.oracle_key, every)
    inclusion = store.items.inclusion(benchmark.id)
    # a label of an undrawn response (stored for another benchmark) is not this design's
    oracle = tuple(
        np.array(
            [labels.get(rid, np.nan) if inclusion[rid][1] else np.nan for rid in order[pid]],
            float,
        )
        for pid in prompt_ids
    )
    kind = json.loads(benchmark.design)["design"]
    design = LabelDesign(
        kind,
        tuple(np.array([inclusion[rid][0] for rid in order[pid]], float) for pid in prompt_ids),
        _predictions(ctx, order, prompt_ids),
    )
    return prompt_ids, order, oracle, design


def _predictions(ctx: RunContext, order: dict[str, list[str]], prompt_ids) -> tuple | None:
    """The cheap judge's score of every response; one it could not score (a failed label)
    takes its prompt's mean prediction — any predictor fixed before the draw keeps the
    estimates unbiased, a missing one only weakens the correction."""
    recipe = ctx.recipe
    if recipe.cheap_reward_model is not None:
        spec = next(s for s in recipe.reward_models if s.label == recipe.cheap_reward_model)
        found = ctx.store.items.scores(ctx.component(spec).key)
    elif recipe.cheap_oracle is not None:
        every = [rid for pid in prompt_ids for rid in order[pid]]
        found = ctx.store.items.label_scores(ctx.component(recipe.cheap_oracle).key, every)
    else:
        return None
    predictions, missing = [], 0
    for pid in prompt_ids:
        pool = np.array([found.get(rid, np.nan) for rid in order[pid]], float)
        missing += int(np.isnan(pool).sum())
        if np.isnan(pool).all():
            pool[:] = 0.0
        predictions.append(np.where(np.isnan(pool), np.nanmean(pool), pool))
    if missing:
        ctx.notes.append(
            f"cheap judge: {missing} responses without a prediction took their prompt's mean "
            "prediction (a rerun asks again)"
        )
    return tuple(predictions)


#: below this share of its best-of-16 weight on labelled responses, an RM's top picks are
#: "mostly unlabelled" and the summary says so
TOP_PICKS_LABELLED = 0.5
#: an rm-guided design with fewer labels per prompt leaves pairwise accuracy a ratio bias that
#: can exceed its ± (8 of 64 labelled: coverage 0.89), RETA and best-of-n one of up to half
#: theirs (AlpacaEval, 4 of 11: coverage 0.933) (benchmarks/budget.md)
FEW_GUIDED_LABELS = 16


def design_notes(ctx: RunContext, benchmark, oracle, scores_by_rm) -> list[str]:
    """Caveats of a budgeted benchmark's estimates, for the summary: the RMs whose top picks
    were mostly unlabelled (unbiased, but on few labels, so with less than 100 prompts their
    ± may under-cover), and an rm-guided design with few labels per prompt."""
    notes = []
    shares = {
        label: labelled_weight_share(oracle, scores) for label, scores in scores_by_rm.items()
    }
    few = {label: share for label, share in shares.items() if share < TOP_PICKS_LABELLED}
    if few:
        listed = ", ".join(f"{label} {share:.0%}" for label, share in few.items())
        notes.append(
            "top picks mostly unlabelled (share of best-of-16 weight on labelled responses): "
            f"{listed}; their estimates are unbiased but rest on few labels, and with under 100 "
            "prompts their ± may under-cover (docs/budget.md)"
        )
    kind = json.loads(benchmark.design)["design"]
    labels = np.mean([np.count_nonzero(~np.isnan(pool)) for pool in oracle]) if oracle else 0
    if kind == "rm-guided" and labels < FEW_GUIDED_LABELS:
        notes.append(
            f"rm-guided design with {labels:.1f} labels per prompt: pairwise accuracy keeps a "
            "ratio bias that can exceed its ±, RETA and best-of-n one of up to half theirs; "
            "read them as approximate, or use the uniform design (docs/budget.md)"
        )
    return notes
