"""kill -9 while a process reward model scores steps, then rerun: the run completes with the
same metrics as an uninterrupted one, no step score is stored twice, and every (solution, PRM,
step) score equals the uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from types import ModuleType

from _prm_data import write_processbench
from _support import HANG_S, metric_rows, table_counts

from rmaudit.suites import PROCESSBENCH_SPLITS
from rmaudit.testing import registered_plugin

SLOW_PRM = '''
import time
from rmaudit import hookimpl
from rmaudit.components import ProcessRewardModel


class SlowPRM(ProcessRewardModel):
    """Scores a step by its length, slowly, so a test can kill a run mid-stage."""

    name = "slow-prm"

    def score_steps(self, batch):
        time.sleep(0.1)
        return [[len(step) / (len(step) + 80) for step in s.steps] for s in batch]


@hookimpl
def register_process_reward_models(register):
    register(SlowPRM)
'''


def _solutions_scored(db) -> int:
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute(
                "select count(distinct solution_id) from step_scores where prm_key in "
                "(select key from components where name = 'slow-prm')"
            ).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def _all_scores(db) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "select prm_key, solution_id, step, score from step_scores "
            "order by prm_key, solution_id, step"
        ).fetchall()
    finally:
        conn.close()


def test_kill_9_during_step_scoring_then_resume(tmp_path, rmaudit):
    data = write_processbench(tmp_path / "data", per_split=15)
    total = 4 * 15
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "slow_prm.py").write_text(SLOW_PRM)
    files = ", ".join(
        json.dumps(str(data / "processbench" / f"{s}.json")) for s in PROCESSBENCH_SPLITS
    )
    recipe = tmp_path / "prm.toml"
    recipe.write_text(
        f'batch_size = 3\n[solutions.source]\nname = "processbench"\nfiles = [{files}]\n\n'
        '[[process_reward_models]]\nname = "random"\n\n'
        '[[process_reward_models]]\nlabel = "slow"\nname = "slow-prm"\n'
    )
    command = [sys.executable, "-m", "rmaudit", "--plugins-dir", str(plugins), "run", str(recipe)]
    killed_db = tmp_path / "killed.db"
    process = subprocess.Popen(
        [*command, "--db", str(killed_db)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline:
        if 6 <= _solutions_scored(killed_db) < total - 6:  # part-way through the slow PRM
            break
        assert process.poll() is None, "the run finished before it could be killed"
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    partial = _solutions_scored(killed_db)
    assert 0 < partial < total, partial

    resumed = subprocess.run([*command, "--db", str(killed_db)], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"step scores: slow ({total - partial} solutions)" in resumed.stderr.replace(",", "")

    slow_prm = ModuleType("slow_prm")
    exec(compile(SLOW_PRM, "slow_prm.py", "exec"), slow_prm.__dict__)
    clean_db = tmp_path / "clean.db"
    with registered_plugin(slow_prm):
        clean = rmaudit("run", str(recipe), "--db", str(clean_db))
    assert clean.code == 0, clean.err

    assert metric_rows(killed_db) == metric_rows(clean_db)
    counts = table_counts(killed_db)
    assert counts == table_counts(clean_db)
    assert _all_scores(killed_db) == _all_scores(clean_db)  # bit for bit, none twice
