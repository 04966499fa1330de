"""A DB written by rmaudit before the store was split out of the runner resumes unchanged.

``tests/fixtures/pre_store_split/pre-split.db`` was written at commit ed00434 (schema version 3)
by ``rmaudit run benchmark-shift.toml --db pre-split.db`` in that folder: a benchmark, pairs
derived from it, a shift sweep, per-RM, per-pair and run-level metrics.  Opening it with this
rmaudit migrates it; rerunning its recipe must find every item stored and write the same
metrics.

Since the fixture was written, the statistics work (issue 12) made held-out responses the
regret study's default design and changed some intervals (Wilson intervals for accuracies and
the reliability diagram, a bias-corrected bootstrap for regret correlations).  So the rerun
asks for the design the fixture ran (``design = "shared"``), which makes it a new run id, and
compares every stored row of the old run with the new one: equal, except the intervals, notes
and labels of those metrics.  Pairs derived from a benchmark share their prompt, so since 0.3
the standard errors of the pair accuracy, the reliability diagram and the shift curves are
clustered by prompt: those may differ too, never the values.
"""

from __future__ import annotations

import math
import shutil
import sqlite3
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "pre_store_split"
METRIC_TABLES = ("metric_results", "curves", "per_prompt_results", "run_reward_models")
#: metrics whose intervals (and the notes and labels that describe them) issue 12 changed
NEW_INTERVALS = {
    "pair-accuracy",
    "calibration",
    "shift-curves",
    "regret-correlation",
    "ood-detection",
}
DESCRIBING_AN_INTERVAL = {"ci_low", "ci_high", "params", "label"}
#: metrics whose standard error changed since: clustered by prompt when pairs share one (0.3),
#: a prompt-clustered bootstrap where there was none (OOD detection's AUROC and FPR@95)
CLUSTERED = {"pair-accuracy", "calibration", "shift-curves", "ood-detection"}


def _rows(db: Path) -> dict[str, dict[str, dict[tuple, dict]]]:
    """Every stored result by table, run id and row key (the row's other columns by name)."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        tables: dict[str, dict[str, dict[tuple, dict]]] = {}
        for table in METRIC_TABLES:
            key_columns = [
                c["name"]
                for c in conn.execute(f"pragma table_info({table})")
                if c["pk"] and c["name"] != "run_id"
            ]
            for row in conn.execute(f"select * from {table}"):
                row = dict(row)
                key = tuple(row[c] for c in key_columns)
                tables.setdefault(table, {}).setdefault(row.pop("run_id"), {})[key] = row
        return tables
    finally:
        conn.close()


def _same_result(table: str, old: dict, new: dict) -> bool:
    metric = old.get("metric")
    compared = {
        c
        for c in old
        if not (metric in NEW_INTERVALS and c in DESCRIBING_AN_INTERVAL)
        and not (metric in CLUSTERED and c == "stderr")
    }
    return all(
        old[c] == new[c]
        or (
            isinstance(old[c], float)
            and isinstance(new[c], float)
            and math.isclose(old[c], new[c], rel_tol=1e-12)
        )
        for c in compared
    )


def test_fixture_was_written_by_the_old_schema():
    conn = sqlite3.connect(FIXTURE / "pre-split.db")
    try:
        assert conn.execute("select schema_version from schema_info").fetchone() == (3,)
    finally:
        conn.close()


def test_pre_split_db_resumes_with_no_new_work_and_identical_metrics(tmp_path, rmaudit):
    recipe = tmp_path / "benchmark-shift.toml"
    recipe.write_text(
        (FIXTURE / "benchmark-shift.toml")
        .read_text()
        .replace(
            'name = "regret-correlation"\n', 'name = "regret-correlation"\ndesign = "shared"\n'
        )
    )
    db = tmp_path / "pre-split.db"
    shutil.copy(FIXTURE / "pre-split.db", db)
    before = _rows(db)
    assert all(len(runs) == 1 for runs in before.values()) and len(before) == len(METRIC_TABLES)

    plan = rmaudit("run", str(recipe), "--db", str(db), "--dry-run")
    assert plan.code == 0, plan.err
    rows = [line for line in plan.out.splitlines() if line.startswith("│")]
    assert len(rows) == 8  # prompts, responses, labels, pairs, shifted pairs, 3 RMs' scores
    for line in rows:
        items, stored, todo, calls = (cell.strip() for cell in line.split("│")[2:6])
        assert items == stored and items != "0" and todo == calls == "0", line

    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    assert "new work: none" in result.err
    after = _rows(db)
    for table, runs in before.items():
        ((old_run, old_rows),) = runs.items()
        assert after[table][old_run] == old_rows  # the old run's rows are left as they were
        (new_rows,) = (rows for run, rows in after[table].items() if run != old_run)
        assert new_rows.keys() == old_rows.keys(), table
        changed = [
            key for key, row in old_rows.items() if not _same_result(table, row, new_rows[key])
        ]
        assert not changed, (table, changed[:3])
