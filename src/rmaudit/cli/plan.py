"""``rmaudit plan RECIPE``: what each label design needs to reach a target interval width, read
from a fully labelled pilot in the DB (docs/budget.md, "Planning"), and what the recipe's LLM
judges under audit will spend (docs/judges.md, "Cost"); a recipe that labels nothing here plans
its judges' calls alone."""

from __future__ import annotations

import json
from collections.abc import Callable

import click
from rich.table import Table

from rmaudit.backends.openai_api import Price
from rmaudit.components import Component
from rmaudit.display.literal import literal
from rmaudit.errors import BadInput
from rmaudit.metrics.budget.planning import Option, loses
from rmaudit.recipe import Recipe, load_recipe
from rmaudit.results.plan_json import PLAN_JSON_VERSION, judge_calls_json, plan_json
from rmaudit.results.run_index import open_for_reading, open_if_stored
from rmaudit.run import build_components
from rmaudit.run.judge_plan import api_judges, planned_judge_calls, plans_labels
from rmaudit.run.label_plan import WIDTH_RATIOS, LabelNeeds, label_plan
from rmaudit.run.plan_costs import PriceFlags, parse_target, recipe_targets
from rmaudit.suites.judge_arguments import parse_judge_price

from .console import console
from .options import F, FiniteFloat, db_option
from .plan_judges import judge_notes, judge_table
from .plan_notes import notes


def _price_option(resource: str, one: str, otherwise: str) -> Callable[[F], F]:
    """``--RESOURCE-price``: one call's price as a fraction of an oracle call."""
    return click.option(
        f"--{resource}-price",
        type=FiniteFloat(min=0),
        help=f"Price of one {one}, as a fraction of an oracle call (default: the recipe's "
        f"[plan] {resource}_price, else {otherwise}).",
    )


@click.command(name="plan")
@click.argument("recipe_path", metavar="RECIPE", type=click.Path(dir_okay=False))
@db_option("The DB holding the pilot: the recipe's benchmark fully labelled on some prompts.")
@click.option(
    "--width",
    type=FiniteFloat(min=0, min_open=True),
    help="Target width of the 95% interval (value ± 1.96·stderr, both sides) of RETA(1/4) and "
    "BoN@16 of every RM, within "
    f"{WIDTH_RATIOS[0]:g}-{WIDTH_RATIOS[1]:g}× the width full labelling gives; default: that "
    "width at the recipe's k.",
)
@click.option(
    "--width-ratio",
    default=1.0,
    show_default=True,
    type=FiniteFloat(min=WIDTH_RATIOS[0], max=WIDTH_RATIOS[1]),
    help="Without --width: the target is this × the width full labelling gives.",
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="reta@ETA|bon@N|recipe",
    help="A metric the plan must reach the width on (repeatable; 'recipe': the recipe's RETA "
    "and best-of-n metrics; default: reta@0.25, and bon@16 where N ≥ 16). A best-of-n-only "
    "audit: --target bon@16.",
)
@_price_option("cheap", "cheap-judge call", "from the judges' cost models, else 1")
@_price_option("generation", "generated response", "0")
@_price_option("scoring", "RM scoring of a response", "0")
@click.option(
    "--judge-price",
    metavar="PROMPT,COMPLETION",
    help="USD per 1M prompt and completion tokens of the recipe's LLM judges under audit "
    "(default: each judge's price option).",
)
@click.option(
    "--all", "show_all", is_flag=True, help="Every budget and sample count, not the best."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the plan as JSON: every option, the prices, the recommendation, where the "
    "saving comes from and the noise shifts.",
)
def plan_command(
    recipe_path: str,
    db_path: str,
    width: float | None,
    width_ratio: float,
    targets: tuple[str, ...],
    cheap_price: float | None,
    generation_price: float | None,
    scoring_price: float | None,
    judge_price: str | None,
    show_all: bool,
    as_json: bool,
) -> None:
    """Plan the labels of RECIPE: what each label design spends to reach a target width."""
    recipe = load_recipe(recipe_path)
    chosen = tuple(
        dict.fromkeys(
            target
            for text in targets
            for target in (recipe_targets(recipe) if text == "recipe" else [parse_target(text)])
        )
    )
    components = build_components(recipe)
    price = None if judge_price is None else Price(**parse_judge_price(judge_price))
    if not plans_labels(recipe) and api_judges(recipe, components):
        _plan_judges_only(recipe, components, recipe_path, db_path, price, as_json)
        return
    store = open_for_reading(db_path)
    if store is None:
        raise BadInput("no such DB: run a pilot of the recipe first", file=db_path)
    flags = PriceFlags(cheap_price, generation_price, scoring_price, price)
    try:
        planned = label_plan(
            recipe,
            components,
            store,
            width=width,
            width_ratio=width_ratio,
            targets=chosen,
            flags=flags,
        )
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(plan_json(planned, recipe_path), indent=2, allow_nan=False))
        return
    out = console()
    out.print(_table(planned, show_all))
    for line in notes(planned, recipe):
        out.print(literal(line))
    if planned.judges:
        out.print(judge_table(planned.judges, db_path))
        for line in judge_notes(planned.judges):
            out.print(literal(line))


def _plan_judges_only(
    recipe: Recipe,
    components: dict[str, Component],
    recipe_path: str,
    db_path: str,
    price: Price | None,
    as_json: bool,
) -> None:
    """A recipe that labels no benchmark here (pairs, or a benchmark made elsewhere) plans
    its LLM judges' calls alone, against the DB if it exists (else all of them)."""
    store = open_if_stored(db_path)
    try:
        judges = planned_judge_calls(recipe, components, store, price=price)
    finally:
        if store is not None:
            store.close()
    if as_json:
        payload = {
            "version": PLAN_JSON_VERSION,
            "recipe": recipe_path,
            "judge_calls": judge_calls_json(judges),
        }
        click.echo(json.dumps(payload, indent=2, allow_nan=False))
        return
    out = console()
    out.print(judge_table(judges, db_path))
    for line in judge_notes(judges):
        out.print(literal(line))


def _label(option: Option, cheap: str | None) -> str:
    design = "full labelling" if option.design == "full" else f"{option.design} {option.budget:g}"
    if option.design == "full" and option.samples == 1:
        design += ", one sample"
    return design + (f" + cheap judge {cheap}" if option.cheap else "")


def _shown(planned: LabelNeeds, show_all: bool) -> list[Option]:
    """Per design (with or without the cheap judge): its cheapest option in total, and its
    cheapest at one judge sample per label."""

    def cost(option: Option) -> float:
        return planned.cost(option)

    if show_all:
        return sorted(planned.options, key=cost)
    shown: dict[tuple, Option] = {}
    for group in {(o.design, o.cheap) for o in planned.options}:
        members = [o for o in planned.options if (o.design, o.cheap) == group]
        for subset in (members, [o for o in members if o.samples == 1]):
            if subset:
                best = min(subset, key=lambda o: (not o.feasible, cost(o)))
                shown[(best.design, best.cheap, best.budget, best.samples)] = best
    return sorted(shown.values(), key=cost)


HEADERS = (
    "design",
    "samples/label",
    "prompts",
    "labels",
    "oracle calls",
    "cheap calls",
    "generations",
    "RM scorings",
    "cost",
    "USD",
    "width/target",
    "",
)


def _table(planned: LabelNeeds, show_all: bool) -> Table:
    table = Table(
        title=f"what each plan spends for the target widths (pilot {planned.pilot_id[:10]}: "
        f"{planned.pilot_prompts} prompts, {planned.pilot_samples} judge samples per label; "
        "cost in oracle calls)",
        title_justify="left",
    )
    priced = planned.usd_per_call is not None
    for header in HEADERS:
        if header != "USD" or priced:
            table.add_column(header, justify="left" if header in ("design", "") else "right")
    rows = [(option, False) for option in _shown(planned, show_all)]
    if planned.recipe is not None:
        rows.insert(0, (planned.recipe, True))
    for option, as_it_stands in rows:
        table.add_row(*_cells(planned, option, as_it_stands))
    return table


def _cells(planned: LabelNeeds, option: Option, as_it_stands: bool) -> list:
    cost = planned.cost(option)
    usd = [] if planned.usd_per_call is None else [f"{cost * planned.usd_per_call:,.2f}"]
    if as_it_stands:
        verdict = f"the recipe as it stands (k = {option.prompts:,})"
    elif not option.feasible:
        verdict = f"needs more prompts than the pool ({planned.pool:,})"
    elif option == planned.best:
        verdict = "recommended"
    else:
        prices = planned.prices.prices if planned.prices else None
        losing = prices is not None and loses(option, planned.options, prices)
        verdict = "loses to full labelling" if losing else ""
    label = _label(option, planned.cheap)
    return [
        literal("recipe: " + label if as_it_stands else label),
        str(option.samples),
        f"{option.prompts:,}",
        f"{option.labels:,.0f}",
        f"{option.calls:,.0f}",
        f"{option.cheap_calls:,.0f}",
        f"{option.generations:,.0f}",
        f"{option.scorings:,.0f}",
        f"{cost:,.0f}",
        *usd,
        f"{option.reaches:.2f}",
        verdict,
    ]
