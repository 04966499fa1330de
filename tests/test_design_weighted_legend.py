"""What the legend derives from labels under a label design is design-weighted (issue 35): "a
random pick scores X" is the responses' mean as the design estimates it — the drawn labels,
each weighted by 1/π — equal to full labelling's plain mean on a budget-1 run."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from test_label_budget import budgeted

from rmaudit.results.run_index import open_for_reading
from rmaudit.results.summary import latest_run_id, load_summary, oracle_scale


def random_pick(db) -> float:
    store = open_for_reading(db)
    try:
        summary = load_summary(store, latest_run_id(store))
        scale = oracle_scale(store, summary.benchmark)
    finally:
        store.close()
    assert scale is not None
    return scale.mean


def drawn_labels(db) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels of the latest benchmark's drawn responses, their π, every stored label)."""
    with sqlite3.connect(db) as connection:
        (benchmark,) = connection.execute(
            "select benchmark_id from runs order by created_at desc, rowid desc limit 1"
        ).fetchone()
        rows = connection.execute(
            """select l.score, i.probability from inclusion i join oracle_labels l
               on l.response_id = i.response_id where i.benchmark_id = ? and i.drawn = 1""",
            [benchmark],
        ).fetchall()
        every = [row[0] for row in connection.execute("select score from oracle_labels")]
    labels, probabilities = np.array(rows, float).T
    return labels, probabilities, np.array(every, float)


def test_a_budgeted_runs_random_pick_is_the_1_over_pi_weighted_mean_of_its_drawn_labels(
    rmaudit, write_recipe, tmp_path
):
    db = tmp_path / "audit.db"
    # labels of a uniform half first: the guided quarter's undrawn responses keep theirs
    half = write_recipe(budgeted("budget = 0.5"), name="half.toml")
    assert rmaudit("run", str(half), "--db", str(db)).code == 0
    guided = write_recipe(
        budgeted('budget = 0.25\ndesign = "rm-guided"\nguide = ["honest"]'), name="guided.toml"
    )
    ran = rmaudit("run", str(guided), "--db", str(db))
    assert ran.code == 0, ran.err
    labels, probabilities, every = drawn_labels(db)
    assert np.ptp(probabilities) > 0  # rm-guided: unequal inclusion probabilities
    weighted = np.sum(labels / probabilities) / np.sum(1 / probabilities)
    assert random_pick(db) == pytest.approx(weighted, rel=1e-12)
    # what the legend showed before: the plain mean of every label stored for the benchmark
    assert abs(weighted - every.mean()) > 1e-3


def test_a_budget_of_one_shows_full_labellings_random_pick(rmaudit, write_recipe, tmp_path):
    full_db, one_db = tmp_path / "full.db", tmp_path / "one.db"
    assert (
        rmaudit("run", str(write_recipe(budgeted(""), name="f.toml")), "--db", str(full_db)).code
        == 0
    )
    one = write_recipe(budgeted("budget = 1"), name="one.toml")
    assert rmaudit("run", str(one), "--db", str(one_db)).code == 0
    _, probabilities, every = drawn_labels(one_db)
    assert set(probabilities) == {1.0}
    assert random_pick(one_db) == pytest.approx(random_pick(full_db), rel=1e-12)
    assert random_pick(full_db) == pytest.approx(every.mean(), rel=1e-12)
