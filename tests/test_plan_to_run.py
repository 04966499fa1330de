"""A run asks the store only about the items its plan did not find stored (items are never
deleted), unless the file it writes is not the one the plan read: then it asks again, and
makes whatever that file lacks."""

from __future__ import annotations

import textwrap
from pathlib import Path

from _support import SMALL_RECIPE, metric_rows

from rmaudit.recipe import load_recipe
from rmaudit.run import Runner
from rmaudit.store import Store
from rmaudit.store.items import Items


def small_recipe(folder: Path) -> Path:
    path = folder / "small.toml"
    path.write_text(textwrap.dedent(SMALL_RECIPE.replace("{extra_rms}", "")), encoding="utf-8")
    return path


def planned(recipe: Path, db: Path) -> Runner:
    """A runner planned on ``db`` opened read-only, as ``rmaudit run`` plans."""
    stored = Store.open_readonly(db)
    runner = Runner(load_recipe(recipe), stored)
    try:
        runner.preflight()
    finally:
        if stored is not None:
            stored.close()
    return runner


def run_on(runner: Runner, db: Path) -> list[tuple[str, int]]:
    """Run on ``db`` opened for writing: (stage, items made) of each stage."""
    store = Store.open(db)
    try:
        runner.attach(store)
        return [(count.stage, count.made) for count in runner.run().counts]
    finally:
        store.close()


def test_a_run_asks_only_about_what_its_plan_did_not_find(tmp_path, monkeypatch):
    recipe, db = small_recipe(tmp_path), tmp_path / "audit.db"
    run_on(planned(recipe, db), db)
    asked: list[int] = []
    scored = Items.scored

    def counted(items, rm_key, ids):
        asked.append(len(ids))
        return scored(items, rm_key, ids)

    monkeypatch.setattr(Items, "scored", counted)
    runner = planned(recipe, db)
    assert asked == [8 * 16, 8 * 16]  # the plan asks about every response, for each RM
    asked.clear()
    assert all(made == 0 for _, made in run_on(runner, db))
    assert asked == []


def test_a_file_made_anew_between_plan_and_run_is_asked_again(tmp_path):
    recipe, db = small_recipe(tmp_path), tmp_path / "audit.db"
    run_on(planned(recipe, db), db)
    first = metric_rows(db)
    runner = planned(recipe, db)  # finds everything stored …
    db.unlink()  # … then another process starts the file over (rmaudit run --fresh)
    Store.open(db).close()
    made = dict(run_on(runner, db))
    assert made["responses"] == 8 * 16 and made["scores: honest"] == 8 * 16
    assert metric_rows(db) == first
