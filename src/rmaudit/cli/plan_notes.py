"""The lines under ``rmaudit plan``'s table: the target widths, the prices, the recommended
settings, where the saving comes from, what one judge sample per label changes, the floor and
how far one run can land from its plan (docs/budget.md, "Planning")."""

from __future__ import annotations

import math

from rmaudit.metrics.budget.planning import Option
from rmaudit.recipe import Recipe
from rmaudit.results.plan_json import saving_steps
from rmaudit.run.label_plan import LabelNeeds


def notes(planned: LabelNeeds, recipe: Recipe) -> list[str]:
    best = planned.best
    assert best is not None
    targets = ", ".join(
        f"{target} of {rm}: {value:.4f}" for (target, rm), value in sorted(planned.widths.items())
    )
    lines = [f"target widths: {targets}", _prices(planned)]
    lines.append("recommended: " + "; ".join(_settings(planned, recipe, best)))
    lines += _savings(planned, best) + _noise(planned)
    full = [o.labels for o in planned.options if o.design == "full" and o.samples == 1]
    if planned.floor > 0 and full:
        lines.append(
            f"floor: no design reaches these widths with fewer than {planned.floor:,.0f} "
            f"one-sample labels ({full[0] / planned.floor:.1f}× fewer than full labelling's "
            f"{full[0]:,.0f}), even with unlimited prompts and a perfect cheap judge: the "
            "judge's own noise is what is left."
        )
    lines.append(
        "a standard error is itself uncertain: one from "
        f"{best.prompts:,} prompts by about ±{_relative_sd(best.prompts):.1f}% (one SD), the "
        f"pilot's from {planned.pilot_prompts:,} by ±{_relative_sd(planned.pilot_prompts):.1f}%, "
        "so one run's ± can land that far from its plan; for a margin on every width, plan "
        "with --width-ratio below 1."
    )
    lines.append(
        "the widths are planned from the pilot's variances (a prediction: benchmarks/budget.md "
        "checks it against simulation); a design costing more than full labelling is never "
        "recommended."
    )
    return lines


def _prices(planned: LabelNeeds) -> str:
    assert planned.prices is not None
    p, sources = planned.prices.prices, planned.prices.sources
    usd = (
        f"; one oracle call = ${planned.usd_per_call:.6f}"
        if planned.usd_per_call is not None
        else f"; no USD column: {planned.prices.no_usd}"
    )
    return (
        f"prices per call, in oracle calls: oracle 1, cheap judge {p.cheap:g} "
        f"({sources['cheap']}), generation {p.generation:g} ({sources['generation']}), RM "
        f"scoring {p.scoring:g} ({sources['scoring']}){usd}; recommended by total cost"
    )


def _settings(planned: LabelNeeds, recipe: Recipe, best: Option) -> list[str]:
    settings = [f"[prompts.sampler] k = {best.prompts}", f"[oracle] samples = {best.samples}"]
    if planned.dims is not None and best.prompts > planned.dims:
        settings.insert(1, f"[prompts.embedder] dims = {best.prompts} (a k-DPP needs k)")
    if best.design != "full":
        guide = (
            recipe.label_budget.guide
            if recipe.label_budget
            else tuple(s.label for s in recipe.reward_models)
        )
        settings.append(f'budget = {best.budget:g}, design = "{best.design}"')
        if best.design == "rm-guided":
            settings.append("guide = [" + ", ".join(f'"{g}"' for g in guide) + "]")
        if best.cheap:
            settings.append(f"[cheap_oracle] as in the recipe ({planned.cheap})")
    return settings


def _savings(planned: LabelNeeds, best: Option) -> list[str]:
    """The recipe's cost against the recommendation's, step by step."""
    recipe = planned.recipe
    steps = saving_steps(planned, best)
    if recipe is None or not steps:
        return []
    parts = [f"{steps[0].name} {planned.cost(steps[0].option):,.0f}"]
    for before, after in zip(steps, steps[1:], strict=False):
        ratio = planned.cost(before.option) / max(planned.cost(after.option), 1e-12)
        parts.append(f"{after.name} {planned.cost(after.option):,.0f} ({ratio:.2f}×)")
    total = planned.cost(recipe) / max(planned.cost(best), 1e-12)
    reach = (
        f" (the recipe reaches {recipe.reaches:.2f}× the target width)"
        if abs(recipe.reaches - 1) > 0.005
        else ""
    )
    return [
        f"where the saving comes from, in oracle calls{reach}: "
        + " → ".join(parts)
        + f"; {total:.2f}× in all."
    ]


def _noise(planned: LabelNeeds) -> list[str]:
    if not planned.shifts:
        return []
    first = planned.shifts[0]
    measured = ", ".join(
        f"{s.rm} {s.at_pilot:.3f} → {s.at_samples:.3f} ({s.shift:+.3f}, "
        f"{abs(s.shift) / s.stderr if s.stderr > 0 else math.inf:.1f} combined SEs)"
        for s in planned.shifts
    )
    return [
        f"changes meaning: {first.metric} at {first.samples} judge sample(s) per label (the "
        f"pilot's {first.pilot_samples}) compares RMs with noisier labels, whose noise flips "
        "pairs, so it measures another quantity, not the same one less precisely (only "
        "RETA and best-of-n stay design-unbiased); measured on the pilot's first "
        f"{first.samples} draw(s) of each label: {measured}."
    ]


def _relative_sd(prompts: int) -> float:
    """The relative SD, in percent, of a standard error from ``prompts`` prompts: 1/√(2(k−1))."""
    return 100 / math.sqrt(2 * max(prompts - 1, 1))
