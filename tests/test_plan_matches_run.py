"""The dry-run plan is the run's own count: for every recipe in recipes/, what ``plan()``
says each stage will do is what the run then does — checked against the rows each stage adds
to the database, not only against the counts the run reports.

Recipes that run offline run at a reduced size (fewer prompts and responses, the same stages
and components).  recipes/helpful-hf.toml and recipes/audit-imported.toml need a GPU, an API
key or hub models to run; their plans are checked offline on stand-in data files.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from _support import run_small_audit

from rmaudit.recipe import load_recipe
from rmaudit.run import Runner, StageCount
from rmaudit.store import Store

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "recipes"
#: how each recipe that runs offline is cut down (each replaced text must be in the recipe)
SMALLER = {
    "helpful.toml": [("k = 100", "k = 6"), ("per_prompt = 256", "per_prompt = 64")],
    "regret.toml": [("k = 120", "k = 10"), ("bootstrap = 200", "bootstrap = 20")],
    "rewardbench.toml": [],
    "shift.toml": [("k = 48", "k = 5"), ("per_prompt = 8", "per_prompt = 5")],
    "judges.toml": [("k = 48", "k = 6")],
}
PLAN_ONLY = {"helpful-hf.toml", "audit-imported.toml"}
#: recipes that read real files from ../shared beside the repository: run on stand-ins
STAND_IN = {"alpacaeval-bon16.toml"}


def test_every_recipe_is_checked_here():
    assert {p.name for p in RECIPES.glob("*.toml")} == set(SMALLER) | PLAN_ONLY | STAND_IN


def test_alpacaeval_bon16_plans_and_runs_on_stand_in_files(tmp_path):
    """The recipe as shipped, its root (../shared beside the clone) holding made-up files in
    reward-bench's layout: 3 prompts × 16 samples, 11 of them annotated."""
    folder = tmp_path / "shared" / "data" / "reward-bench-bon" / "alpaca_eval_n16"
    (folder / "annotations_ref_GPT35t").mkdir(parents=True)
    for k in range(16):
        outputs = [
            {
                "instruction": f"Q{q}",
                "output": "y" * (k + q + 1),
                "generator": f"allenai/tulu-2-dpo-13b.{k}",
            }
            for q in range(3)
        ]
        (folder / f"tulu-2-dpo-13b.{k}.json.gz").write_bytes(
            gzip.compress(json.dumps(outputs).encode())
        )
        if k <= 10:
            annotations = [
                {
                    "instruction": o["instruction"],
                    "output_2": o["output"],
                    "generator_2": o["generator"],
                    "preference": 1 + ((k * 5 + q) % 11) / 11,
                }
                for q, o in enumerate(outputs)
            ]
            (
                folder / "annotations_ref_GPT35t" / f"tulu-2-dpo-13b.{k}.weighted_alpaca_eval_"
                f"gpt4_turbo.annotations.json.gz"
            ).write_bytes(gzip.compress(json.dumps(annotations).encode()))
    recipe = copy_recipe("alpacaeval-bon16.toml", tmp_path / "clone", [])
    counts = check_plan_then_run(recipe, tmp_path / "audit.db")
    assert {c.stage: c.total for c in counts}["responses (imported)"] == 3 * 11


def copy_recipe(name: str, folder: Path, replacements: list[tuple[str, str]]) -> Path:
    """The recipe in ``folder/recipes`` (so ``../examples`` and ``../data`` resolve there)."""
    text = (RECIPES / name).read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, (name, old)
        text = text.replace(old, new)
    (folder / "recipes").mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "examples", folder / "examples", dirs_exist_ok=True)
    path = folder / "recipes" / name
    path.write_text(text, encoding="utf-8")
    return path


def stored_items(db: Path) -> Counter:
    """What each stage has stored: its rows (scores by RM key)."""
    if not db.exists():
        return Counter()
    conn = sqlite3.connect(db)
    try:
        found = Counter(
            {
                stage: conn.execute(sql).fetchone()[0]
                for stage, sql in (
                    ("prompts", "select count(*) from selections"),
                    ("prompts (imported)", "select count(*) from selections"),
                    ("responses (imported)", "select count(*) from oracle_labels"),
                    ("responses", "select count(*) from responses where policy_key is not null"),
                    ("oracle labels", "select count(*) from oracle_labels"),
                    ("pairs", "select count(*) from pair_sets"),
                    ("shifted pairs", "select count(*) from pairs where perturber_key is not null"),
                )
            }
        )
        found.update(dict(conn.execute("select rm_key, count(*) from rm_scores group by rm_key")))
        found.update(
            dict(conn.execute("select rm_key, count(*) from judge_verdicts group by rm_key"))
        )
        return found
    finally:
        conn.close()


def plan(recipe: Path, db: Path) -> list[StageCount]:
    store = Store.open_readonly(db)
    try:
        return Runner(load_recipe(recipe), store).plan()
    finally:
        if store is not None:
            store.close()


def run(recipe: Path, db: Path) -> tuple[list[StageCount], dict[str, str]]:
    """The run's counts, and its RMs' keys by ``scores: <label>`` stage."""
    store = Store.open(db)
    try:
        result = Runner(load_recipe(recipe), store).run()
        keys = {
            f"{stage}: {label}": key
            for label, key in store.read.reward_models(result.run_id)
            for stage in ("scores", "verdicts")  # a pairwise judge stores verdicts
        }
    finally:
        store.close()
    return result.counts, keys


def check_plan_then_run(recipe: Path, db: Path) -> list[StageCount]:
    """Plan, run, and compare stage by stage: exact counts must match; bounds must hold."""
    planned = plan(recipe, db)
    before = stored_items(db)
    done, rm_keys = run(recipe, db)
    after = stored_items(db)
    assert [c.stage for c in planned] == [c.stage for c in done]
    for p, d in zip(planned, done, strict=True):
        assert not d.at_most
        if p.at_most:  # counted before the benchmark it derives from was built
            assert d.total <= p.total and d.pending <= p.pending, (p, d)
        else:
            assert (p.total, p.stored, p.calls_per_item) == (d.total, d.stored, d.calls_per_item)
        table = rm_keys.get(d.stage, d.stage)
        assert after[table] - before[table] == d.pending, (d, after[table] - before[table])
    replanned = plan(recipe, db)
    assert [(c.stage, c.total, c.pending, c.at_most) for c in replanned] == [
        (c.stage, c.total, 0, False) for c in done
    ]
    return done


@pytest.mark.parametrize("name", sorted(SMALLER))
def test_the_plan_is_the_work_the_run_does(name, tmp_path):
    recipe = copy_recipe(name, tmp_path, SMALLER[name])
    done = check_plan_then_run(recipe, tmp_path / "audit.db")
    assert any(c.pending for c in done)
    if name == "shift.toml":
        assert {"pairs", "shifted pairs"} <= {c.stage for c in done}


def test_pairs_and_sweep_of_a_built_benchmark_are_planned_exactly(tmp_path):
    """A second pair source on the shift recipe's benchmark: the plan knows the benchmark's
    labels, so it counts the new pairs, their sweep and scores exactly, before the run."""
    db = tmp_path / "audit.db"
    check_plan_then_run(copy_recipe("shift.toml", tmp_path, SMALLER["shift.toml"]), db)
    other = copy_recipe(
        "shift.toml",
        tmp_path / "bins",
        SMALLER["shift.toml"] + [('mode = "ordered"', 'mode = "rank-bins"\nbins = 3')],
    )
    planned = plan(other, db)
    assert not any(c.at_most for c in planned)
    counts = {c.stage: c for c in planned}
    assert counts["oracle labels"].pending == 0 and counts["pairs"].pending > 0
    done = check_plan_then_run(other, db)
    assert {c.stage: c.pending for c in done}["shifted pairs"] > 0


def test_helpful_hf_plans_the_papers_benchmark_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    recipe = copy_recipe("helpful-hf.toml", tmp_path, [])
    hh = tmp_path / "data" / "hh-rlhf" / "helpful-base" / "test.jsonl.gz"
    hh.parent.mkdir(parents=True)
    with gzip.open(hh, "wt") as handle:
        for i in range(12):
            handle.write(
                json.dumps(
                    {
                        "chosen": f"\n\nHuman: Question {i}?\n\nAssistant: Yes.",
                        "rejected": f"\n\nHuman: Question {i}?\n\nAssistant: No.",
                    }
                )
                + "\n"
            )
    counts = {c.stage: c for c in plan(recipe, tmp_path / "none.db")}
    assert (counts["prompts"].total, counts["prompts"].pending) == (12, 12)  # k = 100 > the pool
    assert counts["responses"].pending == 12 * 256
    labels = counts["oracle labels"]
    assert (labels.pending, labels.calls_per_item) == (12 * 256, 1)  # one request, n = 10
    for label in ("Deberta-0.3B", "Pythia-1.4B", "Ziya-7B"):
        assert counts[f"scores: {label}"].pending == 12 * 256
    assert not any(c.at_most for c in counts.values())


def test_audit_imported_plans_the_import_and_scoring_offline(tmp_path, rmaudit, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    recipe = copy_recipe("audit-imported.toml", tmp_path, [])
    (tmp_path / "data").mkdir()
    source = run_small_audit(tmp_path)  # 8 prompts × 16 responses
    exported = rmaudit(
        "export", str(tmp_path / "data" / "helpful-benchmark.jsonl.gz"), "--db", str(source)
    )
    assert exported.code == 0, exported.err
    fresh = [(c.stage, c.total, c.pending) for c in plan(recipe, tmp_path / "new.db")]
    assert fresh == [
        ("prompts (imported)", 8, 8),
        ("responses (imported)", 128, 128),
        ("scores: Deberta-0.3B", 128, 128),
    ]
    # the DB it was exported from holds the benchmark itself: importing it back adds nothing
    again = [(c.stage, c.total, c.pending) for c in plan(recipe, source)]
    assert again == [
        ("prompts (imported)", 8, 0),
        ("responses (imported)", 128, 0),
        ("scores: Deberta-0.3B", 128, 128),
    ]
