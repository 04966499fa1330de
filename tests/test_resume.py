"""kill -9 mid-stage, then rerun: the run completes with the same metrics and tables as an
uninterrupted one, and every score is stored once and equals the uninterrupted run's — while
an RM scores responses (the kill lands while the local executor's worker thread computes one
batch and the driver writes the one before: the overlap is on by default), and while a
process reward model scores steps."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from _prm_data import write_processbench
from _support import HANG_S, metric_rows, table_counts

from rmaudit.suites import PROCESSBENCH_SPLITS
from rmaudit.testing import registered_plugin

SLOW_RM = '''
import time
from rmaudit import hookimpl
from rmaudit.components import RewardModel
from rmaudit.backends.simulated import SimulatedRewardModel

DELAY_S = 0.1


class SlowRM(RewardModel):
    """The honest simulated RM, slowed down so a test can kill a run mid-stage."""

    name = "slow-rm"

    def score(self, batch):
        time.sleep(DELAY_S)
        model = SimulatedRewardModel(seed=7)
        return [model.score(p.text, r.text) for p, r in batch]


@hookimpl
def register_reward_models(register):
    register(SlowRM)
'''

SLOW_PRM = '''
import time
from rmaudit import hookimpl
from rmaudit.components import ProcessRewardModel

DELAY_S = 0.1


class SlowPRM(ProcessRewardModel):
    """Scores a step by its length, slowly, so a test can kill a run mid-stage."""

    name = "slow-prm"

    def score_steps(self, batch):
        time.sleep(DELAY_S)
        return [[len(step) / (len(step) + 80) for step in s.steps] for s in batch]


@hookimpl
def register_process_reward_models(register):
    register(SlowPRM)
'''


#: the slow RM's recipe entry, and the responses each RM of the small recipe scores
EXTRA = '\n[[reward_models]]\nlabel = "slow"\nname = "slow-rm"\n'
TOTAL = 8 * 16


class Resumed(NamedTuple):
    killed: Path  # the DB of the run killed and rerun
    clean: Path  # the DB of the same run uninterrupted
    partial: int  # what was stored when the run was killed
    stderr: str  # what the rerun said


def _count(db: Path, sql: str) -> int:
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute(sql).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def scores_stored(db: Path) -> int:
    return _count(db, "select count(*) from rm_scores")


def _rows(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def killed_and_resumed(
    tmp_path: Path, rmaudit, plugin: str, recipe: Path, stored: str, part_way: Callable[[int], bool]
) -> Resumed:
    """Run ``recipe`` with the slow ``plugin`` (its source) loaded in a process, kill -9 it once
    what the query ``stored`` counts is ``part_way``, rerun it, and run it again uninterrupted
    (both in-process): the two runs end with the same metrics and the same rows in every
    table."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "slow_plugin.py").write_text(plugin)
    command = [sys.executable, "-m", "rmaudit", "--plugins-dir", str(plugins), "run", str(recipe)]
    killed = tmp_path / "killed.db"
    process = subprocess.Popen(
        [*command, "--db", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline and not part_way(_count(killed, stored)):
        assert process.poll() is None, "the run finished before it could be killed"
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    partial = _count(killed, stored)

    # the rerun that resumes it, and the uninterrupted run to compare with, need no process
    # of their own
    module = ModuleType("slow_plugin")
    exec(compile(plugin, "slow_plugin.py", "exec"), module.__dict__)
    module.DELAY_S = 0.0  # nothing kills these two, so they need not be slow
    clean = tmp_path / "clean.db"
    with registered_plugin(module):
        resumed = rmaudit("run", str(recipe), "--db", str(killed))
        uninterrupted = rmaudit("run", str(recipe), "--db", str(clean))
    assert resumed.code == 0, resumed.err
    assert uninterrupted.code == 0, uninterrupted.err
    assert metric_rows(killed) == metric_rows(clean)
    assert table_counts(killed) == table_counts(clean)
    return Resumed(killed, clean, partial, resumed.err.replace(",", ""))


def test_kill_9_during_scoring_then_resume(tmp_path, write_recipe, rmaudit):
    total = TOTAL
    recipe = write_recipe(extra_rms=EXTRA)
    recipe.write_text(recipe.read_text().replace("batch_size = 32", "batch_size = 8"))
    run = killed_and_resumed(
        tmp_path,
        rmaudit,
        SLOW_RM,
        recipe,
        "select count(*) from rm_scores",
        lambda stored: 2 * total + 8 <= stored < 3 * total - 16,  # the slow RM part-way
    )
    assert 2 * total < run.partial < 3 * total, run.partial
    assert f"{3 * total - run.partial} scores: slow" in run.stderr
    assert table_counts(run.killed)["rm_scores"] == 3 * total
    distinct = "select count(*) from (select distinct response_id, rm_key from rm_scores)"
    assert _count(run.killed, distinct) == 3 * total
    scores = "select rm_key, response_id, score from rm_scores order by rm_key, response_id"
    assert _rows(run.killed, scores) == _rows(run.clean, scores)  # bit for bit


def test_kill_9_during_step_scoring_then_resume(tmp_path, rmaudit):
    data = write_processbench(tmp_path / "data", per_split=15)
    total = 4 * 15
    files = ", ".join(
        json.dumps(str(data / "processbench" / f"{s}.json")) for s in PROCESSBENCH_SPLITS
    )
    recipe = tmp_path / "prm.toml"
    recipe.write_text(
        f'batch_size = 3\n[solutions.source]\nname = "processbench"\nfiles = [{files}]\n\n'
        '[[process_reward_models]]\nname = "random"\n\n'
        '[[process_reward_models]]\nlabel = "slow"\nname = "slow-prm"\n'
    )
    run = killed_and_resumed(
        tmp_path,
        rmaudit,
        SLOW_PRM,
        recipe,
        "select count(distinct solution_id) from step_scores where prm_key in "
        "(select key from components where name = 'slow-prm')",
        lambda solutions: 6 <= solutions < total - 6,  # part-way through the slow PRM
    )
    assert 0 < run.partial < total, run.partial
    assert f"step scores: slow ({total - run.partial} solutions)" in run.stderr
    scores = "select prm_key, solution_id, step, score from step_scores order by 1, 2, 3"
    assert _rows(run.killed, scores) == _rows(run.clean, scores)  # bit for bit, none twice
