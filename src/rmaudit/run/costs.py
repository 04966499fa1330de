"""Dry-run cost estimates in the style of the RETA paper's Table 1.

Building a benchmark pays for prompt embeddings (|Q0| prompts, once, to sample by k-DPP) and
for oracle labels (k·N responses, times the requests per label); auditing an RM afterwards
costs nothing.  Components that call priced APIs say what their part costs through
``Embedder.estimate_cost`` and ``Oracle.estimate_cost``; this module asks them, for the work
a plan says is still to do.
"""

from __future__ import annotations

from dataclasses import dataclass

from rmaudit.components import (
    Component,
    Embedder,
    Oracle,
    PairSource,
    Prompt,
    PromptSampler,
    PromptSource,
    RewardModel,
)
from rmaudit.components.keys import prompt_id
from rmaudit.recipe import Recipe

from .context import built

#: pairs whose texts set a judge call's average length in an estimate
_SAMPLE = 200


@dataclass(frozen=True)
class CostLine:
    stage: str
    component: str
    items: int
    usd: float | None  # None: the component is priced per token but the recipe gives no price
    tokens: float | None = None  # prompt + completion tokens, where the component says


def estimate_costs(
    recipe: Recipe, components: dict[str, Component], counts: list
) -> list[CostLine]:
    """The cost of the pending work of a plan (``Runner.plan()``'s counts), per priced component."""
    judged = judge_costs(recipe, components, counts)
    if recipe.imports_benchmark or recipe.source is None or recipe.oracle is None:
        return judged  # an imported benchmark is already labelled (pairs need no oracle)
    pending = {count.stage: count.pending for count in counts}
    pool: dict[str, Prompt] = {}
    for text, meta in built(components, recipe.source, PromptSource).load():
        pool.setdefault(prompt_id(text), Prompt(prompt_id(text), text, meta))
    prompts = list(pool.values())
    lines = []
    sampler = built(components, recipe.sampler, PromptSampler)
    if sampler.needs_embeddings and pending.get("prompts", 0):
        embedder = built(components, recipe.embedder, Embedder)
        lines.append(
            _line(
                "prompt sampling (embeddings)",
                embedder,
                len(prompts),
                embedder.estimate_cost([p.text for p in prompts]),
            )
        )
    oracle = built(components, recipe.oracle, Oracle)
    labels = pending.get("oracle labels", 0)
    lines.append(
        _line("response labelling (oracle)", oracle, labels, oracle.estimate_cost(prompts, labels))
    )
    return [line for line in lines if line is not None] + judged


def _line(stage: str, component: Component, items: int, usd: float | None) -> CostLine | None:
    priced = hasattr(component.options, "price")
    return CostLine(stage, component.name, items, usd) if usd is not None or priced else None


def judge_costs(recipe: Recipe, components: dict[str, Component], counts: list) -> list[CostLine]:
    """The calls an LLM judge under audit still has to make (its pending verdicts or ratings),
    their tokens and price (``estimate_calls``), from a sample of the recipe's pairs' texts."""
    pending = {count.stage: count.pending for count in counts}
    sample: list[tuple[str, ...]] = []
    if recipe.pair_source is not None:
        source = built(components, recipe.pair_source, PairSource)
        pairs = [] if source.needs_benchmark else source.load_pairs(None).pairs[:_SAMPLE]
        sample = [(p.prompt.text, p.chosen.text, p.rejected.text) for p in pairs]
    lines = []
    for spec in recipe.reward_models:
        judge = built(components, spec, RewardModel)
        if not hasattr(judge, "estimate_calls"):
            continue
        stage = f"{'verdicts' if judge.judges_pairs() else 'scores'}: {spec.label}"
        calls = pending.get(stage, 0)
        texts = sample if judge.judges_pairs() else [t[:2] for t in sample]
        tokens, usd = judge.estimate_calls(texts, calls)
        lines.append(CostLine(f"{stage} (judge calls)", judge.name, calls, usd, tokens))
    return lines
