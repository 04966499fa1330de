"""Label budgets end to end (docs/budget.md): a recipe's [oracle] budget labels a designed subset
with stored inclusion probabilities, a top-up keeps every stored label, an export carries the
probabilities to another DB, a cheap judge corrects the estimates, `rmaudit plan` reads a pilot,
and every bad budget is one line with exit code 2 and nothing written."""

from __future__ import annotations

import json
import re
import sqlite3

import numpy as np
import pytest
from _support import SMALL_RECIPE

from rmaudit.run.design_inputs import design_notes
from rmaudit.store.records import BenchmarkRow


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch):
    """The plan's table parsed row by row: wide enough that no cell wraps (piped output fits
    100 columns, its own test's matter: tests/test_cli_output.py)."""
    monkeypatch.setenv("COLUMNS", "300")


K, N = 8, 16  # the small recipe's k prompts and N responses per prompt


def budgeted(oracle_lines: str, extra: str = "", rms: str = "") -> str:
    recipe = SMALL_RECIPE.replace("{extra_rms}", rms).replace(
        'name = "simulated-judge"\nsamples = 3\n',
        f'name = "simulated-judge"\nsamples = 1\n{oracle_lines}\n',
    )
    assert oracle_lines in recipe
    return recipe + extra


def labelled_ids(db) -> set[str]:
    with sqlite3.connect(db) as connection:
        return {row[0] for row in connection.execute("select response_id from oracle_labels")}


def inclusion(db) -> dict[str, dict[str, float]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("select benchmark_id, response_id, probability from inclusion")
        found: dict[str, dict[str, float]] = {}
        for benchmark, response, probability in rows:
            found.setdefault(benchmark, {})[response] = probability
        return found


def results(rmaudit, db) -> dict:
    result = rmaudit("runs", "--db", str(db), "--json")
    assert result.code == 0, result.err
    runs = json.loads(result.out)["runs"]
    return runs[0]


@pytest.mark.parametrize("design", ["uniform", "rm-guided"])
def test_a_budget_labels_a_designed_subset_and_a_top_up_keeps_it(
    rmaudit, write_recipe, tmp_path, design
):
    guide = '\ndesign = "rm-guided"\nguide = ["honest"]' if design == "rm-guided" else ""
    db = tmp_path / "audit.db"
    quarter = write_recipe(budgeted(f"budget = 0.25{guide}"), name="quarter.toml")
    ran = rmaudit("run", str(quarter), "--db", str(db))
    assert ran.code == 0
    # 4 labels per prompt: the run says what they do not cover
    assert "top picks mostly unlabelled" in ran.out + ran.err
    few_guided = "pairwise accuracy keeps a ratio bias" in ran.out + ran.err
    assert few_guided == (design == "rm-guided")
    first = labelled_ids(db)
    (probabilities,) = inclusion(db).values()
    assert len(probabilities) == K * N
    if design == "uniform":
        assert len(first) == K * N // 4 and set(probabilities.values()) == {0.25}
    else:
        assert sum(probabilities.values()) == pytest.approx(K * N / 4)
        assert 0 < min(probabilities.values()) < max(probabilities.values()) <= 1
    found = results(rmaudit, db)
    assert found["labelling"]["labelled"] == len(first)
    assert found["labelling"]["design"] == design
    assert {m["metric"] for m in found["metrics"]} >= {"reta", "best-of-n", "pairwise-accuracy"}

    half = write_recipe(budgeted(f"budget = 0.5{guide}"), name="half.toml")
    topped = rmaudit("run", str(half), "--db", str(db))
    assert topped.code == 0, topped.err
    second = labelled_ids(db)
    assert first < second  # every earlier label kept, and more added
    assert f"{len(second) - len(first):,} oracle labels" in topped.err + topped.out
    larger = next(p for p in inclusion(db).values() if p != probabilities)
    assert all(larger[rid] >= probabilities[rid] - 1e-12 for rid in probabilities)


def test_full_labelling_stores_no_design(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(write_recipe()), "--db", str(db)).code == 0
    assert inclusion(db) == {}
    assert results(rmaudit, db)["labelling"] is None
    with sqlite3.connect(db) as connection:
        assert connection.execute("select design from benchmarks").fetchall() == [(None,)]


def test_labels_stored_for_another_benchmark_are_not_the_designs(rmaudit, write_recipe, tmp_path):
    """Full labelling by the same oracle in the same DB labels every response: a rerun of the
    budgeted recipe still counts and weighs only the responses its design drew."""
    db = tmp_path / "audit.db"
    quarter = write_recipe(budgeted("budget = 0.25"), name="quarter.toml")
    assert rmaudit("run", str(quarter), "--db", str(db)).code == 0
    first = results(rmaudit, db)
    everything = write_recipe(budgeted(""), name="everything.toml")
    assert rmaudit("run", str(everything), "--db", str(db)).code == 0
    assert len(labelled_ids(db)) == K * N
    assert rmaudit("run", str(quarter), "--db", str(db)).code == 0
    again = next(
        run
        for run in json.loads(rmaudit("runs", "--db", str(db), "--json").out)["runs"]
        if run["id"] == first["id"]
    )
    assert again["labelling"]["labelled"] == first["labelling"]["labelled"] == K * N // 4
    before = {(m["rm"], m["key"]): m["value"] for m in first["metrics"]}
    after = {(m["rm"], m["key"]): m["value"] for m in again["metrics"]}
    assert after == pytest.approx(before, abs=1e-12)


def test_an_export_keeps_the_probabilities_and_gives_the_same_numbers(
    rmaudit, write_recipe, tmp_path
):
    db = tmp_path / "audit.db"
    recipe = write_recipe(budgeted('budget = 0.25\ndesign = "rm-guided"\nguide = ["honest"]'))
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    exported = tmp_path / "bench.jsonl"
    assert rmaudit("export", str(exported), "--db", str(db)).code == 0
    again = rmaudit("import", str(exported), "--db", str(db))
    assert again.code == 0 and "nothing new" in again.out  # its own DB already holds it
    other = tmp_path / "other.db"
    assert rmaudit("import", str(exported), "--db", str(other)).code == 0
    (original,), (imported,) = inclusion(db).values(), inclusion(other).values()
    assert sorted(original.values()) == sorted(imported.values())
    reaudit = write_recipe(
        f'[benchmark]\nfile = "{exported}"\n'
        + SMALL_RECIPE.replace("{extra_rms}", "")
        .split("[[reward_models]]", 1)[1]
        .join(["[[reward_models]]", ""]),
        name="reaudit.toml",
    )
    assert rmaudit("run", str(reaudit), "--db", str(other)).code == 0
    before = {(m["rm"], m["key"]): m["value"] for m in results(rmaudit, db)["metrics"]}
    after = {(m["rm"], m["key"]): m["value"] for m in results(rmaudit, other)["metrics"]}
    for key in (("honest", "reta@0.25"), ("length", "bon@4"), ("honest", "pairwise_accuracy")):
        assert after[key] == pytest.approx(before[key], abs=1e-12)


def test_a_cheap_judge_corrects_the_estimates(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    plain = write_recipe(budgeted("budget = 0.25"), name="plain.toml")
    cheap = write_recipe(
        budgeted(
            "budget = 0.25", '\n[cheap_oracle]\nname = "simulated-judge"\nnoise = 2.0\nseed = 7\n'
        ),
        name="cheap.toml",
    )
    assert rmaudit("run", str(plain), "--db", str(db)).code == 0
    result = rmaudit("run", str(cheap), "--db", str(db))
    assert result.code == 0, result.err
    assert f"{K * N:,} cheap labels" in result.err + result.out
    found = results(rmaudit, db)
    assert found["labelling"]["cheap_judge"] == "simulated-judge"
    with sqlite3.connect(db) as connection:
        runs = connection.execute("select count(*) from runs").fetchone()[0]
    assert runs == 2


def test_plan_reads_a_pilot_and_never_recommends_a_losing_design(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "pilot.db"
    pilot = write_recipe()
    missing = rmaudit("plan", str(pilot), "--db", str(db))
    assert missing.code == 2 and len(missing.err.strip().splitlines()) == 1
    assert rmaudit("run", str(pilot), "--db", str(db)).code == 0
    planned = rmaudit("plan", str(pilot), "--db", str(db), "--all")
    assert planned.code == 0, planned.err
    rows = [line for line in planned.out.splitlines() if line.startswith("│")]
    [as_it_stands] = [row for row in rows if "the recipe as it stands" in row]
    rows.remove(as_it_stands)
    recommended = [row for row in rows if "recommended" in row]
    assert len(recommended) == 1
    costs = [int(row.split("│")[9].strip().replace(",", "")) for row in rows]
    assert int(recommended[0].split("│")[9].strip().replace(",", "")) == min(
        c for c, row in zip(costs, rows, strict=True) if "needs more prompts" not in row
    )
    assert "recommended:" in planned.out
    floor = re.search(r"fewer than ([\d,]+) one-sample labels", planned.out.replace("\n", " "))
    one_sample = [
        int(row.split("│")[4].strip().replace(",", ""))
        for row in rows
        if row.split("│")[2].strip() == "1"
    ]
    assert floor and 0 < int(floor.group(1).replace(",", "")) <= min(one_sample)
    # how far one run's ± may land from its plan: a standard error's own relative SD
    flat = planned.out.replace("\n", " ")
    k = int(re.search(r"\[prompts.sampler\] k = (\d+)", flat).group(1))
    scatter = re.search(
        r"one from ([\d,]+) prompts by about ±([\d.]+)%.*from (\d+) by ±([\d.]+)%", flat
    )
    assert scatter and int(scatter.group(1).replace(",", "")) == k and int(scatter.group(3)) == K
    assert float(scatter.group(2)) == pytest.approx(100 / np.sqrt(2 * (k - 1)), abs=0.05)
    assert float(scatter.group(4)) == pytest.approx(100 / np.sqrt(2 * (K - 1)), abs=0.05)


def test_plan_says_when_its_k_needs_more_embedding_dimensions(rmaudit, write_recipe, tmp_path):
    """A k-DPP needs k dimensions: a plan whose k exceeds the embedder's says what to raise."""
    db = tmp_path / "pilot.db"
    kdpp = SMALL_RECIPE.replace("{extra_rms}", "").replace(
        'name = "random"\nk = 8',
        'name = "kdpp"\nk = 8\n[prompts.embedder]\nname = "tfidf-lsa"\ndims = 8',
    )
    pilot = write_recipe(kdpp)
    assert rmaudit("run", str(pilot), "--db", str(db)).code == 0
    planned = rmaudit("plan", str(pilot), "--db", str(db))
    assert planned.code == 0, planned.err
    text = planned.out.replace("\n", " ")
    k = int(re.search(r"\[prompts.sampler\] k = (\d+)", text).group(1))
    assert k > 8  # the pilot's k gives full labelling's width; one sample per label needs more
    assert f"[prompts.embedder] dims = {k} (a k-DPP needs k)" in text


@pytest.mark.parametrize(
    ("lines", "field"),
    [
        ("budget = 0", "oracle.budget"),
        ("budget = 1.5", "oracle.budget"),
        ("budget = nan", "oracle.budget"),
        ("budget = true", "oracle.budget"),
        (f"labels_per_prompt = {N + 1}", "oracle.labels_per_prompt"),
        ("labels_per_prompt = 4\nbudget = 0.25", "oracle.budget"),
        ('budget = 0.25\ndesign = "rm-guidet"', "oracle.design"),
        ('budget = 0.25\ndesign = "rm-guided"', "oracle.guide"),
        ('budget = 0.25\ndesign = "rm-guided"\nguide = ["honnest"]', "oracle.guide"),
        ('budget = 0.25\nguide = ["honest"]', "oracle.guide"),
        ("design_seed = -1\nbudget = 0.5", "oracle.design_seed"),
    ],
)
def test_a_bad_budget_is_one_line_naming_the_field(rmaudit, write_recipe, tmp_path, lines, field):
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(write_recipe(budgeted(lines))), "--db", str(db))
    assert result.code == 2, result.err
    assert len(result.err.strip().splitlines()) == 1 and field in result.err
    assert not db.exists()


def test_a_metric_without_a_budget_estimator_is_refused(rmaudit, write_recipe, tmp_path):
    recipe = budgeted("budget = 0.5", '\n[[metrics]]\nname = "best-k-of-n"\nn = 4\nk = 2\n')
    result = rmaudit("run", str(write_recipe(recipe)), "--db", str(tmp_path / "a.db"))
    assert result.code == 2 and "needs every response labelled" in result.err


def test_undefined_prompts_of_a_tiny_budget_are_skipped_and_counted(
    rmaudit, write_recipe, tmp_path
):
    """Two labels per prompt: some prompts have equal labels (pairwise accuracy undefined there);
    the audit completes and says how many it skipped."""
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(write_recipe(budgeted("labels_per_prompt = 2"))), "--db", str(db))
    assert result.code == 0, result.err
    values = {m["key"]: m["value"] for m in results(rmaudit, db)["metrics"] if m["rm"] == "honest"}
    assert np.isfinite(values["reta@0.25"]) and np.isfinite(values["pairwise_accuracy"])


RATING_JUDGE = (
    '\n[[reward_models]]\nlabel = "rating judge"\nname = "sim-judge-rating"\nnoise = 1.5\n'
)


def test_an_audited_rating_judge_is_the_cheap_judge(rmaudit, write_recipe, tmp_path):
    """A judge audited on the fully labelled pilot (its correlation with the oracle's labels)
    is the budgeted run's cheap judge by its label: its stored scores are read, not redone."""
    db = tmp_path / "audit.db"
    pilot = SMALL_RECIPE.replace("{extra_rms}", RATING_JUDGE) + (
        '\n[[metrics]]\nname = "oracle-correlation"\n'
    )
    assert rmaudit("run", str(write_recipe(pilot, name="pilot.toml")), "--db", str(db)).code == 0
    with sqlite3.connect(db) as connection:
        (correlation, low, high), *others = connection.execute(
            "select m.value, m.ci_low, m.ci_high from metric_results m join run_reward_models r"
            " on r.rm_key = m.rm_key and r.run_id = m.run_id where m.key = 'oracle_correlation'"
            " order by r.label = 'rating judge' desc"
        ).fetchall()
        scored = connection.execute("select count(*) from rm_scores").fetchone()[0]
    assert len(others) == 2 and 0.3 < low < correlation < high < 1
    cheap = '\n[cheap_oracle]\nreward_model = "rating judge"\n'
    recipe = budgeted("budget = 0.25", cheap, rms=RATING_JUDGE)
    result = rmaudit("run", str(write_recipe(recipe, name="cheap.toml")), "--db", str(db))
    assert result.code == 0, result.err
    assert results(rmaudit, db)["labelling"]["cheap_judge"] == "RM rating judge"
    with sqlite3.connect(db) as connection:
        assert connection.execute("select count(*) from rm_scores").fetchone()[0] == scored


def test_a_pairwise_judge_is_no_cheap_judge(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    recipe = budgeted(
        "budget = 0.25",
        '\n[cheap_oracle]\nreward_model = "pair judge"\n',
        rms='\n[[reward_models]]\nlabel = "pair judge"\nname = "sim-judge-fair"\n',
    )
    result = rmaudit("run", str(write_recipe(recipe)), "--db", str(db))
    assert result.code == 2, result.err
    assert len(result.err.strip().splitlines()) == 1
    assert "cheap_oracle.reward_model" in result.err and 'mode = "rating"' in result.err
    assert not db.exists()


@pytest.mark.parametrize("prompts", [99, 100, 257])
def test_the_under_cover_note_only_comes_under_100_prompts(prompts):
    """Each RM's favourite response is the one left unlabelled: the note fires on the share,
    and only where too few prompts leave its ± at risk (docs/budget.md)."""
    scores = tuple(np.arange(N, dtype=float) for _ in range(prompts))
    oracle = tuple(np.where(np.arange(N) < N - 1, 1.0, np.nan) for _ in range(prompts))
    benchmark = BenchmarkRow("b", "t", "s", "p", N, "o", True, "built", "2026-01-01")
    notes = design_notes(benchmark, oracle, {"honest": scores})
    if prompts < 100:
        [note] = notes
        assert "honest 0%" in note and f"({prompts} here)" in note and "under-cover" in note
    else:
        assert notes == []
