"""What a label plan spends and what it changes (``rmaudit plan``, docs/budget.md "Planning"):
the price of each resource — oracle calls, cheap-judge calls, generations, RM scorings — from
flags or the components' own cost models; the recipe as it stands, costed as a plan of its own;
and the measured shift of a metric whose estimand depends on label noise when the plan changes
the judge samples per label."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.backends.openai_api import Price
from rmaudit.components import Component, Prompt
from rmaudit.errors import BadInput, MetricInputError
from rmaudit.metrics.budget.planning import (
    NOISE_DEPENDENT,
    Option,
    Pilot,
    Prices,
    Spending,
    WidthTarget,
    design_inclusion,
    label_residuals,
    priced_option,
    prompts_needed,
)
from rmaudit.metrics.pairwise import pairwise_accuracy
from rmaudit.recipe import Recipe
from rmaudit.recipe.model import PlanSection


@dataclass(frozen=True)
class PriceFlags:
    """Prices given on the command line, each as a fraction of one oracle call (None: the
    recipe's ``[plan]`` price, else the default)."""

    cheap: float | None = None
    generation: float | None = None
    scoring: float | None = None
    #: ``--judge-price``: USD per 1M tokens of the recipe's LLM judges (None: their own price)
    judge: Price | None = None


@dataclass(frozen=True)
class PlanPrices:
    """Per-call prices in oracle calls, the USD of one oracle call when its cost model knows
    (else ``no_usd`` says why), and where each price came from."""

    prices: Prices
    usd_per_call: float | None
    sources: dict[str, str]
    no_usd: str = ""


def _usd_per_call(judge: Component | None, prompts: Sequence[Prompt]) -> float | None:
    """One call's USD from the judge's cost model, its prompt lengths taken from ``prompts``."""
    if judge is None:
        return None
    usd = judge.estimate_cost(prompts, 1)  # type: ignore[attr-defined]
    return None if usd is None else usd / max(1, judge.calls_per_label())  # type: ignore[attr-defined]


def _no_usd(oracle: Component) -> str:
    if "price" in type(oracle.options).model_fields:
        return (
            f"the oracle {oracle.name} has no price: give it one (price = {{ prompt = …, "
            "completion = … }, USD per 1M tokens) for a USD column"
        )
    return f"the oracle {oracle.name} has no cost model in USD, so costs stay in oracle calls"


def plan_prices(
    oracle: Component,
    cheap: Component | None,
    flags: PriceFlags,
    prompts: Sequence[Prompt],
    in_recipe: PlanSection | None = None,
    *,
    judge_usd: float | None = None,
    judge_unpriced: str | None = None,
) -> PlanPrices:
    """Each price from its flag, else the recipe's ``[plan]`` table; else a cheap call from the
    cheap judge's cost model against the oracle's (both at the lengths of ``prompts``; for an
    LLM judge among the RMs, ``judge_usd`` for one of its calls, and ``judge_unpriced`` its
    label when it has no price), or priced as an oracle call (no saving claimed for a judge of
    unknown price), and generations and scorings unpriced (0: no built-in policy or RM has a
    cost model)."""
    usd = _usd_per_call(oracle, prompts)
    given: dict[str, float] = {}
    sources: dict[str, str] = {}
    for name in ("cheap", "generation", "scoring"):
        flag = getattr(flags, name)
        from_recipe = getattr(in_recipe, f"{name}_price") if in_recipe else None
        if flag is not None:
            given[name], sources[name] = flag, f"--{name}-price"
        elif from_recipe is not None:
            given[name], sources[name] = from_recipe, f"[plan] {name}_price"
    if "cheap" not in given:
        cheap_usd = judge_usd if judge_usd is not None else _usd_per_call(cheap, prompts)
        if usd and cheap_usd is not None:
            given["cheap"], sources["cheap"] = cheap_usd / usd, "the judges' cost models"
        elif judge_unpriced is not None:
            given["cheap"], sources["cheap"] = (
                1.0,
                (
                    f"as an oracle call: the cheap judge {judge_unpriced!r} has no price (give "
                    "--judge-price, its price = { prompt = …, completion = … } or --cheap-price)"
                ),
            )
        else:
            given["cheap"], sources["cheap"] = 1.0, "as an oracle call (no cost model)"
    for name in ("generation", "scoring"):
        sources.setdefault(name, "unpriced")
    prices = Prices(1.0, given["cheap"], given.get("generation", 0.0), given.get("scoring", 0.0))
    return PlanPrices(prices, usd, sources, "" if usd is not None else _no_usd(oracle))


def parse_target(text: str) -> WidthTarget:
    """``reta@ETA`` (0 < η < 1) or ``bon@N`` (a whole N ≥ 1) as a planner target."""
    kind, _, param = text.partition("@")
    # written out plainly: float() would take " 16", "1e1" or "16.0" (a typo passing as N)
    if kind == "reta" and re.fullmatch(r"[0-9]*\.[0-9]+", param) and 0 < float(param) < 1:
        return WidthTarget("reta", float(param))
    if kind == "bon" and re.fullmatch(r"[0-9]+", param) and int(param) >= 1:
        return WidthTarget("bon", int(param))
    raise BadInput(
        "expected reta@ETA (0 < ETA < 1, e.g. reta@0.25) or bon@N (a whole N ≥ 1, e.g. bon@16)",
        field="--target",
        value=text,
    )


def recipe_targets(recipe: Recipe) -> list[WidthTarget]:
    """The planner targets among the recipe's metrics: each ``reta``'s η and each best-of-n's
    reported n (rank 1; default 4, 16, 64) that the recipe's N responses per prompt can draw."""
    per_prompt = recipe.per_prompt or 0
    found = []
    for spec in recipe.metrics:
        options = dict(spec.options)
        if spec.cls.name == "reta":
            found.append(WidthTarget("reta", float(options["eta"])))
        elif spec.cls.name == "best-of-n" and options.get("rank", 1) == 1:
            reported = options.get("report") or (4, 16, 64)
            found += [WidthTarget("bon", int(n)) for n in reported if int(n) <= per_prompt]
    if not found:
        raise BadInput(
            "the recipe has no reta or best-of-n metric to plan for",
            file=recipe.path,
            field="--target",
            value="recipe",
        )
    return list(dict.fromkeys(found))


def recipe_option(
    recipe: Recipe,
    components: dict[str, Component],
    pilot: Pilot,
    targets: list[WidthTarget],
    widths: dict[tuple[str, str], float],
    *,
    prompts: int,
    spending: Spending,
    pool: int | None,
    guides: list[str],
) -> Option:
    """The recipe as it stands — its design, budget, cheap judge, samples per label and k —
    with what it spends and the width it is predicted to reach, as a fraction of the target."""
    budget = recipe.label_budget
    design = budget.design if budget else "full"
    fraction = 1.0
    if budget:
        fraction = budget.expected_labels(spending.per_prompt) / spending.per_prompt
    cheap = pilot.predictions is not None and (
        recipe.cheap_oracle is not None or recipe.cheap_reward_model is not None
    )
    samples = recipe_samples(recipe, components, pilot)
    inclusion = design_inclusion(pilot, design, fraction, guides)
    residuals = label_residuals(pilot, cheap)
    needed = prompts_needed(pilot, targets, widths, design, inclusion, residuals, samples)
    return priced_option(
        design,
        cheap,
        fraction,
        samples,
        prompts=prompts,
        needed=needed,
        spending=spending,
        max_prompts=pool,
    )


def recipe_samples(recipe: Recipe, components: dict[str, Component], pilot: Pilot) -> int:
    """The judge samples per label the recipe's oracle takes."""
    assert recipe.oracle is not None
    samples = getattr(components[recipe.oracle.field].options, "samples", None)
    return samples if isinstance(samples, int) else pilot.samples


@dataclass(frozen=True)
class NoiseShift:
    """A noise-dependent metric of one RM at the pilot's samples per label and at ``samples``
    (the pilot's first ``samples`` judge draws of each label), with both standard errors."""

    metric: str
    rm: str
    samples: int
    pilot_samples: int
    at_pilot: float
    at_samples: float
    stderr: float  # √(se₁² + se₂²)

    @property
    def shift(self) -> float:
        return self.at_samples - self.at_pilot


def noise_shifts(
    recipe: Recipe, pilot: Pilot, draws: list[list[list[float]]], samples: int
) -> list[NoiseShift]:
    """Each noise-dependent metric of the recipe, per RM, at ``samples`` judge samples per
    label against the pilot's: measured on the pilot, whose labels keep their draws."""
    names = {spec.cls.name for spec in recipe.metrics}
    if samples == pilot.samples or not names.intersection(NOISE_DEPENDENT):
        return []
    fewer = [np.array([np.mean(d[:samples]) for d in prompt], float) for prompt in draws]
    shifts = []
    for rm, scores in pilot.scores.items():
        try:
            before = pairwise_accuracy(pilot.labels, scores, bootstrap=1)
            after = pairwise_accuracy(fewer, scores, bootstrap=1)
        except MetricInputError:  # a prompt whose labels all tie at fewer samples
            continue
        shifts.append(
            NoiseShift(
                "pairwise-accuracy",
                rm,
                samples,
                pilot.samples,
                before.value,
                after.value,
                float(np.hypot(before.stderr, after.stderr)),
            )
        )
    return shifts
