"""kill -9 during RM scoring, then rerun: completes, same metrics, no duplicate rows, and
every (response, RM) score stored once and equal to an uninterrupted run's.  The kill lands
while the local executor's worker thread computes one batch and the driver writes the one
before (the overlap is on by default)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from types import ModuleType

from _support import HANG_S, metric_rows, table_counts

from rmaudit.testing import registered_plugin

SLOW_RM = '''
import time
from rmaudit import hookimpl
from rmaudit.components import RewardModel
from rmaudit.backends.simulated import SimulatedRewardModel


class SlowRM(RewardModel):
    """The honest simulated RM, slowed down so a test can kill a run mid-stage."""

    name = "slow-rm"

    def score(self, batch):
        time.sleep(0.1)
        model = SimulatedRewardModel(seed=7)
        return [model.score(p.text, r.text) for p, r in batch]


@hookimpl
def register_reward_models(register):
    register(SlowRM)
'''

EXTRA = '\n[[reward_models]]\nlabel = "slow"\nname = "slow-rm"\n'
TOTAL = 8 * 16


def _all_scores(db) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "select rm_key, response_id, score from rm_scores order by rm_key, response_id"
        ).fetchall()
    finally:
        conn.close()


def _scores(db) -> int:
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("select count(*) from rm_scores").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def test_kill_9_during_scoring_then_resume(tmp_path, write_recipe, rmaudit):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "slow_rm.py").write_text(SLOW_RM)
    recipe = write_recipe(extra_rms=EXTRA)
    recipe.write_text(recipe.read_text().replace("batch_size = 32", "batch_size = 8"))
    command = [sys.executable, "-m", "rmaudit", "--plugins-dir", str(plugins), "run", str(recipe)]

    killed_db = tmp_path / "killed.db"
    process = subprocess.Popen(
        [*command, "--db", str(killed_db)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline:
        stored = _scores(killed_db)
        if 2 * TOTAL + 8 <= stored < 3 * TOTAL - 16:  # the slow RM is part-way through
            break
        assert process.poll() is None, "the run finished before it could be killed"
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    partial = _scores(killed_db)
    assert 2 * TOTAL < partial < 3 * TOTAL, partial

    resumed = subprocess.run([*command, "--db", str(killed_db)], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{3 * TOTAL - partial} scores: slow" in resumed.stderr.replace(",", "")

    # the uninterrupted run to compare with needs no process of its own
    slow_rm = ModuleType("slow_rm")
    exec(compile(SLOW_RM, "slow_rm.py", "exec"), slow_rm.__dict__)
    clean_db = tmp_path / "clean.db"
    with registered_plugin(slow_rm):
        clean = rmaudit("run", str(recipe), "--db", str(clean_db))
    assert clean.code == 0, clean.err

    assert metric_rows(killed_db) == metric_rows(clean_db)
    counts = table_counts(killed_db)
    assert counts == table_counts(clean_db)
    assert counts["rm_scores"] == 3 * TOTAL
    conn = sqlite3.connect(killed_db)
    distinct = conn.execute(
        "select count(*) from (select distinct response_id, rm_key from rm_scores)"
    )
    assert distinct.fetchone()[0] == counts["rm_scores"]
    conn.close()
    assert _all_scores(killed_db) == _all_scores(clean_db)  # bit for bit
