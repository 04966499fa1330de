"""`rmaudit plan` prices every resource a plan spends (issue 35): oracle and cheap-judge calls,
generations and RM scorings, recommends by total cost, shows the recipe as it stands and full
labelling at one sample as rows, plans for the targets chosen, and says how pairwise accuracy
moves when the plan changes the judge samples per label (checked by brute force on the DB)."""

from __future__ import annotations

import json
import re
import sqlite3

import numpy as np
import pytest
from _support import SMALL_RECIPE

from rmaudit.components import Prompt
from rmaudit.default_plugins.llm_judge_oracle import LlmJudgeOracle
from rmaudit.errors import BadInput
from rmaudit.recipe.validation import validate_options
from rmaudit.run.plan_costs import PriceFlags, WidthTarget, parse_target, plan_prices


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch):
    """The plan's table parsed row by row: wide enough that no cell wraps (piped output fits
    100 columns, its own test's matter: tests/test_cli_output.py)."""
    monkeypatch.setenv("COLUMNS", "300")


N, RMS = 16, 2  # the small recipe's responses per prompt and reward models
CHEAP = '\n[cheap_oracle]\nname = "simulated-judge"\nsamples = 1\nnoise = 2.0\nseed = 7\n'


def table(out: str) -> list[dict[str, str]]:
    """The plan's rows by column name (a USD column only when the oracle has a price)."""
    names = (
        "design samples prompts labels calls cheap generations scorings cost usd width verdict"
    ).split()
    if "USD" not in next(line for line in out.splitlines() if line.startswith("┃")):
        names.remove("usd")
    rows = [line for line in out.splitlines() if line.startswith("│")]
    return [
        dict(zip(names, (cell.strip() for cell in row.split("│")[1:-1]), strict=True))
        for row in rows
    ]


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


@pytest.fixture
def pilot(rmaudit, write_recipe, tmp_path):
    def run(extra: str = "") -> tuple[str, str]:
        recipe = write_recipe(SMALL_RECIPE.replace("{extra_rms}", "") + extra)
        db = tmp_path / "pilot.db"
        ran = rmaudit("run", str(recipe), "--db", str(db))
        assert ran.code == 0, ran.err
        return str(recipe), str(db)

    return run


def test_every_resource_is_priced_and_the_cheapest_total_is_recommended(rmaudit, pilot):
    recipe, db = pilot(CHEAP)
    prices = {"cheap": 0.5, "generation": 0.01, "scoring": 0.002}
    planned = rmaudit(
        "plan",
        recipe,
        "--db",
        db,
        "--all",
        *(f"--{name}-price={value}" for name, value in prices.items()),
    )
    assert planned.code == 0, planned.err
    rows = table(planned.out)
    [as_it_stands] = [r for r in rows if r["design"].startswith("recipe: ")]
    assert as_it_stands["verdict"] == "the recipe as it stands (k = 8)"
    assert number(as_it_stands["calls"]) == 8 * N * 3 and number(as_it_stands["cheap"]) == 8 * N
    assert any(r["design"] == "full labelling, one sample" for r in rows)
    for row in rows:
        prompts = number(row["prompts"])
        assert number(row["generations"]) == prompts * N
        assert number(row["scorings"]) == prompts * N * RMS
        uses_cheap = "+ cheap judge" in row["design"] or row is as_it_stands
        assert number(row["cheap"]) == (prompts * N if uses_cheap else 0)
        total = (
            number(row["calls"])
            + prices["cheap"] * number(row["cheap"])
            + prices["generation"] * number(row["generations"])
            + prices["scoring"] * number(row["scorings"])
        )
        assert number(row["cost"]) == pytest.approx(total, abs=0.5)
    planned_rows = [r for r in rows if r is not as_it_stands and "needs more" not in r["verdict"]]
    [best] = [r for r in rows if r["verdict"] == "recommended"]
    assert number(best["cost"]) == min(number(r["cost"]) for r in planned_rows)
    assert "cheap judge 0.5 (--cheap-price)" in planned.out
    assert "where the saving comes from" in planned.out.replace("\n", " ")


@pytest.mark.parametrize("price", [0.0, 1.0])
def test_the_recommendation_follows_the_cheap_judges_price(rmaudit, pilot, price):
    recipe, db = pilot(CHEAP)
    planned = rmaudit("plan", recipe, "--db", db, "--all", f"--cheap-price={price}")
    assert planned.code == 0, planned.err
    rows = [r for r in table(planned.out) if not r["design"].startswith("recipe: ")]
    [best] = [r for r in rows if r["verdict"] == "recommended"]
    feasible = [r for r in rows if "needs more" not in r["verdict"]]
    assert number(best["cost"]) == min(number(r["cost"]) for r in feasible)
    if price == 1.0:  # a cheap call priced as an oracle call never pays for itself here
        assert "+ cheap judge" not in best["design"]


def test_a_best_of_n_only_plan_targets_best_of_n_alone(rmaudit, pilot):
    recipe, db = pilot()
    planned = rmaudit("plan", recipe, "--db", db, "--target", "bon@4")
    assert planned.code == 0, planned.err
    widths = re.search(r"target widths: (.*)", planned.out)[1]
    assert "BoN@4 of honest" in widths and "RETA" not in widths
    both = rmaudit("plan", recipe, "--db", db, "--target", "bon@4", "--target", "reta@0.25")
    assert "RETA(1/4) of honest" in both.out and "BoN@16" not in both.out
    for typo in ("bon@2.5", "bon@16 ", " bon@4"):
        bad = rmaudit("plan", recipe, "--db", db, "--target", typo)
        assert bad.code == 2 and len(bad.err.strip().splitlines()) == 1, (typo, bad.err)
        assert "--target" in bad.err and repr(typo) in bad.err


@pytest.mark.parametrize(
    "text",
    [
        "bon@16 ",
        "bon@ 16",
        "bon@1e1",
        "bon@16.0",
        "bon@0",
        "reta@0.25 ",
        "reta@1e-1",
        "reta@1",
        "reta@nan",
        "bon@inf",
        "Bon@16",
        "bon16",
        "",
    ],
)
def test_a_target_is_written_out_plainly_or_refused(text):
    with pytest.raises(BadInput, match="--target: expected reta@ETA"):
        parse_target(text)


def test_the_targets_written_out_plainly_are_read():
    assert parse_target("bon@16") == WidthTarget("bon", 16)
    assert parse_target("reta@0.25") == WidthTarget("reta", 0.25)
    assert parse_target("reta@.5") == WidthTarget("reta", 0.5)


def test_a_recipe_with_fewer_responses_than_best_of_16_plans_without_it(
    rmaudit, write_recipe, tmp_path
):
    """The default targets are RETA(1/4) and BoN@16; at N = 8 the plan drops BoN@16 instead of
    failing on a NaN, and asking for it is one line naming the option and the recipe's N."""
    recipe = write_recipe(
        SMALL_RECIPE.replace("{extra_rms}", "").replace("per_prompt = 16", "per_prompt = 8")
    )
    db = tmp_path / "pilot.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    planned = rmaudit("plan", str(recipe), "--db", str(db))
    assert planned.code == 0, planned.err
    widths = re.search(r"target widths: (.*)", planned.out)[1]
    assert "RETA(1/4) of honest" in widths and "BoN" not in widths
    before = db.read_bytes()
    asked = rmaudit("plan", str(recipe), "--db", str(db), "--target", "bon@16")
    assert asked.code == 2 and len(asked.err.strip().splitlines()) == 1
    assert "--target" in asked.err and "bon@16" in asked.err and "per_prompt is 8" in asked.err
    assert db.read_bytes() == before


def brute_pairwise(labels: list[np.ndarray], scores: list[np.ndarray]) -> float:
    """Pairwise accuracy by loops: per prompt, of the pairs the labels order, the share the
    RM orders the same way (a tie ½), averaged over prompts."""
    per_prompt = []
    for judged, scored in zip(labels, scores, strict=True):
        agree = comparable = 0.0
        for a in range(judged.size):
            for b in range(judged.size):
                if judged[a] > judged[b]:
                    comparable += 1
                    agree += 1.0 if scored[a] > scored[b] else 0.5 * (scored[a] == scored[b])
        per_prompt.append(agree / comparable)
    return float(np.mean(per_prompt))


def test_a_plan_at_fewer_samples_says_pairwise_accuracy_changes_with_the_measured_shift(
    rmaudit, pilot
):
    recipe, db = pilot()
    planned = rmaudit("plan", recipe, "--db", db)
    assert planned.code == 0, planned.err
    flat = planned.out.replace("\n", " ")
    samples = int(re.search(r"\[oracle\] samples = (\d+)", flat)[1])
    assert samples < 3  # the pilot's 3 samples per label cost more than they buy here
    line = re.search(r"changes meaning: pairwise-accuracy at (\d+) .*", flat)
    assert line and int(line[1]) == samples
    with sqlite3.connect(db) as connection:
        labels = connection.execute(
            "select r.prompt_id, r.sample_index, l.score, l.samples from oracle_labels l "
            "join responses r on r.id = l.response_id order by r.prompt_id, r.sample_index"
        ).fetchall()
        rm_keys = dict(connection.execute("select label, rm_key from run_reward_models"))
        scores = {
            rm: dict(
                connection.execute(
                    "select response_id, score from rm_scores where rm_key = ?", [key]
                )
            )
            for rm, key in rm_keys.items()
        }
        ids = connection.execute(
            "select r.prompt_id, r.id from oracle_labels l join responses r "
            "on r.id = l.response_id order by r.prompt_id, r.sample_index"
        ).fetchall()
    prompts = sorted({row[0] for row in labels})
    by_prompt = {p: [row for row in labels if row[0] == p] for p in prompts}
    full = [np.array([row[2] for row in by_prompt[p]]) for p in prompts]
    fewer = [
        np.array([np.mean(json.loads(row[3])[:samples]) for row in by_prompt[p]]) for p in prompts
    ]
    for rm in rm_keys:
        rm_scores = [np.array([scores[rm][i] for q, i in ids if q == p]) for p in prompts]
        before, after = brute_pairwise(full, rm_scores), brute_pairwise(fewer, rm_scores)
        shown = re.search(rf"{rm} ([\d.]+) → ([\d.]+) \(([-+][\d.]+),", line[0])
        assert shown, (rm, line[0])
        assert float(shown[1]) == pytest.approx(before, abs=6e-4)
        assert float(shown[2]) == pytest.approx(after, abs=6e-4)
        assert float(shown[3]) == pytest.approx(after - before, abs=1.1e-3)


@pytest.mark.parametrize(
    ("oracle_lines", "flagged"),
    [("budget = 0.5", True), ("", False)],
    ids=["budgeted", "fully-labelled"],
)
def test_a_budgeted_run_says_pairwise_accuracys_estimand_depends_on_its_samples(
    rmaudit, write_recipe, tmp_path, oracle_lines, flagged
):
    from test_label_budget import budgeted

    db = tmp_path / "audit.db"
    ran = rmaudit("run", str(write_recipe(budgeted(oracle_lines))), "--db", str(db))
    assert ran.code == 0, ran.err
    said = "pairwise-accuracy here is agreement with labels of 1 judge sample(s) each"
    assert (said in (ran.out + ran.err).replace("\n", " ")) == flagged
    found = json.loads(rmaudit("runs", "--db", str(db), "--json").out)["runs"][0]
    if flagged:
        noise = found["noise_dependent"]
        assert noise["metrics"] == ["pairwise-accuracy"] and noise["samples_per_label"] == 1
    else:
        assert found["noise_dependent"] is None


def test_the_recipes_own_metrics_can_be_the_targets(rmaudit, pilot):
    recipe, db = pilot()  # the small recipe: reta at η = 0.25, best-of-n reporting n = 4
    planned = rmaudit("plan", recipe, "--db", db, "--target", "recipe")
    assert planned.code == 0, planned.err
    widths = re.search(r"target widths: (.*)", planned.out)[1]
    named = set(re.findall(r"(RETA\([\d./]+\)|BoN@\d+) of honest", widths))
    assert named == {"RETA(1/4)", "BoN@4"}


def test_a_plan_names_reta_as_the_summary_does_and_says_why_it_has_no_usd(rmaudit, pilot):
    recipe, db = pilot()
    planned = rmaudit("plan", recipe, "--db", db, "--target", "reta@0.25", "--target", "reta@0.3")
    assert planned.code == 0, planned.err
    widths = re.search(r"target widths: (.*)", planned.out)[1]
    assert "RETA(1/4) of honest" in widths and "RETA(0.3) of honest" in widths
    assert "RETA(0.25)" not in planned.out
    # the simulated judge has no price: no column of dashes, but a line saying why
    header = next(line for line in planned.out.splitlines() if line.startswith("┃"))
    assert "USD" not in header and "—" not in planned.out
    assert "no USD column: the oracle simulated-judge has no cost model in USD" in " ".join(
        planned.out.split()
    )


def llm_judge(**options) -> LlmJudgeOracle:
    raw = {"base_url": "http://127.0.0.1:9/v1", "model": "judge-1", **options}
    return LlmJudgeOracle(
        validate_options(LlmJudgeOracle, raw, field="oracle", file=None, base_dir=None)
    )


def test_a_priced_judge_gives_the_plan_its_usd_from_the_prompts_lengths():
    prompts = [Prompt(t[0], t, {"reference": "r"}) for t in ("x" * 400, "y" * 4000)]
    oracle = llm_judge(samples=3, price={"prompt": 10.0, "completion": 30.0})
    cheap = llm_judge(price={"prompt": 0.1, "completion": 0.3})
    priced = plan_prices(oracle, cheap, PriceFlags(), prompts)
    per_call = oracle.estimate_cost(prompts, 1000) / 1000 / oracle.calls_per_label()
    assert priced.usd_per_call == pytest.approx(per_call) and per_call > 0
    assert priced.prices.cheap == pytest.approx(cheap.estimate_cost(prompts, 1) / per_call)
    assert priced.sources["cheap"] == "the judges' cost models" and priced.no_usd == ""
    unpriced = plan_prices(llm_judge(), None, PriceFlags(), prompts)
    assert unpriced.usd_per_call is None
    assert "the oracle llm-judge has no price" in unpriced.no_usd
