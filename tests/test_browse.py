"""What ``rmaudit tui`` and ``rmaudit report`` read (``rmaudit.results.browse``), and how they
refuse
a DB they cannot read: one line, exit code 2, no traceback."""

from __future__ import annotations

import math
import sqlite3

import numpy as np
import pytest
from _support import run_small_audit

from rmaudit.results.browse import _ranks, prompt_detail, prompt_failures, top_eta
from rmaudit.results.run_index import list_runs, open_for_reading, resolve_run
from rmaudit.results.summary import load_summary
from rmaudit.store import SCHEMA_VERSION, Store


@pytest.fixture(scope="module")
def audit_db(tmp_path_factory):
    return run_small_audit(tmp_path_factory.mktemp("browse"))


def bad_dbs(folder):
    """name → (path, what the message must say)."""
    (folder / "notes.txt").write_text("not a database at all, " * 100)
    foreign = folder / "foreign.db"
    sqlite3.connect(foreign).execute("create table songs (title text)").connection.commit()
    empty = folder / "empty.db"
    empty.touch()
    newer = folder / "newer.db"
    Store.open(newer).close()
    conn = sqlite3.connect(newer)
    with conn:
        conn.execute("update schema_info set schema_version = ?", [SCHEMA_VERSION + 1])
    conn.close()  # now, not when collected: closing checkpoints the WAL into the file
    return {
        "missing": (folder / "nope.db", "database does not exist"),
        "not sqlite": (folder / "notes.txt", "not an SQLite database"),
        "foreign": (foreign, "not an rmaudit database"),
        "empty": (empty, "not an rmaudit database"),
        "newer": (newer, "newer than this rmaudit supports"),
    }


@pytest.mark.parametrize("kind", ["missing", "not sqlite", "foreign", "empty", "newer"])
@pytest.mark.parametrize("command", ["tui", "report"])
def test_a_db_that_cannot_be_read_is_one_line_and_exit_code_2(rmaudit, tmp_path, kind, command):
    path, message = bad_dbs(tmp_path)[kind]
    before = path.read_bytes() if path.exists() else None
    args = [command, str(path)] + (["--out", str(tmp_path / "out")] if command == "report" else [])
    result = rmaudit(*args)
    assert result.code == 2
    assert result.err.startswith(f"Error: {path}: ") and message in result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert (path.read_bytes() if path.exists() else None) == before  # opened read-only
    assert not (tmp_path / "out").exists()


def test_a_db_without_runs_says_so(rmaudit, tmp_path):
    Store.open(tmp_path / "fresh.db").close()
    result = rmaudit("report", str(tmp_path / "fresh.db"), "--out", str(tmp_path / "out"))
    assert result.code == 2 and "no runs stored" in result.err


def test_runs_and_the_latest_run(audit_db):
    store = open_for_reading(audit_db)
    (run,) = list_runs(store)
    assert (run.title, run.prompts, run.per_prompt, run.reward_models, run.simulated) == (
        "small simulated audit",
        8,
        16,
        2,
        True,
    )
    assert resolve_run(store, None) == resolve_run(store, run.id[:5]) == run.id
    assert top_eta(store, run.id) == 0.25
    store.close()


def test_ranks_are_descending_and_ties_share_the_best_rank():
    assert _ranks([0.5, 2.0, 1.0, 2.0]) == [4, 1, 3, 1]


def test_failure_gap_averages_over_the_rms_tied_favourites(audit_db, tmp_path):
    db = tmp_path / "tied.db"
    source, target = sqlite3.connect(audit_db), sqlite3.connect(db)
    source.backup(target)
    prompt_id = target.execute("select prompt_id from selections order by position").fetchone()[0]
    with target:  # the 'honest' RM scores every response of one prompt the same
        target.execute(
            """update rm_scores set score = 0 where rm_key =
                            (select rm_key from run_reward_models where label = 'honest')
                          and response_id in (select id from responses where prompt_id = ?)""",
            [prompt_id],
        )
    oracle = [
        j
        for (j,) in target.execute(
            "select l.score from oracle_labels l join responses r on r.id = l.response_id "
            "where r.prompt_id = ?",
            [prompt_id],
        )
    ]
    source.close(), target.close()
    store = open_for_reading(db)
    summary = load_summary(store, resolve_run(store, None))
    honest = dict((label, key) for label, key in summary.reward_models)["honest"]
    rows = {r.prompt_id: r for r in prompt_failures(store, summary, honest)}
    assert rows[prompt_id].pick_oracle == pytest.approx(np.mean(oracle))  # a random pick
    assert rows[prompt_id].gap == pytest.approx(max(oracle) - np.mean(oracle))
    detail = prompt_detail(store, summary.benchmark, prompt_id, [honest])
    assert {r.ranks[honest] for r in detail.responses} == {1}
    # every response ties for first: none can be left out of the top-η set, so all are marked
    assert len(detail.top_set(honest, 0.25)) == 16
    store.close()


def test_prompt_detail_orders_oracle_ranks_and_top_set(audit_db):
    store = open_for_reading(audit_db)
    summary = load_summary(store, resolve_run(store, None))
    keys = [k for _, k in summary.reward_models]
    prompt_id = (
        sqlite3.connect(audit_db).execute("select prompt_id from selections limit 1").fetchone()[0]
    )
    detail = prompt_detail(store, summary.benchmark, prompt_id, keys)
    assert len(detail.responses) == 16
    for key in keys:
        by_rank = sorted(detail.responses, key=lambda r: r.ranks[key])
        assert [r.scores[key] for r in by_rank] == sorted(
            (r.scores[key] for r in by_rank), reverse=True
        )
        top = detail.top_set(key, 0.25)
        assert top == {r.id for r in by_rank[: math.floor(0.25 * 16)]}
    best = max(detail.responses, key=lambda r: r.oracle)
    assert best.oracle_rank == 1
    store.close()


def test_the_summary_says_reta_at_this_n_is_the_finite_pool_quantity(audit_db):
    store = open_for_reading(audit_db)
    summary = load_summary(store, resolve_run(store, None))
    store.close()
    assert summary.benchmark.per_prompt == 16
    note = next(n for n in summary.notes if n.startswith("RETA("))
    assert "at N = 16 responses per prompt is the finite-pool quantity" in note
    assert "below Theorem 1's large-N limit" in note
