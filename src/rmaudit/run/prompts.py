"""Stage "prompts": load the source's candidate prompts and select the benchmark's k.

The selection is keyed by the source, the sampler (and embedder) and the pool's prompt ids;
once stored, a rerun reads it back instead of sampling again.
"""

from __future__ import annotations

from rmaudit.components import Prompt
from rmaudit.components.keys import content_key, prompt_id
from rmaudit.errors import BadInput

from .context import RunContext, StageCount, prompt_row


def pool(ctx: RunContext) -> tuple[str, list[Prompt]]:
    """The candidate prompts and the key of the selection the sampler makes from them."""
    recipe = ctx.recipe
    source, sampler = ctx.component(recipe.source), ctx.component(recipe.sampler)
    if ctx.loaded_prompts is None:  # once per run: a run's plan loads them before the run
        try:
            ctx.loaded_prompts = source.load()
        except BadInput as error:
            raise ctx.located(error, recipe.source) from None
    candidates = distinct_prompts(ctx.loaded_prompts)
    embedder = ctx.component(recipe.embedder) if sampler.needs_embeddings else None
    selection_key = content_key(
        "selection",
        source.key,
        sampler.key,
        embedder.key if embedder else None,
        [p.id for p in candidates],
    )
    return selection_key, candidates


def distinct_prompts(loaded: list[tuple[str, dict]]) -> list[Prompt]:
    """A source's (text, meta) pairs as prompts; identical texts are one prompt (the first)."""
    candidates, seen = [], set()
    for text, meta in loaded:
        pid = prompt_id(text)
        if pid not in seen:
            seen.add(pid)
            candidates.append(Prompt(pid, text, meta))
    return candidates


def select(ctx: RunContext, execute: bool) -> tuple[str, list[Prompt] | None, int]:
    """The selection's key, its prompts (None in a plan when not sampled yet) and their count."""
    with ctx.timed("prompts"):
        selection_key, candidates = pool(ctx)
        stored = ctx.store.items.selection(selection_key) if ctx.store else []
        recipe, sampler = ctx.recipe, ctx.component(ctx.recipe.sampler)
        if stored:
            by_id = {p.id: p for p in candidates}
            chosen: list[Prompt] | None = [by_id[pid] for pid in stored]
            count = StageCount("prompts", len(stored), len(stored))
        else:
            chosen = None
            planned = ctx.planned_draw is not None and ctx.planned_draw[0] == selection_key
            # a pool the sampler cannot draw from is refused before the run; the run that
            # follows its plan takes the plan's draw (the prompts are embedded once)
            if ctx.strict and not planned:
                embedder = ctx.component(recipe.embedder) if sampler.needs_embeddings else None
                dims = embedder.max_prompt_dims(candidates) if embedder else None
                try:
                    sampler.check_pool(len(candidates), dims)
                except BadInput as error:
                    raise ctx.located(error, recipe.sampler) from None
                # the draw itself (embeddings of rank < k, say) fails here, not after storing
                drawn = [candidates[i] for i in _draw(ctx, candidates)]
                ctx.planned_draw = (selection_key, drawn)
            count = StageCount("prompts", sampler.planned_size(len(candidates)), 0)
        ctx.counts.append(count)
        if not execute:
            return selection_key, chosen, count.total
        ctx.progress.start("prompts", 1, int(bool(stored)))
        if chosen is None:
            chosen = _sample(ctx, selection_key, candidates)
            count.total = len(chosen)  # what the sampler kept (its planned_size says the same)
            ctx.progress.advance("prompts", 1)
        ctx.progress.finish("prompts")
        return selection_key, chosen, len(chosen)


def _draw(ctx: RunContext, candidates: list[Prompt]) -> list[int]:
    """The sampler's indices into ``candidates`` (embedded first, when it needs it)."""
    recipe = ctx.recipe
    sampler = ctx.component(recipe.sampler)
    embedder = ctx.component(recipe.embedder) if sampler.needs_embeddings else None
    embeddings = embedder.embed_prompts(candidates) if embedder else None
    try:
        return [int(i) for i in sampler.sample(candidates, embeddings)]
    except BadInput as error:
        raise ctx.located(error, recipe.sampler) from None


def _sample(ctx: RunContext, selection_key: str, candidates: list[Prompt]) -> list[Prompt]:
    """Draw (or take the draw the run's plan made) and store the selection."""
    recipe = ctx.recipe
    sampler = ctx.component(recipe.sampler)
    embedder = ctx.component(recipe.embedder) if sampler.needs_embeddings else None
    planned = ctx.planned_draw
    if planned and planned[0] == selection_key:
        chosen = planned[1]
    else:
        chosen = [candidates[i] for i in _draw(ctx, candidates)]
    with ctx.db.transaction():
        ctx.add_components(ctx.component(recipe.source), sampler, *filter(None, [embedder]))
        ctx.db.items.add_prompts(prompt_row(p) for p in chosen)
        ctx.db.items.add_selection(selection_key, [p.id for p in chosen])
    return chosen
