"""A rerun recomputes a metric only when something it reads changed (rmaudit.run.metric_digest):
an idle rerun computes none and prints the same numbers; a changed score, label or metric
option recomputes exactly the metrics that read it, with the rows a full recomputation
stores; a DB from before the digests recomputes once; a run killed while recomputing leaves
the stored results as they were."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest
from _support import SMALL_RECIPE

from rmaudit.run import metrics as run_metrics

EXTRA_RM = '\n[[reward_models]]\nlabel = "flattery"\nname = "simulated-rm"\nbias = "flattery"\n'
#: a run-level metric (every RM at once) beside the per-RM ones
RUN_LEVEL_METRIC = '\n[[metrics]]\nname = "regret-correlation"\ndesign = "shared"\n'
RMS = ("honest", "length", "flattery")
PER_RM = ("reta", "reta-curve", "best-of-n", "pairwise-accuracy")


@pytest.fixture
def computed(monkeypatch) -> list[tuple[str, str]]:
    """(what it was computed on, metric label) of every metric computation, in order; the
    computation itself runs as before."""
    calls: list[tuple[str, str]] = []
    compute = run_metrics._compute

    def counted(ctx, metric_spec, inputs, on, prompt_ids):
        calls.append((on, metric_spec.label))
        return compute(ctx, metric_spec, inputs, on, prompt_ids)

    monkeypatch.setattr(run_metrics, "_compute", counted)
    return calls


@pytest.fixture
def recipe(tmp_path) -> Path:
    path = tmp_path / "recipe.toml"
    path.write_text(SMALL_RECIPE.replace("{extra_rms}", EXTRA_RM) + RUN_LEVEL_METRIC)
    return path


def results(db: Path, run_id: str | None = None) -> dict[str, list[tuple]]:
    """Every result table's rows of a run (the only run when None), in stored order, without
    the run id, and the run's digests."""
    conn = sqlite3.connect(db)
    try:
        if run_id is None:
            (run_id,) = conn.execute("select id from runs").fetchone()
        found = {
            table: conn.execute(
                f"select * from {table} where run_id = ? order by rowid", [run_id]
            ).fetchall()
            for table in ("metric_results", "per_prompt_results", "curves", "metric_digests")
        }
        return {table: [row[1:] for row in rows] for table, rows in found.items()}
    finally:
        conn.close()


def rm_key(db: Path, label: str) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "select rm_key from run_reward_models where label = ?", [label]
        ).fetchone()[0]
    finally:
        conn.close()


def execute(db: Path, sql: str, params: list) -> None:
    conn = sqlite3.connect(db)
    try:
        with conn:
            assert conn.execute(sql, params).rowcount == 1
    finally:
        conn.close()


def numbers(found: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
    """``results`` less when each metric was computed."""
    return {**found, "metric_digests": [row[:-1] for row in found["metric_digests"]]}


def recomputed_in_full(db: Path, recipe: Path, rmaudit) -> dict[str, list[tuple]]:
    """The run's ``numbers`` once every digest is forgotten: all recomputed."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("delete from metric_digests")
    conn.close()
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    return numbers(results(db))


def every_metric() -> list[tuple[str, str]]:
    return [(rm, m) for rm in RMS for m in PER_RM] + [("all RMs", "regret-correlation")]


def test_an_idle_rerun_computes_no_metric_and_prints_the_same(tmp_path, recipe, computed, rmaudit):
    db = tmp_path / "audit.db"
    first = rmaudit("run", str(recipe), "--db", str(db))
    assert first.code == 0, first.err
    assert computed == every_metric()
    stored = results(db)
    assert len(stored["metric_digests"]) == len(every_metric())
    computed.clear()
    again = rmaudit("run", str(recipe), "--db", str(db))
    assert again.code == 0 and again.out == first.out
    assert computed == []
    assert results(db) == stored  # the rows and when they were computed, untouched


def test_a_changed_score_recomputes_that_rms_metrics_and_the_run_level_ones(
    tmp_path, recipe, computed, rmaudit
):
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    before = results(db)
    execute(
        db,
        "update rm_scores set score = score + 5 where rm_key = ? and response_id = "
        "(select min(response_id) from rm_scores where rm_key = ?)",
        [rm_key(db, "length")] * 2,
    )
    computed.clear()
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    assert computed == [("length", m) for m in PER_RM] + [("all RMs", "regret-correlation")]
    after = results(db)
    assert after != before
    unchanged = [r for r in before["metric_results"] if r[0] != rm_key(db, "length") and r[0]]
    assert all(row in after["metric_results"] for row in unchanged)
    assert recomputed_in_full(db, recipe, rmaudit) == numbers(after)


@pytest.mark.parametrize(
    "edit",
    [
        # the next float: below what any sum or count of the scores would see
        "update rm_scores set score = ? where rm_key = ? and response_id = ?",
        # replaced in place, which fires no update trigger
        "insert or replace into rm_scores (score, rm_key, response_id) values (?, ?, ?)",
    ],
)
def test_a_score_edited_by_any_sql_recomputes_that_rms_metrics(
    tmp_path, recipe, computed, rmaudit, edit
):
    """A metric's digest names the RM's scores by its key rather than hashing them
    (schema.M014): the store's triggers must see every way SQL can change one."""
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    key = rm_key(db, "flattery")
    conn = sqlite3.connect(db)
    response_id, score = conn.execute(
        "select response_id, score from rm_scores where rm_key = ? order by response_id limit 1",
        [key],
    ).fetchone()
    conn.close()
    execute(db, edit, [math.nextafter(score, math.inf), key, response_id])
    computed.clear()
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    assert computed == [("flattery", m) for m in PER_RM] + [("all RMs", "regret-correlation")]
    computed.clear()
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    assert computed == []


def digested_rms(db: Path) -> list[str]:
    """The RM keys ('' for run-level) with stored metric digests, sorted."""
    conn = sqlite3.connect(db)
    try:
        return sorted({row[0] for row in conn.execute("select rm_key from metric_digests")})
    finally:
        conn.close()


@pytest.mark.parametrize(
    "edit",
    [
        "update rm_scores set score = score + 1 where rm_key = :rm and response_id = :id",
        "delete from rm_scores where rm_key = :rm and response_id = :id",
        "insert or replace into rm_scores values (:id, :rm, 0.5)",
        "insert into rm_scores values ('a response no run scored', :rm, 0.5)",
    ],
)
def test_an_edit_deletes_the_digests_of_that_rm_and_the_run_level_ones_only(
    tmp_path, recipe, rmaudit, edit
):
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    keys = {label: rm_key(db, label) for label in RMS}
    every = sorted(["", *keys.values()])
    assert digested_rms(db) == every
    conn = sqlite3.connect(db)
    (response_id,) = conn.execute(
        "select min(response_id) from rm_scores where rm_key = ?", [keys["length"]]
    ).fetchone()
    with conn:  # a score for an RM with no stored digest deletes none
        conn.execute("insert into rm_scores values (?, 'an RM of no run', 0.5)", [response_id])
    assert digested_rms(db) == every
    with conn:
        conn.execute(edit, {"rm": keys["length"], "id": response_id})
    conn.close()
    assert digested_rms(db) == sorted([keys["honest"], keys["flattery"]])


def test_a_relabel_recomputes_every_metric(tmp_path, recipe, computed, rmaudit):
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    execute(
        db,
        "update oracle_labels set score = score + 3 where response_id = "
        "(select min(response_id) from oracle_labels)",
        [],
    )
    computed.clear()
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    assert computed == every_metric()


def test_a_metric_option_recomputes_that_metric_only(tmp_path, recipe, computed, rmaudit):
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    first = results(db)
    edited = tmp_path / "edited.toml"  # another recipe, so another run in the same DB
    edited.write_text(recipe.read_text().replace("report = [4]", "report = [4, 8]"))
    computed.clear()
    assert rmaudit("run", str(edited), "--db", str(db)).code == 0
    assert computed == [(rm, "best-of-n") for rm in RMS]
    conn = sqlite3.connect(db)
    (run_id,) = conn.execute("select id from runs where recipe_path = ?", [str(edited)]).fetchone()
    conn.close()
    second = results(db, run_id)
    # the metrics the edit left alone: the first run's rows, copied
    kept = [row for row in first["metric_results"] if row[1] != "best-of-n"]
    assert [row for row in second["metric_results"] if row[1] != "best-of-n"] == kept
    assert any(row[1] == "best-of-n" and row[2] == "bon@8" for row in second["metric_results"])


def test_a_db_from_before_the_digests_recomputes_once(tmp_path, recipe, computed, rmaudit):
    db = tmp_path / "audit.db"
    first = rmaudit("run", str(recipe), "--db", str(db))
    stored = results(db)
    conn = sqlite3.connect(db)
    with conn:  # as the rmaudit before the migration left its files
        conn.execute("drop table metric_digests")
        conn.execute("delete from _sqlite_migrations where name = 'm011_metric_digests'")
        conn.execute("update schema_info set schema_version = 10")
    conn.close()
    computed.clear()
    upgraded = rmaudit("run", str(recipe), "--db", str(db))
    assert upgraded.code == 0 and upgraded.out == first.out
    assert computed == every_metric()
    numbers = {table: rows for table, rows in stored.items() if table != "metric_digests"}
    assert {t: r for t, r in results(db).items() if t != "metric_digests"} == numbers
    computed.clear()
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    assert computed == []


def test_a_run_killed_while_recomputing_leaves_the_results_as_they_were(
    tmp_path, recipe, computed, rmaudit, monkeypatch
):
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    execute(
        db,
        "update oracle_labels set score = score + 3 where response_id = "
        "(select min(response_id) from oracle_labels)",
        [],
    )
    before = results(db)
    counting = run_metrics._compute

    def interrupted(ctx, metric_spec, inputs, on, prompt_ids):
        if len(computed) == 5:
            raise KeyboardInterrupt
        return counting(ctx, metric_spec, inputs, on, prompt_ids)

    monkeypatch.setattr(run_metrics, "_compute", interrupted)
    computed.clear()
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 130
    assert results(db) == before
    monkeypatch.setattr(run_metrics, "_compute", counting)
    computed.clear()
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    assert computed == every_metric()
    resumed = results(db)
    assert recomputed_in_full(db, recipe, rmaudit) == numbers(resumed)
