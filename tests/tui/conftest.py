"""A small real audit DB for the TUI tests, made once by running the small recipe."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from _support import PAIR_RECIPE, run_small_audit

#: what the DB says instead of the wall-clock time, the tmp path of the recipe and the run id
#: (a hash of the validated recipe, which changes whenever the recipe schema gains a field),
#: so that screenshots are the same on every run
FIXED_CREATED_AT = "2025-01-01T12:00:00+00:00"
FIXED_RECIPE_PATH = "recipes/small.toml"
FIXED_RUN_ID = "5ma11a0d17000000000a"
RUN_TABLES = ("run_reward_models", "metric_results", "curves", "per_prompt_results", "failures")


@pytest.fixture(scope="session")
def audit_db(tmp_path_factory) -> Path:
    """The small recipe (8 prompts × 16 responses, RMs 'honest' and 'length') run into a DB."""
    db = run_small_audit(tmp_path_factory.mktemp("audit"))
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "update runs set id = ?, created_at = ?, finished_at = ?, recipe_path = ?",
            [FIXED_RUN_ID, FIXED_CREATED_AT, FIXED_CREATED_AT, FIXED_RECIPE_PATH],
        )
        for table in RUN_TABLES:
            conn.execute(f"update {table} set run_id = ?", [FIXED_RUN_ID])
    conn.close()
    return db


@pytest.fixture
def db_copy(audit_db, tmp_path):
    """A private copy of the audit DB for a test that changes what is stored."""

    def copy(edit_sql: list[tuple[str, list]] = ()) -> Path:
        path = tmp_path / "audit.db"
        source = sqlite3.connect(audit_db)
        target = sqlite3.connect(path)
        source.backup(target)
        source.close()
        for sql, params in edit_sql:
            target.execute(sql, params)
        target.commit()
        target.close()
        return path

    return copy


FIXED_PAIR_RUN_ID = "9a125a0d17000000000b"


@pytest.fixture(scope="session")
def pair_db(tmp_path_factory) -> Path:
    """A run of preference pairs only (no benchmark), with a shift sweep; fixed id and times."""
    from rmaudit.recipe import load_recipe
    from rmaudit.run import Runner
    from rmaudit.store import Store

    folder = tmp_path_factory.mktemp("pairs")
    examples = Path(__file__).resolve().parents[2] / "examples" / "rewardbench-mini.jsonl"
    recipe = folder / "pairs.toml"
    recipe.write_text(PAIR_RECIPE.replace("{path}", str(examples)), encoding="utf-8")
    db = folder / "pairs.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "update runs set id = ?, created_at = ?, finished_at = ?, recipe_path = ?",
            [FIXED_PAIR_RUN_ID, FIXED_CREATED_AT, FIXED_CREATED_AT, "recipes/pairs.toml"],
        )
        for table in RUN_TABLES:
            conn.execute(f"update {table} set run_id = ?", [FIXED_PAIR_RUN_ID])
    conn.close()
    return db
