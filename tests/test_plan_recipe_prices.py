"""The planner's per-call prices from the recipe's ``[plan]`` table (issue 35): the same plan as
the flags give, each flag overriding its recipe price, bad values one line with exit code 2,
and the run key of a recipe unchanged by the table."""

from __future__ import annotations

import pytest
from _support import SMALL_RECIPE
from test_plan_costs import CHEAP, table

from rmaudit.recipe import load_recipe

PRICES = "\n[plan]\ncheap_price = 0.5\ngeneration_price = 0.01\nscoring_price = 0.002\n"


def plan(rmaudit, recipe, db, *flags: str):
    planned = rmaudit("plan", str(recipe), "--db", str(db), "--all", *flags)
    assert planned.code == 0, planned.err
    return planned.out


def test_recipe_prices_plan_as_the_flags_do_and_a_flag_overrides_its_price(
    rmaudit, write_recipe, tmp_path
):
    base = SMALL_RECIPE.replace("{extra_rms}", "") + CHEAP
    db = tmp_path / "pilot.db"
    plain = write_recipe(base, name="plain.toml")
    assert rmaudit("run", str(plain), "--db", str(db)).code == 0
    priced = write_recipe(base + PRICES, name="priced.toml")
    by_flags = plan(
        rmaudit,
        plain,
        db,
        "--cheap-price=0.5",
        "--generation-price=0.01",
        "--scoring-price=0.002",
    )
    by_recipe = plan(rmaudit, priced, db)
    assert table(by_recipe) == table(by_flags)
    assert "cheap judge 0.5 ([plan] cheap_price)" in by_recipe
    assert "generation 0.01 ([plan] generation_price)" in by_recipe
    assert "cheap judge 0.5 (--cheap-price)" in by_flags
    overridden = plan(rmaudit, priced, db, "--cheap-price=0.001")
    assert "cheap judge 0.001 (--cheap-price)" in overridden
    assert "RM scoring 0.002 ([plan] scoring_price)" in overridden
    assert table(overridden) != table(by_recipe)  # the cheap judge's calls are priced anew
    # prices change no result: the same run
    assert load_recipe(priced).run_key == load_recipe(plain).run_key


@pytest.mark.parametrize(
    "line, field",
    [
        ("cheap_price = -0.1", "plan.cheap_price"),
        ("generation_price = nan", "plan.generation_price"),
        ("scoring_price = inf", "plan.scoring_price"),
        ("cheap_price = true", "plan.cheap_price"),
        ("cheap_prise = 0.1", "plan.cheap_prise"),
    ],
)
def test_a_bad_recipe_price_is_one_line_and_exit_code_2(
    rmaudit, write_recipe, tmp_path, line, field
):
    recipe = write_recipe(SMALL_RECIPE.replace("{extra_rms}", "") + f"\n[plan]\n{line}\n")
    db = tmp_path / "never.db"
    ran = rmaudit("run", str(recipe), "--db", str(db))
    assert ran.code == 2
    [message] = ran.err.strip().splitlines()
    assert f"recipe.toml: {field}:" in message
    assert not db.exists()
