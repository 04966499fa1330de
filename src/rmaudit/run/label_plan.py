"""The label planner (``rmaudit plan RECIPE``): from a fully labelled pilot in the DB, what each
label design needs — prompts, labels, oracle and cheap-judge calls, generations, RM scorings
and their total price — to reach a target interval width on the chosen targets (RETA(1/4) and
BoN@16 by default) of every RM of the recipe (docs/budget.md, "Planning")."""

from __future__ import annotations

from collections.abc import Sequence
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
    ORACLE_CALLS,
    Option,
    Pilot,
    Spending,
    WidthTarget,
    Z,
    design_inclusion,
    design_options,
    label_floor,
    label_residuals,
    per_prompt_variance,
    recommend,
)
from rmaudit.recipe import Recipe
from rmaudit.store import Store
from rmaudit.store.records import BenchmarkRow

from .context import built, required
from .costs import JudgeCalls
from .judge_plan import planned_judge_calls
from .plan_costs import (
    NoiseShift,
    PlanPrices,
    PriceFlags,
    noise_shifts,
    plan_prices,
    recipe_option,
)
from .prompts import distinct_prompts

TARGETS = (WidthTarget("reta", 0.25), WidthTarget("bon", 16))
#: the target widths a plan takes, as multiples of full labelling's at the recipe's k: below,
#: more prompts than any pool (×10⁶ at 10⁻³); above, less than one prompt
WIDTH_RATIOS = (1e-3, 1e3)
NO_PRICE_FLAGS = PriceFlags()


def default_targets(per_prompt: int) -> tuple[WidthTarget, ...]:
    """RETA(1/4) and BoN@16, less a best-of-16 that ``per_prompt`` responses cannot draw."""
    return tuple(t for t in TARGETS if t.kind != "bon" or t.param <= per_prompt)


def _drawable(
    targets: tuple[WidthTarget, ...], per_prompt: int, recipe: Recipe
) -> tuple[WidthTarget, ...]:
    for target in targets:
        if target.kind == "bon" and target.param > per_prompt:
            raise BadInput(
                f"best-of-{int(target.param)} needs at least {int(target.param)} responses per "
                f"prompt; the recipe's [responses] per_prompt is {per_prompt}",
                file=recipe.path,
                field="--target",
                value=f"bon@{int(target.param)}",
            )
    return targets


@dataclass(frozen=True)
class LabelNeeds:
    """What each label design needs to reach the target widths, read from the pilot."""

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
    targets: tuple[WidthTarget, ...] = TARGETS
    prices: PlanPrices | None = None
    recipe: Option | None = None  # the recipe as it stands, at its k
    best: Option | None = None  # the recommendation at ``prices``
    shifts: tuple[NoiseShift, ...] = ()  # noise-dependent metrics at ``best``'s samples
    #: the recipe's LLM judges under audit: their calls still to make for the recipe as it
    #: stands, against the pilot's DB
    judges: tuple[JudgeCalls, ...] = ()

    def cost(self, option: Option) -> float:
        """What ``option`` spends in total, in oracle calls, at the plan's prices."""
        return (self.prices.prices if self.prices else ORACLE_CALLS).of(option)


def label_plan(
    recipe: Recipe,
    components: dict[str, Component],
    store: Store,
    *,
    width: float | None,
    width_ratio: float,
    targets: Sequence[WidthTarget] = (),
    flags: PriceFlags = NO_PRICE_FLAGS,
) -> LabelNeeds:
    """Read the pilot and plan; ``width`` (absolute, the same for every target) or, by default,
    ``width_ratio`` × the width full labelling gives at the recipe's k with the pilot's samples;
    options priced at ``flags`` (else the components' cost models) and recommended by total."""
    bench = _pilot_benchmark(recipe, components, store)
    per_prompt = required(recipe.per_prompt, "[responses] per_prompt")
    targets = (
        _drawable(tuple(targets), per_prompt, recipe) if targets else default_targets(per_prompt)
    )
    pilot, draws = _pilot(recipe, components, store, bench)
    k = _recipe_k(recipe, len(pilot.labels))
    widths = _widths(pilot, targets, k, width, width_ratio)
    candidates = distinct_prompts(built(components, recipe.source, PromptSource).load())
    pool = len(candidates)
    guides = (
        list(recipe.label_budget.guide)
        if recipe.label_budget
        else [s.label for s in recipe.reward_models]
    )
    answers = _pilot_answers(store, bench)
    judges = planned_judge_calls(recipe, components, store, price=flags.judge, answers=answers)
    cheap_judge = next((j for j in judges if j.label == recipe.cheap_reward_model), None)
    spending = _spending(recipe, per_prompt, len(pilot.scores), cheap_judge is not None)
    options = design_options(
        pilot,
        targets,
        widths,
        guides=guides,
        max_prompts=pool,
        per_prompt=per_prompt,
        spending=spending,
    )
    floor = max(
        label_floor(pilot, t, rm, widths[(t.name, rm)]) for t in targets for rm in pilot.scores
    )
    prices = _prices(
        recipe, components, flags, _pilot_prompts(store, bench, candidates), cheap_judge, answers
    )
    best = recommend(options, prices.prices)
    as_it_stands = recipe_option(
        recipe,
        components,
        pilot,
        list(targets),
        widths,
        prompts=k,
        spending=spending,
        pool=pool,
        guides=guides,
    )
    return LabelNeeds(
        bench.id,
        len(pilot.labels),
        pilot.samples,
        k,
        pool,
        widths,
        options,
        prices.usd_per_call,
        _cheap_name(recipe),
        floor,
        _embedding_dims(recipe, components, candidates),
        targets,
        prices,
        as_it_stands,
        best,
        tuple(noise_shifts(recipe, pilot, draws, best.samples)),
        tuple(judges),
    )


def _prices(
    recipe: Recipe,
    components: dict[str, Component],
    flags: PriceFlags,
    prompts: Sequence[Prompt],
    cheap_judge: JudgeCalls | None,
    answers: Sequence[tuple[str, str]],
) -> PlanPrices:
    """The price of each resource: the oracle's and cheap oracle's cost models at the pilot's
    ``prompts``, the recipe's ``[plan]`` prices and ``flags``, an API cheap judge's calls."""
    cheap = components[recipe.cheap_oracle.field] if recipe.cheap_oracle else None
    return plan_prices(
        built(components, recipe.oracle, Oracle),
        cheap,
        flags,
        prompts,
        recipe.model.plan,
        judge_usd=_one_call_usd(components, recipe, cheap_judge, answers, flags),
        judge_unpriced=cheap_judge.label if cheap_judge and cheap_judge.usd is None else None,
    )


def _spending(recipe: Recipe, per_prompt: int, rms: int, cheap_judge_paid: bool) -> Spending:
    """A cheap RM's scorings are counted among the RMs' (it adds no calls of its own), unless
    it is an LLM judge paid per call: then its ratings are cheap calls, in every option."""
    if cheap_judge_paid:
        return Spending(per_prompt, rms - 1, 1, cheap_always=True)
    return Spending(per_prompt, rms, 0 if recipe.cheap_reward_model else 1)


def _one_call_usd(
    components: dict[str, Component],
    recipe: Recipe,
    cheap_judge: JudgeCalls | None,
    answers: Sequence[tuple[str, str]],
    flags: PriceFlags,
) -> float | None:
    """One rating call of the cheap LLM judge, in USD, at the pilot's texts' lengths."""
    if cheap_judge is None:
        return None
    (spec,) = [s for s in recipe.reward_models if s.label == cheap_judge.label]
    judge = components[spec.field]
    estimate = judge.estimate_calls(answers, 1)  # type: ignore[attr-defined]
    return estimate.usd(flags.judge or judge.options.price)


def _pilot_answers(store: Store, bench: BenchmarkRow) -> list[tuple[str, str]]:
    """(prompt, response) texts of the pilot: the lengths a rating judge's calls show."""
    return [
        (prompt.text, row.text)
        for prompt in store.read.selection_prompts(bench.selection_key)
        for row in store.read.labelled_responses(bench, prompt.id)
    ]


def _pilot_benchmark(
    recipe: Recipe, components: dict[str, Component], store: Store
) -> BenchmarkRow:
    """The stored benchmark of the recipe's policy, oracle and N whose every response is
    labelled: the pilot a plan reads."""
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
    return found[0]


def _pilot_prompts(store: Store, bench: BenchmarkRow, candidates: list[Prompt]) -> list[Prompt]:
    """The pilot's prompts, which its oracle has judged: the lengths its price is taken at."""
    judged = {pid for _, pid, _, _ in store.read.selection_prompts(bench.selection_key)}
    return [prompt for prompt in candidates if prompt.id in judged]


def _widths(
    pilot: Pilot, targets: tuple[WidthTarget, ...], k: int, width: float | None, ratio: float
) -> dict[tuple[str, str], float]:
    """Each (target, RM)'s width: ``width``, or ``ratio`` × full labelling's at k prompts;
    ``BadInput`` for a ``width`` outside :data:`WIDTH_RATIOS` × full labelling's."""
    widths = {}
    full = design_inclusion(pilot, "full", 1.0, ())
    residuals = label_residuals(pilot, False)
    low, high = WIDTH_RATIOS
    for target in targets:
        for rm in pilot.scores:
            between, within = per_prompt_variance(
                pilot, target, rm, "full", full, residuals, pilot.samples
            )
            at_k = 2 * Z * float(np.sqrt((between + within) / k))
            if width is None:
                widths[(target.name, rm)] = ratio * at_k
                continue
            if at_k > 0 and not low <= width / at_k <= high:
                raise BadInput(
                    f"expected a width within {low:g}-{high:g}× the width full labelling "
                    f"gives at k = {k} ({at_k:.4g} for {target.name} of {rm})",
                    field="--width",
                    value=width,
                )
            widths[(target.name, rm)] = width
    return widths


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


def _pilot(
    recipe: Recipe, components, store: Store, bench: BenchmarkRow
) -> tuple[Pilot, list[list[list[float]]]]:
    """The pilot, and each label's judge draws by prompt."""
    labels, variances, samples_seen, all_draws = [], [], [], []
    order = []
    for _, pid, _, _ in store.read.selection_prompts(bench.selection_key):
        rows = store.read.labelled_responses(bench, pid)
        order.append([row.id for row in rows])
        labels.append(np.array([row.score for row in rows], float))
        draws = [list(row.samples) for row in rows]
        all_draws.append(draws)
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
                f"the pilot {bench.id[:10]} has {missing:,} responses that {spec.label!r} has "
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
    return Pilot(labels, variances, min(samples_seen), scores, predictions), all_draws
