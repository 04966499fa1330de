"""``rmaudit plan --json`` (issue 35): the plan as data, every option with what it spends and
its total recomputed here from the prices, the same rows as the table, the recipe as it stands,
the recommendation, the saving step by step and the measured noise shifts."""

from __future__ import annotations

import json

import pytest
from _support import SMALL_RECIPE
from test_label_budget import results
from test_plan_costs import CHEAP, number, table


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch):
    """The plan's table parsed row by row: wide enough that no cell wraps (piped output fits
    100 columns, its own test's matter: tests/test_cli_output.py)."""
    monkeypatch.setenv("COLUMNS", "300")


PRICES = {"cheap": 0.5, "generation": 0.01, "scoring": 0.002}
RESOURCES = {"cheap": "cheap_calls", "generation": "generations", "scoring": "rm_scorings"}


def test_the_plan_as_json_agrees_with_its_table_and_its_prices(rmaudit, write_recipe, tmp_path):
    recipe = str(write_recipe(SMALL_RECIPE.replace("{extra_rms}", "") + CHEAP))
    db = str(tmp_path / "pilot.db")
    assert rmaudit("run", recipe, "--db", db).code == 0
    flags = [f"--{name}-price={value}" for name, value in PRICES.items()]
    shown = rmaudit("plan", recipe, "--db", db, "--all", *flags)
    ran = rmaudit("plan", recipe, "--db", db, "--json", *flags)
    assert shown.code == 0 and ran.code == 0, ran.err
    plan = json.loads(ran.out)
    assert plan["version"] == 2 and plan["recipe"] == recipe
    assert plan["pilot"]["prompts"] == 8 and plan["pilot"]["samples_per_label"] == 3
    assert [t["name"] for t in plan["targets"]] == ["RETA(1/4)", "BoN@16"]
    assert {w["rm"] for w in plan["target_widths"]} == {"honest", "length"}
    assert plan["prices"]["sources"]["cheap"] == "--cheap-price"
    for name, value in PRICES.items():
        assert plan["prices"][name] == value
    options = plan["options"]
    for option in [*options, plan["as_it_stands"]]:
        total = option["oracle_calls"] + sum(
            PRICES[name] * option[resource] for name, resource in RESOURCES.items()
        )
        assert option["cost"] == pytest.approx(total, rel=1e-12)
    assert [o["cost"] for o in options] == sorted(o["cost"] for o in options)
    # the same options as the table's --all rows, in the same order
    rows = [r for r in table(shown.out) if not r["design"].startswith("recipe: ")]
    assert len(rows) == len(options)
    for row, option in zip(rows, options, strict=True):
        assert number(row["prompts"]) == option["prompts"]
        assert number(row["calls"]) == pytest.approx(option["oracle_calls"], abs=0.5)
        assert number(row["cost"]) == pytest.approx(option["cost"], abs=0.5)
    [best] = [r for r in table(shown.out) if r["verdict"] == "recommended"]
    recommended = plan["recommended"]
    assert number(best["cost"]) == pytest.approx(recommended["cost"], abs=0.5)
    feasible = [o["cost"] for o in options if o["feasible"] and not o["loses_to_full_labelling"]]
    assert recommended["cost"] == min(feasible)
    stands = plan["as_it_stands"]
    assert (stands["design"], stands["samples_per_label"], stands["prompts"]) == ("full", 3, 8)
    steps = plan["savings"]
    assert steps[0]["cost"] == stands["cost"] and steps[-1]["cost"] == recommended["cost"]
    for before, after in zip(steps, steps[1:], strict=False):
        assert after["fewer_than_before"] == pytest.approx(before["cost"] / after["cost"])
    # at one sample per label (the pilot's: 3) pairwise accuracy moves; at the pilot's samples
    # it is the value the pilot run stored
    assert recommended["samples_per_label"] == 1
    stored = {
        m["rm"]: m["value"]
        for m in results(rmaudit, db)["metrics"]
        if m["metric"] == "pairwise-accuracy"
    }
    shifts = plan["noise_shifts"]
    assert {s["rm"] for s in shifts} == set(stored) == {"honest", "length"}
    for shift in shifts:
        assert (shift["metric"], shift["samples_per_label"]) == ("pairwise-accuracy", 1)
        assert shift["at_pilot"] == pytest.approx(stored[shift["rm"]], rel=1e-12)
        assert shift["shift"] == pytest.approx(shift["at_samples"] - shift["at_pilot"])
