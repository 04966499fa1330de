"""The label planner (``rmaudit plan RECIPE``): from a fully labelled pilot in the DB, what each
label design needs — prompts, labels, judge calls and dollars — to reach a target interval
width on RETA(1/4) and BoN@16 of every RM of the recipe (docs/budget.md, "Planning")."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from rmaudit.components import (
    Component,
    Embedder,
    Oracle,
    Prompt,
    PromptSampler,
    PromptSource,
    ReferencePolicy,
)
from rmaudit.errors import BadInput
from rmaudit.metrics.budget.planning import (
    Option,
    Pilot,
    Target,
    Z,
    design_inclusion,
    label_floor,
    label_residuals,
    per_prompt_variance,
    plan,
)
from rmaudit.recipe import Recipe
from rmaudit.store import Store

from .context import built, required
from .prompts import distinct_prompts

TARGETS = (Target("reta", 0.25), Target("bon", 16))


@dataclass(frozen=True)
class LabelPlan:
    pilot_id: str
    pilot_prompts: int
    pilot_samples: int
    prompts: int  # the recipe's k (the benchmark whose width is the default target)
    pool: int | None
    widths: dict[tuple[str, str], float]
    options: list[Option]
    usd_per_call: float | None
    cheap: str | None
    floor: float  # the fewest one-sample labels any design could need (planning.label_floor)
    #: the most embedding dimensions the recipe's embedder gives its sampler (a k-DPP's k may
    #: not exceed them); None when the sampler needs no embeddings or the embedder cannot say
    dims: int | None = None


def label_plan(
    recipe: Recipe,
    components: dict[str, Component],
    store: Store,
    *,
    width: float | None,
    width_ratio: float,
) -> LabelPlan:
    """Read the pilot and plan; ``width`` (absolute, the same for every target) or, by default,
    ``width_ratio`` × the width full labelling gives at the recipe's k with the pilot's samples."""
    if recipe.source is None or recipe.oracle is None:
        raise BadInput(
            "plans the labels of a benchmark built here ([prompts], [responses], [oracle])",
            file=recipe.path,
        )
    policy = built(components, recipe.policy, ReferencePolicy)
    oracle = built(components, recipe.oracle, Oracle)
    per_prompt = required(recipe.per_prompt, "[responses] per_prompt")
    found = store.read.full_benchmarks(policy.key, oracle.key, per_prompt)
    if not found:
        raise BadInput(
            "no fully labelled pilot of this recipe's policy, oracle and N in the DB: run the "
            "recipe without a budget on a few prompts first (e.g. k = 20), then plan",
            file=recipe.path,
        )
    bench = found[0]
    pilot = _pilot(recipe, components, store, bench)
    k = _recipe_k(recipe, len(pilot.labels))
    widths = {}
    full = design_inclusion(pilot, "full", 1.0, ())
    residuals = label_residuals(pilot, False)
    for target in TARGETS:
        for rm in pilot.scores:
            if width is not None:
                widths[(target.name, rm)] = width
                continue
            between, within = per_prompt_variance(
                pilot, target, rm, "full", full, residuals, pilot.samples
            )
            widths[(target.name, rm)] = width_ratio * 2 * Z * np.sqrt((between + within) / k)
    candidates = distinct_prompts(built(components, recipe.source, PromptSource).load())
    pool = len(candidates)
    options = plan(
        pilot,
        TARGETS,
        widths,
        guides=list(recipe.label_budget.guide)
        if recipe.label_budget
        else [s.label for s in recipe.reward_models],
        max_prompts=pool,
        per_prompt=per_prompt,
    )
    floor = max(
        label_floor(pilot, t, rm, widths[(t.name, rm)]) for t in TARGETS for rm in pilot.scores
    )
    usd = oracle.estimate_cost([], 1)
    per_call = None if usd is None else usd / max(1, oracle.calls_per_label())
    return LabelPlan(
        bench["id"],
        len(pilot.labels),
        pilot.samples,
        k,
        pool,
        widths,
        options,
        per_call,
        _cheap_name(recipe),
        floor,
        _embedding_dims(recipe, components, candidates),
    )


def _cheap_name(recipe: Recipe) -> str | None:
    if recipe.cheap_reward_model is not None:
        return f"RM {recipe.cheap_reward_model}"
    return None if recipe.cheap_oracle is None else recipe.cheap_oracle.cls.name


def _recipe_k(recipe: Recipe, pilot_prompts: int) -> int:
    sampler = recipe.model.prompts.sampler if recipe.model.prompts else None
    k = sampler.get("k") if isinstance(sampler, dict) else None
    return int(k) if isinstance(k, int) else pilot_prompts


def _embedding_dims(
    recipe: Recipe, components: dict[str, Component], candidates: list[Prompt]
) -> int | None:
    if not built(components, recipe.sampler, PromptSampler).needs_embeddings:
        return None
    return built(components, recipe.embedder, Embedder).max_prompt_dims(candidates)


def _pilot(recipe: Recipe, components, store: Store, bench: dict) -> Pilot:
    labels, variances, samples_seen = [], [], []
    order = []
    for _, pid, _, _ in store.read.selection_prompts(bench["selection_key"]):
        rows = store.read.labelled_responses(bench, pid)
        order.append([row[0] for row in rows])
        labels.append(np.array([row[4] for row in rows], float))
        draws = [json.loads(row[5]) for row in rows]
        samples_seen += [len(d) for d in draws]
        variances.append(
            np.array([np.var(d, ddof=1) if len(d) > 1 else np.nan for d in draws], float)
        )
    scores = {}
    for spec in recipe.reward_models:
        stored = store.items.scores(components[spec.field].key)
        missing = sum(rid not in stored for ids in order for rid in ids)
        if missing:
            raise BadInput(
                f"the pilot {bench['id'][:10]} has {missing:,} responses that {spec.label!r} has "
                "not scored: run the pilot recipe with the same reward models first",
                file=recipe.path,
                field=spec.field,
            )
        scores[spec.label] = [np.array([stored[rid] for rid in ids], float) for ids in order]
    predictions = None
    if recipe.cheap_reward_model is not None:
        predictions = scores[recipe.cheap_reward_model]
    elif recipe.cheap_oracle is not None:
        cheap = components[recipe.cheap_oracle.field]
        found = store.items.label_scores(cheap.key, [rid for ids in order for rid in ids])
        if len(found) < sum(map(len, order)):
            raise BadInput(
                "the cheap judge has not labelled the pilot: run the pilot with the same "
                "[cheap_oracle] first",
                file=recipe.path,
                field="cheap_oracle",
            )
        predictions = [np.array([found[rid] for rid in ids], float) for ids in order]
    return Pilot(labels, variances, min(samples_seen), scores, predictions)
