"""Labelling on a budget, verified by running: the plan `rmaudit plan` recommends for
recipes/helpful.toml (benchmarks/recipes/helpful-budget.toml: 257 prompts, a uniform 37.5% of
the responses labelled once, a cheap judge beside the oracle) against the recipe's own full
labelling (100 prompts, every response labelled with 10 judge samples), at several draws of
the simulated world.

    python benchmarks/budget_savings.py [--seeds 0 1 2 3] [--budget RECIPE] [--smoke]

``--budget benchmarks/recipes/helpful-bon16.toml``: the plan for best-of-16 alone
(``rmaudit plan ... --target bon@16``), compared on BoN@16 alone.

Seed 0 is the two recipes as written; seed s > 0 redraws the prompts (the k-DPP's seed), the
responses (the policy's), the oracle's and the cheap judge's samples, and keeps the RMs.  For
each RM and seed it prints the budgeted run's stderr of RETA(1/4) and BoN@16 over full
labelling's: the plan targets a ratio of 1.  A stderr from 257 prompts is itself uncertain by
about ±4.4%, and one from 100 by ±7%, so single ratios scatter by about ±8%; the mean over
seeds is what the plan predicts.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np
from _smoke import parse_args

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout

from rmaudit.recipe import parse_recipe
from rmaudit.run import Runner
from rmaudit.store import Store

RECIPES = {
    "full": ROOT / "recipes" / "helpful.toml",
    "budget": ROOT / "benchmarks" / "recipes" / "helpful-budget.toml",
}
KEYS = {"reta@0.25": "RETA(1/4)", "bon@16": "BoN@16"}


def reseeded(raw: dict, seed: int, smoke: bool) -> dict:
    """The recipe at world seed ``seed`` (0: as written); at smoke size, a tiny world."""
    if seed:
        raw["prompts"]["sampler"]["seed"] = seed
        raw["responses"]["policy"]["seed"] = seed
        raw["oracle"]["seed"] = 100 + seed
        if "cheap_oracle" in raw:
            raw["cheap_oracle"]["seed"] = 200 + seed
    if smoke:
        raw["prompts"]["sampler"]["k"] = 8 if "cheap_oracle" in raw else 6
        raw["responses"]["per_prompt"] = 16
        raw["metrics"] = [{"name": "reta", "eta": 0.25}, {"name": "best-of-n", "report": [16]}]
    return raw


def stderrs(path: Path, seed: int, folder: Path, smoke: bool) -> tuple[dict, float, int]:
    """(RM label, metric key) → stderr of the recipe's run at ``seed``, its seconds, and the
    oracle calls it spent (its judge samples stored)."""
    raw = reseeded(tomllib.loads(path.read_text(encoding="utf-8")), seed, smoke)
    recipe = parse_recipe(raw, file=str(path), base_dir=path.parent)
    db = folder / f"{path.stem}-{seed}.db"
    store = Store.open(db)
    start = time.perf_counter()
    try:
        Runner(recipe, store).run()
    finally:
        store.close()
    seconds = time.perf_counter() - start
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            f"""select m.label, r.key, r.stderr from metric_results r join run_reward_models m
                on m.rm_key = r.rm_key and m.run_id = r.run_id
                where r.key in ({", ".join("?" * len(KEYS))})""",
            list(KEYS),
        ).fetchall()
        (calls,) = conn.execute(
            """select sum(json_array_length(l.samples)) from oracle_labels l
               join benchmarks b on b.oracle_key = l.oracle_key"""
        ).fetchone()
    return {(label, key): stderr for label, key, stderr in rows}, seconds, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--budget", type=Path, default=RECIPES["budget"], help="the plan's recipe")
    args = parse_args(parser, {"seeds": [0, 1]})
    ratios: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            full, full_s, full_calls = stderrs(RECIPES["full"], seed, Path(tmp), args.smoke)
            budget, budget_s, calls = stderrs(args.budget, seed, Path(tmp), args.smoke)
            print(
                f"seed {seed}: full labelling {full_s:.0f} s, {full_calls:,} oracle calls; "
                f"budgeted {budget_s:.0f} s, {calls:,} oracle calls "
                f"({full_calls / calls:.1f}× fewer)"
            )
            for key, value in full.items():
                if key in budget:  # the plan's own targets
                    ratios.setdefault(key, []).append(budget[key] / value)
    print()
    print("| RM | metric | " + " | ".join(f"seed {s}" for s in args.seeds) + " | mean |")
    print("|---|---|" + "---|" * (len(args.seeds) + 1))
    for (label, key), values in sorted(ratios.items(), key=lambda item: item[0][::-1]):
        cells = " | ".join(f"{v:.2f}" for v in values)
        print(f"| {label} | {KEYS[key]} | {cells} | {np.mean(values):.2f} |")


if __name__ == "__main__":
    main()
