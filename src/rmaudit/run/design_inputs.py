"""A budgeted benchmark as metrics see it (docs/budget.md): the stored label design
(:class:`~rmaudit.store.records.LabelDesignRecord`, drawn by :mod:`.design`) read back into a
metric's inputs, with NaN where the oracle did not label, and the caveats the summary shows."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rmaudit.components import LabelDesign
from rmaudit.metrics.budget import labelled_weight_share

from .benchmark import Benchmark
from .context import RunContext


class BenchmarkArrays(NamedTuple):
    """A benchmark's metric inputs, in benchmark order, and its label design (None: every
    response labelled)."""

    prompt_ids: tuple[str, ...]
    #: prompt id → every response id
    order: dict[str, list[str]]
    #: oracle scores per prompt, NaN where the design left a response unlabelled
    oracle: tuple[np.ndarray, ...]
    design: LabelDesign | None


def budgeted_inputs(ctx: RunContext, benchmark: Benchmark) -> BenchmarkArrays:
    """The metric inputs of a budgeted benchmark, its stored design read back."""
    store, stored_design = ctx.store, benchmark.design
    assert store is not None and stored_design is not None  # metrics of a budgeted benchmark
    rows = store.items.benchmark_responses(
        benchmark.selection_key, benchmark.policy_key, benchmark.per_prompt
    )
    order: dict[str, list[str]] = {}
    for row in rows:
        order.setdefault(row.prompt_id, []).append(row.id)
    prompt_ids = tuple(order)
    every = [rid for pid in prompt_ids for rid in order[pid]]
    labels = store.items.label_scores(benchmark.oracle_key, every)
    inclusion = store.items.inclusion(benchmark.id)
    # a label of an undrawn response (stored for another benchmark) is not this design's
    oracle = tuple(
        np.array(
            [labels.get(rid, np.nan) if inclusion[rid].drawn else np.nan for rid in order[pid]],
            float,
        )
        for pid in prompt_ids
    )
    design = LabelDesign(
        stored_design.design,
        tuple(
            np.array([inclusion[rid].probability for rid in order[pid]], float)
            for pid in prompt_ids
        ),
        _predictions(ctx, order, prompt_ids),
    )
    return BenchmarkArrays(prompt_ids, order, oracle, design)


def _predictions(
    ctx: RunContext, order: dict[str, list[str]], prompt_ids: tuple[str, ...]
) -> tuple[np.ndarray, ...] | None:
    """The cheap judge's score of every response; one it could not score (a failed label)
    takes its prompt's mean prediction — any predictor fixed before the draw keeps the
    estimates unbiased, a missing one only weakens the correction."""
    recipe, store = ctx.recipe, ctx.store
    assert store is not None  # metrics read the stored benchmark
    found: dict[str, float]
    if recipe.cheap_reward_model is not None:
        spec = next(s for s in recipe.reward_models if s.label == recipe.cheap_reward_model)
        found = store.items.scores(ctx.component(spec).key)
    elif recipe.cheap_oracle is not None:
        every = [rid for pid in prompt_ids for rid in order[pid]]
        found = store.items.label_scores(ctx.component(recipe.cheap_oracle).key, every)
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
#: under this many prompts, such an RM's ± can under-cover: its per-prompt estimates are
#: heavy-tailed (docs/budget.md, "When not to use it"); from it up the note is not needed
FEW_PROMPTS = 100
#: an rm-guided design with fewer labels per prompt leaves pairwise accuracy a ratio bias that
#: can exceed its ± (8 of 64 labelled: coverage 0.89), RETA and best-of-n one of up to half
#: theirs (AlpacaEval, 4 of 11: coverage 0.933) (benchmarks/budget.md)
FEW_GUIDED_LABELS = 16


def design_notes(
    benchmark: Benchmark,
    oracle: tuple[np.ndarray, ...],
    scores_by_rm: dict[str, tuple[np.ndarray, ...]],
) -> list[str]:
    """Caveats of a budgeted benchmark's estimates, for the summary: under
    :data:`FEW_PROMPTS` prompts, the RMs whose top picks were mostly unlabelled (unbiased, but
    on few labels, so their ± may under-cover), and an rm-guided design with few labels per
    prompt."""
    notes = []
    shares = {
        label: labelled_weight_share(oracle, scores) for label, scores in scores_by_rm.items()
    }
    few = {label: share for label, share in shares.items() if share < TOP_PICKS_LABELLED}
    if few and len(oracle) < FEW_PROMPTS:
        listed = ", ".join(f"{label} {share:.0%}" for label, share in few.items())
        notes.append(
            "top picks mostly unlabelled (share of best-of-16 weight on labelled responses): "
            f"{listed}; their estimates are unbiased but rest on few labels, and with under "
            f"{FEW_PROMPTS} prompts ({len(oracle)} here) their ± may under-cover (docs/budget.md)"
        )
    kind = benchmark.design.design if benchmark.design is not None else None
    labels = np.mean([np.count_nonzero(~np.isnan(pool)) for pool in oracle]) if oracle else 0
    if kind == "rm-guided" and labels < FEW_GUIDED_LABELS:
        notes.append(
            f"rm-guided design with {labels:.1f} labels per prompt: pairwise accuracy keeps a "
            "ratio bias that can exceed its ±, RETA and best-of-n one of up to half theirs; "
            "read them as approximate, or use the uniform design (docs/budget.md)"
        )
    return notes
