"""The store: grouped write transactions, keyed lookups, the migration that clusters scores
and labels, and SQL nowhere else in rmaudit."""

from __future__ import annotations

import ast
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

import rmaudit.store as store_module
from rmaudit.results.run_index import latest_complete_run, list_runs
from rmaudit.store import Store
from rmaudit.store.records import RunRow
from rmaudit.store.schema import SCHEMA_VERSION

SRC = Path(__file__).resolve().parents[1] / "src" / "rmaudit"
FIXTURE = Path(__file__).parent / "fixtures" / "pre_store_split" / "pre-split.db"


def seen_elsewhere(path: Path, sql: str) -> list[tuple]:
    """What another connection (another process, the TUI) sees: committed rows only."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def score_batches(store: Store, batches: int, fail_at: int | None = None) -> None:
    with store.grouped_writes():
        for b in range(batches):
            with store.transaction():
                store.items.add_scores("rm", {f"r{b}-0": 0.5, f"r{b}-1": 1.5})
                if b == fail_at:
                    raise RuntimeError("the component failed mid-batch")


def test_a_failed_batch_is_undone_and_the_batches_before_it_are_kept(tmp_path):
    store = Store.open(tmp_path / "s.db")
    try:
        with pytest.raises(RuntimeError):
            score_batches(store, 5, fail_at=3)
        assert not store._conn.in_transaction
    finally:
        store.close()
    rows = seen_elsewhere(tmp_path / "s.db", "select response_id from rm_scores order by 1")
    assert [r for (r,) in rows] == [f"r{b}-{i}" for b in range(3) for i in range(2)]


def test_grouped_batches_commit_every_group_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "GROUP_ROWS", 4)
    monkeypatch.setattr(store_module, "GROUP_SECONDS", 3600.0)
    path = tmp_path / "s.db"
    store = Store.open(path)
    visible = []
    try:
        with store.grouped_writes():
            for b in range(5):
                with store.transaction():
                    store.items.add_scores("rm", {f"r{b}-0": 0.5, f"r{b}-1": 1.5})
                visible.append(seen_elsewhere(path, "select count(*) from rm_scores")[0][0])
    finally:
        store.close()
    assert visible == [0, 4, 4, 8, 8]  # two 2-row batches per commit; the 5th at the end
    assert seen_elsewhere(path, "select count(*) from rm_scores") == [(10,)]


def test_slow_batches_commit_as_they_come(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "GROUP_SECONDS", 0.0)  # every batch "took" the limit
    path = tmp_path / "s.db"
    store = Store.open(path)
    visible = []
    try:
        with store.grouped_writes():
            for b in range(3):
                with store.transaction():
                    store.items.add_scores("rm", {f"r{b}": 0.5})
                visible.append(seen_elsewhere(path, "select count(*) from rm_scores")[0][0])
    finally:
        store.close()
    assert visible == [1, 2, 3]


def test_keyed_lookups_answer_for_the_keys_asked_about(tmp_path):
    store = Store.open(tmp_path / "s.db")
    try:
        ids = [f"r{i}" for i in range(2000)]  # more than one IN (...) chunk
        store.items.add_scores("a", {rid: float(i) for i, rid in enumerate(ids)})
        store.items.add_scores("b", {"r1": 9.0, "x": 1.0})
        assert store.items.scored("a", ids[::3] + ["x", "r1"]) == set(ids[::3]) | {"r1"}
        assert store.items.scored("b", ids) == {"r1"}
        assert store.read.scores_of("b", ["r1", "r2", "x"]) == {"r1": 9.0, "x": 1.0}
        assert store.items.has_scores("b") and not store.items.has_scores("c")
    finally:
        store.close()


def test_the_migration_keeps_every_score_and_label_and_clusters_them(tmp_path):
    db = tmp_path / "old.db"
    shutil.copy(FIXTURE, db)
    tables = {
        "rm_scores": "select response_id, rm_key, score from rm_scores",
        "oracle_labels": "select * from oracle_labels",
    }
    before = {t: sorted(seen_elsewhere(db, sql)) for t, sql in tables.items()}
    Store.open(db).close()
    for table, sql in tables.items():
        assert sorted(seen_elsewhere(db, sql)) == before[table] != []
        create = seen_elsewhere(db, f"select sql from sqlite_master where name = '{table}'")[0][0]
        assert "without rowid" in create.lower()
    # one B-tree per table: no index beside the primary key
    assert (
        seen_elsewhere(
            db,
            "select name from sqlite_master where type = 'index' and "
            "tbl_name in ('rm_scores', 'oracle_labels')",
        )
        == []
    )
    assert seen_elsewhere(db, "select schema_version from schema_info") == [(SCHEMA_VERSION,)]


SQL = re.compile(
    r"^\s*(select|insert|update|delete|create|alter|drop|pragma|begin|commit|"
    r"savepoint|release|rollback)\b",
    re.IGNORECASE,
)


def test_no_sql_outside_the_store():
    """Only rmaudit.store holds SQL (the judge's request cache, its own file, aside)."""
    offenders = []
    for path in SRC.rglob("*.py"):
        relative = path.relative_to(SRC)
        if relative.parts[0] == "store" or relative.parts[:2] == ("backends", "openai_api"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and SQL.match(node.value)
                and re.search(r"\b(from|into|set|table|where)\b", node.value, re.IGNORECASE)
            ):
                offenders.append(f"{relative}:{node.lineno}")
    assert offenders == []


def run_row(run_id: str, created_at: str) -> RunRow:
    return RunRow(
        run_id, "t", "recipe.toml", "", {}, None, None, "running", True, created_at, None,
        "0", None, None,
    )  # fmt: skip


def test_a_rerun_keeps_its_creation_time_and_its_place_and_says_when_it_finished(tmp_path):
    store = Store.open(tmp_path / "runs.db")
    try:
        store.runs.start(run_row("a", "2026-01-01T00:00:00"), [])
        store.runs.finish("a", [], {}, "2026-01-01T00:01:00")
        store.runs.start(run_row("b", "2026-01-02T00:00:00"), [])
        store.runs.finish("b", [], {}, "2026-01-02T00:01:00")
        store.runs.start(run_row("a", "2026-01-03T00:00:00"), [])  # a rerun of a
        rerun = store.read.run("a")
        assert (rerun.created_at, rerun.status, rerun.finished_at) == (
            "2026-01-01T00:00:00",
            "running",
            None,
        )
        store.runs.finish("a", [], {}, "2026-01-03T00:01:00")
        assert store.read.run("a").finished_at == "2026-01-03T00:01:00"
        # newest first by first creation: the rerun keeps its place, and the newest
        # complete run is still the one created last
        assert [run.id for run in list_runs(store)] == ["b", "a"]
        assert latest_complete_run(store) == "b"
    finally:
        store.close()


def test_what_is_remembered_is_forgotten_when_the_file_changes(tmp_path):
    """``Store.remembered``: computed once while the file is unchanged, again after a write by
    this connection or by another process."""
    path = tmp_path / "s.db"
    store = Store.open(path)
    reader = Store.open_readonly(path)
    assert reader is not None
    computed = []

    def scores(on: Store) -> dict[str, float]:
        return on.remembered("scores", lambda: computed.append(on) or on.items.scores("rm"))

    try:
        store.items.add_scores("rm", {"r0": 0.5})
        assert scores(store) == scores(store) == {"r0": 0.5}
        assert computed == [store]
        store.items.add_scores("rm", {"r1": 1.5})  # this connection writes
        assert scores(store) == {"r0": 0.5, "r1": 1.5} and len(computed) == 2
        assert scores(reader) == {"r0": 0.5, "r1": 1.5} and len(computed) == 3
        store.items.add_scores("rm", {"r2": 2.5})  # another connection than the reader
        assert scores(reader) == {"r0": 0.5, "r1": 1.5, "r2": 2.5}
        assert scores(reader) is scores(reader) and len(computed) == 4
    finally:
        reader.close()
        store.close()
