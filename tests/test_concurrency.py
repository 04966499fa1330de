"""Many processes, one DB (issue 13): two runs of different recipes and two of the same recipe
at once, with a reader polling ``rmaudit runs``: every run finishes (writers take turns), the
reader never fails, and the DB holds what running them one after the other gives, once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading

from _support import SMALL_RECIPE, metric_rows, table_counts

UNIQUE = {
    "prompts": ["id"],
    "responses": ["id"],
    "oracle_labels": ["response_id", "oracle_key"],
    "rm_scores": ["response_id", "rm_key"],
    "runs": ["id"],
    "metric_results": ["run_id", "rm_key", "metric", "key"],
    "failures": ["run_id", "stage", "item_id", "error"],
}


def _recipes(tmp_path):
    paths = []
    for name, k in (("a", 4), ("b", 5)):
        path = tmp_path / f"{name}.toml"
        path.write_text(SMALL_RECIPE.replace("{extra_rms}", "").replace("k = 8", f"k = {k}"))
        paths.append(path)
    return paths


def _rmaudit(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "rmaudit", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _poll(db, stop, seen):
    while not stop.is_set():
        result = subprocess.run(
            [sys.executable, "-m", "rmaudit", "runs", "--db", str(db)],
            capture_output=True,
            text=True,
        )
        seen.append((result.returncode, result.stderr.strip()))


def _digests(db):
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("select run_id, rm_key, metric, digest from metric_digests")
        return {(run, rm, metric): digest for run, rm, metric, digest in rows}
    finally:
        conn.close()


def _run_ids(db):
    conn = sqlite3.connect(db)
    try:
        return sorted(row[0] for row in conn.execute("select id from runs"))
    finally:
        conn.close()


def test_runs_at_once_on_one_db_equal_the_runs_in_sequence(tmp_path):
    a, b = _recipes(tmp_path)
    sequential = tmp_path / "sequential.db"
    for recipe in (a, b):
        process = _rmaudit("run", recipe, "--db", sequential)
        assert process.wait() == 0, process.stderr.read()

    together = tmp_path / "together.db"
    stop, seen = threading.Event(), []
    reader = threading.Thread(target=_poll, args=(together, stop, seen))
    reader.start()
    processes = [_rmaudit("run", recipe, "--db", together) for recipe in (a, b, a, b)]
    outcomes = [(p.wait(), p.stderr.read()) for p in processes]
    stop.set()
    reader.join()

    for code, err in outcomes:
        assert code == 0, err
    # before the first run has created the DB, the reader is told so (exit 2); never anything else
    assert seen and all(
        code == 0 or "does not exist" in err or "not an rmaudit database" in err
        for code, err in seen
    ), seen
    assert any(code == 0 for code, _ in seen)

    # metric_digests is a cache: a run's new scores for an RM delete the digests other runs
    # hold for it (schema.M014), so which survive depends on the order the runs' scores land;
    # a result both keep a digest of has the same digest
    counts = {db: table_counts(db) for db in (together, sequential)}
    assert counts[together].pop("metric_digests") and counts[sequential].pop("metric_digests")
    assert counts[together] == counts[sequential]
    kept = {db: _digests(db) for db in (together, sequential)}
    shared = kept[together].keys() & kept[sequential].keys()
    assert {k: kept[together][k] for k in shared} == {k: kept[sequential][k] for k in shared}
    assert _run_ids(together) == _run_ids(sequential)
    for run_id in _run_ids(sequential):
        assert metric_rows(together, run_id) == metric_rows(sequential, run_id)
    conn = sqlite3.connect(together)
    for table, key in UNIQUE.items():
        columns = ", ".join(key)
        duplicates = conn.execute(
            f"select count(*) from (select {columns} from {table} "
            f"group by {columns} having count(*) > 1)"
        ).fetchone()[0]
        assert duplicates == 0, table
    conn.close()
    for suffix in ("-wal", "-shm", ".lock"):
        assert not (tmp_path / f"together.db{suffix}").exists(), suffix


def test_a_second_writer_is_told_who_writes_and_refused_when_it_will_not_wait(tmp_path):
    from rmaudit.store import Store

    db = tmp_path / "audit.db"
    first = Store.open(db)
    try:
        holder = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys\nfrom rmaudit.store import Store, WriterBusy\n"
                f"try:\n    Store.open({str(db)!r}, waiting=None)\n"
                "except WriterBusy as error:\n    print(error)\n    sys.exit(1)",
            ],
            capture_output=True,
            text=True,
        )
    finally:
        first.close()
    assert holder.returncode == 1, holder.stderr
    assert holder.stdout.strip().startswith(
        f"another rmaudit run is writing this DB (pid {os.getpid()})"
    )
