"""``rmaudit plan RECIPE``: what each label design needs to reach a target interval width, read
from a fully labelled pilot in the DB (docs/budget.md, "Planning")."""

from __future__ import annotations

import math

import click
from rich.table import Table

from rmaudit.display.literal import literal
from rmaudit.errors import BadInput
from rmaudit.metrics.budget.planning import Option, loses, recommend
from rmaudit.recipe import load_recipe
from rmaudit.results.run_index import open_for_reading
from rmaudit.run import build_components
from rmaudit.run.label_plan import LabelPlan, label_plan

from .console import console
from .options import db_option


@click.command(name="plan")
@click.argument("recipe_path", metavar="RECIPE", type=click.Path(dir_okay=False))
@db_option("The DB holding the pilot: the recipe's benchmark fully labelled on some prompts.")
@click.option(
    "--width",
    type=click.FloatRange(min=0, min_open=True),
    help="Target width of the 95% interval (value ± 1.96·stderr, both sides) of RETA(1/4) and "
    "BoN@16 of every RM; default: the width full labelling gives at the recipe's k.",
)
@click.option(
    "--width-ratio",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Without --width: the target is this × the width full labelling gives.",
)
@click.option(
    "--all", "show_all", is_flag=True, help="Every budget and sample count, not the best."
)
def plan_command(
    recipe_path: str, db_path: str, width: float | None, width_ratio: float, show_all: bool
) -> None:
    """Plan the labels of RECIPE: judge calls per label design for a target interval width."""
    recipe = load_recipe(recipe_path)
    components = build_components(recipe)
    store = open_for_reading(db_path)
    if store is None:
        raise BadInput("no such DB: run a pilot of the recipe first", file=db_path)
    try:
        planned = label_plan(recipe, components, store, width=width, width_ratio=width_ratio)
    finally:
        store.close()
    out = console()
    out.print(_table(planned, show_all))
    for line in _notes(planned, recipe):
        out.print(literal(line))


def _label(option: Option, cheap: str | None) -> str:
    if option.design == "full":
        return "full labelling"
    return f"{option.design} {option.budget:g}" + (
        f" + cheap judge {cheap}" if option.cheap else ""
    )


def _shown(options: list[Option], show_all: bool) -> list[Option]:
    """Per design (with or without the cheap judge): its cheapest option, and its cheapest at
    one judge sample per label."""
    if show_all:
        return sorted(options, key=lambda o: o.calls)
    shown: dict[tuple, Option] = {}
    for group in {(o.design, o.cheap) for o in options}:
        members = [o for o in options if (o.design, o.cheap) == group]
        for subset in (members, [o for o in members if o.samples == 1]):
            if subset:
                best = min(subset, key=lambda o: (not o.feasible, o.calls))
                shown[(best.design, best.cheap, best.budget, best.samples)] = best
    return sorted(shown.values(), key=lambda o: o.calls)


def _table(planned: LabelPlan, show_all: bool) -> Table:
    best = recommend(planned.options)
    table = Table(
        title=f"labels for the target width (pilot {planned.pilot_id[:10]}: "
        f"{planned.pilot_prompts} prompts, {planned.pilot_samples} judge samples per label)",
        title_justify="left",
    )
    for header in ("design", "samples/label", "prompts", "labels", "judge calls", "USD", ""):
        table.add_column(header, justify="left" if header in ("design", "") else "right")
    for option in _shown(planned.options, show_all):
        usd = "—" if planned.usd_per_call is None else f"{option.calls * planned.usd_per_call:,.2f}"
        if not option.feasible:
            verdict = f"needs more prompts than the pool ({planned.pool:,})"
        elif option == best:
            verdict = "recommended"
        else:
            verdict = "loses to full labelling" if loses(option, planned.options) else ""
        table.add_row(
            literal(_label(option, planned.cheap)),
            str(option.samples),
            f"{option.prompts:,}",
            f"{option.labels:,.0f}",
            f"{option.calls:,.0f}",
            usd,
            verdict,
        )
    return table


def _notes(planned: LabelPlan, recipe) -> list[str]:
    best = recommend(planned.options)
    targets = ", ".join(
        f"{target} of {rm}: {value:.4f}" for (target, rm), value in sorted(planned.widths.items())
    )
    lines = [f"target widths: {targets}"]
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
    lines.append("recommended: " + "; ".join(settings))
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
        "checks it against simulation); a design needing more judge calls than full labelling "
        "is never recommended."
    )
    return lines


def _relative_sd(prompts: int) -> float:
    """The relative SD, in percent, of a standard error from ``prompts`` prompts: 1/√(2(k−1))."""
    return 100 / math.sqrt(2 * max(prompts - 1, 1))
