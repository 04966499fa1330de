"""kill -9 while a real (tiny) hf-classifier scores through the overlapped pipeline — its
worker thread computing one call while the driver stores the last — then rerun: every
(response, RM) score is stored exactly once and, in deterministic mode, equal bit for bit to
an uninterrupted run's."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from types import ModuleType

import pytest
from _support import HANG_S

from rmaudit.testing import registered_plugin

pytest.importorskip("torch")

SLOW_HF = '''
import time
from rmaudit import hookimpl
from rmaudit.default_plugins.huggingface import HFClassifier


class SlowHF(HFClassifier):
    """hf-classifier, slowed down so a test can kill a run mid-stage."""

    name = "slow-hf"

    def score(self, batch):
        time.sleep(0.2)
        return super().score(batch)


@hookimpl
def register_reward_models(register):
    register(SlowHF)
'''

RECIPE = """
title = "kill an hf run"
[prompts.source]
name = "simulated-helpful"
[prompts.sampler]
name = "random"
k = 8
[responses]
per_prompt = 16
[responses.policy]
name = "simulated-policy"
[oracle]
name = "simulated-judge"
[[reward_models]]
label = "tiny"
name = "slow-hf"
model = "{model}"
device = "cpu"
deterministic = true
items_per_call = 8
[[metrics]]
name = "reta"
eta = 0.25
"""
TOTAL = 8 * 16


def _rows(db) -> list[tuple]:
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute(
                "select rm_key, response_id, score from rm_scores order by rm_key, response_id"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.OperationalError:  # not created yet
        return []


def test_kill_9_while_an_hf_rm_scores_then_resume_stores_each_score_once(
    tmp_path, tiny_models, rmaudit
):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "slow_hf.py").write_text(SLOW_HF)
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(RECIPE.format(model=tiny_models["gpt2-rm"]))
    command = [sys.executable, "-m", "rmaudit", "--plugins-dir", str(plugins), "run", str(recipe)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}

    killed = tmp_path / "killed.db"
    process = subprocess.Popen(
        [*command, "--db", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline:
        if 16 <= len(_rows(killed)) < TOTAL - 16:  # part-way through the scores stage
            break
        assert process.poll() is None, "the run finished before it could be killed"
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    partial = len(_rows(killed))
    assert 0 < partial < TOTAL, partial

    # the resumed run, and the uninterrupted one to compare with, need no process of their own
    module = ModuleType("slow_hf")
    exec(compile(SLOW_HF, "slow_hf.py", "exec"), module.__dict__)
    clean = tmp_path / "clean.db"
    with registered_plugin(module):
        resumed = rmaudit("run", str(recipe), "--db", str(killed))
        done = rmaudit("run", str(recipe), "--db", str(clean))
    assert resumed.code == 0, resumed.err
    assert f"{TOTAL - partial} scores: tiny" in resumed.err.replace(",", "")
    assert done.code == 0, done.err

    rows = _rows(killed)
    assert len(rows) == TOTAL
    assert len({(rm, rid) for rm, rid, _ in rows}) == TOTAL  # each (response, RM) once
    assert rows == _rows(clean)  # bit for bit: deterministic mode scores each input alone
